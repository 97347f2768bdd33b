import type { Message, ToolResultBlock, ToolUseBlock } from "@unforget/core";
import {
  clip,
  describeToolCall,
  isTextObservation,
  isUserAuthored,
  oneLine,
  resultText,
  userText,
} from "./conversation.ts";
import { HEAD_TRUNCATION_MARKER_ID } from "./head-truncation.ts";
import { describeOutcome, findErrorLines, findExitStatus } from "./tool-output-record.ts";

/** What happened to one file, as far as the tool inputs tell. */
export interface FileFacts {
  path: string;
  reads: number;
  edits: number;
  creates: number;
  /** Position of the last call that touched it (for recency order). */
  last: number;
  /** The last edit's new text, when the tool input carried it. */
  lastChange?: string;
}

export interface ErrorFacts {
  call: string;
  error: string;
  position: number;
}

export interface TodoItem {
  content: string;
  status: string;
}

/** Everything the extractive summariser reads out of a conversation's structure. */
export interface ConversationFacts {
  userMessages: string[];
  files: Map<string, FileFacts>;
  errors: ErrorFacts[];
  commands: string[];
  /** The latest todo list (TodoWrite, update_plan, …), when one was written. */
  todos?: TodoItem[];
  /** First sentence of each assistant text, in order. */
  notes: string[];
  /** The last assistant text. */
  lastAssistantText?: string;
  /** The last few calls with their outcomes. */
  lastCalls: string[];
}

const READ_TOOLS =
  /^(read|readfile|view|cat|open|notebookread|grep|glob|ls|listfiles|listdir|findfile|searchfile)$/;
const EDIT_TOOLS = /^(edit|multiedit|editfile|strreplace|notebookedit|applypatch|insert)$/;
const WRITE_TOOLS = /^(write|writefile|createfile|create)$/;
const EDITOR_TOOLS = /^(strreplaceeditor|strreplacebasededittool|texteditor)$/;
const SHELL_TOOLS = /^(bash|shell|executebash|executecommand|runterminalcmd|execcommand|localshell)$/;
const TODO_TOOLS = /^(todowrite|updateplan|todo|writetodos)$/;
const PATH_LIKE =
  /(?:^|[\s"'`(=])((?:\.{0,2}\/)?[\w@.-]+(?:\/[\w@.-]+)*\.[A-Za-z][\w]{0,5})(?=$|[\s"'`):,;])/g;

const normalizeTool = (name: string) => name.toLowerCase().replace(/[-_]/g, "");

/** Reads requests, files, errors, commands, todos and the current work out of messages, in one pass. */
export function collectConversationFacts(messages: readonly Message[]): ConversationFacts {
  const facts: ConversationFacts = {
    userMessages: [],
    files: new Map(),
    errors: [],
    commands: [],
    notes: [],
    lastCalls: [],
  };
  const pending = new Map<string, ToolUseBlock>();
  let position = 0;
  let lastAction: string | undefined;
  for (const message of messages) {
    position++;
    if (isUserAuthored(message)) {
      facts.userMessages.push(userText(message));
      continue;
    }
    // The marker of a head truncation carries the user's messages from the part that was left out.
    const quotes = message.id === HEAD_TRUNCATION_MARKER_ID ? message.metadata?.quotes : undefined;
    if (Array.isArray(quotes)) {
      for (const quote of quotes) if (typeof quote === "string") facts.userMessages.push(quote);
      continue;
    }
    if (message.role === "assistant") {
      const text = message.content
        .filter((block) => block.type === "text")
        .map((block) => (block.type === "text" ? block.text : ""))
        .join("\n")
        .trim();
      if (text) {
        facts.lastAssistantText = text;
        const sentence = firstSentence(text);
        if (sentence) facts.notes.push(sentence);
      }
      const action = typeof message.metadata?.action === "string" ? message.metadata.action : undefined;
      lastAction = action;
      if (action) noteTextAction(facts, action, position);
      for (const block of message.content) {
        if (block.type !== "tool_use") continue;
        pending.set(block.id, block);
        noteToolUse(facts, block, position);
      }
      continue;
    }
    if (isTextObservation(message)) {
      const text = userText(message);
      const call = lastAction ? clip(oneLine(lastAction), 80) : "(action)";
      const verb = lastAction?.trim().split(/\s+/)[0] ?? "";
      recordOutcome(
        facts,
        call,
        text,
        false,
        position,
        !["open", "goto", "scroll_up", "scroll_down", "cat"].includes(verb),
      );
      continue;
    }
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      const use = pending.get(block.tool_use_id);
      const call = use ? describeToolCall(use) : "(tool)";
      // A file read shows code, not failures: only an explicit error result counts there.
      const scan = !use || !READ_TOOLS.test(normalizeTool(use.name));
      recordOutcome(facts, call, resultText(block), isErrorResult(block), position, scan);
    }
  }
  return facts;
}

function isErrorResult(block: ToolResultBlock): boolean {
  return block.is_error === true;
}

function recordOutcome(
  facts: ConversationFacts,
  call: string,
  text: string,
  isError: boolean,
  position: number,
  scanForErrors = true,
): void {
  const outcome = describeOutcome(text, isError);
  facts.lastCalls.push(`${call} → ${outcome}`);
  if (facts.lastCalls.length > 5) facts.lastCalls.shift();
  // A file read shows code, not failures: only an explicit error result counts there.
  if (!isError && !scanForErrors) return;
  const status = findExitStatus(text);
  const lines = findErrorLines(text);
  if (!isError && lines.length === 0 && (status === undefined || status === 0)) return;
  const error = [
    status !== undefined && status !== 0 ? `exit ${status}` : undefined,
    ...(lines.length > 0 ? lines : [firstLine(text)]),
  ]
    .filter((part): part is string => part !== undefined && part.trim().length > 0)
    .join(" | ");
  if (error.length > 0) facts.errors.push({ call, error: clip(oneLine(error), 300), position });
}

function noteToolUse(facts: ConversationFacts, use: ToolUseBlock, position: number): void {
  const name = normalizeTool(use.name);
  const input = (use.input && typeof use.input === "object" ? use.input : {}) as Record<string, unknown>;
  const path = stringField(input, ["file_path", "path", "notebook_path", "filename", "target_file"]);
  if (TODO_TOOLS.test(name)) {
    const list = Array.isArray(input.todos)
      ? input.todos
      : Array.isArray(input.plan)
        ? input.plan
        : undefined;
    if (list) {
      facts.todos = list.flatMap((item) => {
        if (!item || typeof item !== "object") return [];
        const record = item as Record<string, unknown>;
        const content = stringField(record, ["content", "step", "task", "title"]);
        return content ? [{ content, status: stringField(record, ["status", "state"]) ?? "pending" }] : [];
      });
    }
    return;
  }
  if (SHELL_TOOLS.test(name)) {
    const command =
      stringField(input, ["command", "cmd"]) ??
      (Array.isArray(input.command) ? input.command.join(" ") : undefined);
    if (command) noteCommand(facts, command, position);
    return;
  }
  if (EDITOR_TOOLS.test(name) && path) {
    const command = stringField(input, ["command"]);
    if (command === "view") touch(facts, path, position, "read");
    else if (command === "create") touch(facts, path, position, "create", stringField(input, ["file_text"]));
    else touch(facts, path, position, "edit", stringField(input, ["new_str", "insert_text"]));
    return;
  }
  if (!path) {
    if (name === "applypatch") {
      const patch = stringField(input, ["input", "patch"]) ?? "";
      for (const match of patch.matchAll(/\*\*\* (?:Update|Add) File: (.+)/g))
        touch(facts, match[1]!.trim(), position, "edit");
    }
    return;
  }
  if (READ_TOOLS.test(name)) touch(facts, path, position, "read");
  else if (WRITE_TOOLS.test(name))
    touch(facts, path, position, "create", stringField(input, ["content", "file_text"]));
  else if (EDIT_TOOLS.test(name))
    touch(facts, path, position, "edit", stringField(input, ["new_string", "new_str", "content"]));
}

/** SWE-agent style actions written as text: `open "x.py"`, `create x.py`, `edit 3:5`, or a shell command. */
function noteTextAction(facts: ConversationFacts, action: string, position: number): void {
  const trimmed = action.trim();
  const [verb = "", ...rest] = trimmed.split(/\s+/);
  const argument = rest.join(" ").replace(/^["']|["']$/g, "");
  if (verb === "open" || verb === "goto") {
    if (argument) touch(facts, argument.split(/\s+/)[0]!.replace(/["']/g, ""), position, "read");
  } else if (verb === "create") {
    if (argument) touch(facts, argument, position, "create");
  } else if (verb !== "edit" && verb !== "submit" && verb !== "scroll_up" && verb !== "scroll_down") {
    noteCommand(facts, trimmed, position);
  }
}

function noteCommand(facts: ConversationFacts, command: string, position: number): void {
  const line = clip(oneLine(command), 160);
  if (!facts.commands.includes(line)) facts.commands.push(line);
  for (const match of command.matchAll(PATH_LIKE)) {
    const path = match[1]!;
    if (/^\d+(\.\d+)+$/.test(path) || path.startsWith("-")) continue;
    const existing = facts.files.get(path);
    if (existing) existing.last = position;
  }
}

function touch(
  facts: ConversationFacts,
  path: string,
  position: number,
  kind: "read" | "edit" | "create",
  change?: string,
): void {
  const file = facts.files.get(path) ?? { path, reads: 0, edits: 0, creates: 0, last: position };
  if (kind === "read") file.reads++;
  else if (kind === "edit") file.edits++;
  else file.creates++;
  file.last = position;
  if (change !== undefined && kind !== "read") file.lastChange = change;
  facts.files.set(path, file);
}

function stringField(record: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = record[key];
    if (typeof value === "string" && value.length > 0) return value;
  }
  return undefined;
}

function firstLine(text: string): string {
  return text.split("\n").find((line) => line.trim().length > 0) ?? "";
}

function firstSentence(text: string): string {
  const line = firstLine(text).trim();
  const end = line.search(/[.!?](\s|$)/);
  return clip(end > 0 ? line.slice(0, end + 1) : line, 200);
}
