import type { Message, ToolResultBlock, ToolUseBlock } from "@unforget/core";
import { SUMMARY_ERROR_LINE_CHARS } from "../defaults.ts";
import { foldedCallRecords } from "../layers/collapse-context.ts";
import {
  describeOutcome,
  findErrorLines,
  findExitStatus,
  isErrorLine,
} from "../tool-outputs/tool-output-record.ts";
import { readCarriedUserMessages, shown } from "./carried-user-messages.ts";
import {
  clip,
  describeToolCall,
  isTextObservation,
  isUserAuthored,
  oneLine,
  resultText,
  userText,
} from "./conversation.ts";
import { findErrorCodes } from "./error-codes.ts";

/** What happened to one file, as far as the tool inputs and the user's words tell. */
export interface FileFacts {
  path: string;
  reads: number;
  edits: number;
  creates: number;
  /** Edits or writes of it that were denied (by the user, a rule or a hook). */
  denied: number;
  /** The user named it in a message. */
  namedByUser: boolean;
  /** Position of the last call that touched it (for recency order). */
  last: number;
  /** The last edit's new text, when the tool input carried it. */
  lastChange?: string;
}

/** A call that failed: its call, exit status and first error line (kept whole, up to a generous cap). */
export interface ErrorFacts {
  call: string;
  status?: number;
  /** The first line that says what went wrong (else the output's last line), whole up to a generous cap. */
  error: string;
  /** The next line that says what went wrong, when there is one (a test runner's assertion after `FAIL file`). */
  next?: string;
  position: number;
  /** Times this call failed with this error. */
  count: number;
  /** A later run of the same call succeeded. */
  fixed: boolean;
}

/** A call that was not run because it was denied. */
export interface DeniedFacts {
  call: string;
  /** The first line of the denial. */
  reason: string;
  position: number;
}

export interface TodoItem {
  content: string;
  status: string;
}

/** The last run of a command (or any call that can fail): whether it failed, and how. */
export interface CallOutcome {
  call: string;
  failed: boolean;
  status?: number;
  runs: number;
}

/** Everything the extractive summariser reads out of a conversation's structure: facts, not the model's sentences. */
export interface ConversationFacts {
  /** The user's messages in order (those carried by an earlier summary in the range included). */
  userMessages: string[];
  files: Map<string, FileFacts>;
  errors: ErrorFacts[];
  denied: DeniedFacts[];
  commands: string[];
  /** The last outcome of each shell command, by the call's description, in order of their last run. */
  outcomes: Map<string, CallOutcome>;
  /** The latest todo list (TodoWrite, update_plan, …), when one was written. */
  todos?: TodoItem[];
  /** The last assistant text, when no call of its turn failed (without being fixed) or was denied. */
  lastAssistantText?: string;
  /** The failed and denied calls of the last assistant text's turn: its claims are not quoted. */
  lastTextTurnProblems: string[];
  /** The last few calls with their outcomes. */
  lastCalls: string[];
  /** Position (1-based) of the last message the user wrote; 0 when there is none. */
  lastUserPosition: number;
}

const READ_TOOLS =
  /^(read|readfile|view|cat|open|notebookread|grep|glob|ls|listfiles|listdir|findfile|searchfile)$/;
const EDIT_TOOLS = /^(edit|multiedit|editfile|strreplace|notebookedit|applypatch|insert)$/;
const WRITE_TOOLS = /^(write|writefile|createfile|create)$/;
const EDITOR_TOOLS = /^(strreplaceeditor|strreplacebasededittool|texteditor)$/;
const SHELL_TOOLS = /^(bash|shell|executebash|executecommand|runterminalcmd|execcommand|localshell)$/;
const TODO_TOOLS = /^(todowrite|updateplan|todo|writetodos)$/;
const PATH_LIKE =
  /(?:^|[\s"'`(=])((?:\.{0,2}\/)?[\w@.-]+(?:\/[\w@.-]+)*\.[A-Za-z][\w]{0,5})(?=$|[\s"'`):,;!?]|\.(?:\s|$))/g;
// How harnesses word a call that was not run: this package's permission gate and hooks, Claude Code's
// rejection, and plain "denied" / "rejected" answers.
const DENIAL =
  /^(?:Permission denied\b|The user denied\b|The user doesn'?t want to proceed\b|User (?:denied|rejected)\b|Tool (?:call|use) (?:was )?(?:denied|rejected)\b|Permission to use \S+ (?:has been|was) denied|.*\bdenied this call\b|.*\btool use was rejected\b)/i;

const normalizeTool = (name: string) => name.toLowerCase().replace(/[-_]/g, "");

interface Turn {
  /** Calls that failed in this turn and are not fixed yet, by call. */
  failing: Map<string, string>;
  denied: string[];
}

/** Reads requests, files, errors, denials, commands, todos and the current work out of messages, in one pass. */
export function collectConversationFacts(messages: readonly Message[]): ConversationFacts {
  const facts: ConversationFacts = {
    userMessages: [],
    files: new Map(),
    errors: [],
    denied: [],
    commands: [],
    outcomes: new Map(),
    lastTextTurnProblems: [],
    lastCalls: [],
    lastUserPosition: 0,
  };
  const pending = new Map<string, ToolUseBlock>();
  let turn: Turn = { failing: new Map(), denied: [] };
  let textTurn: Turn | undefined;
  let lastText: string | undefined;
  let position = 0;
  let lastAction: string | undefined;
  for (const message of messages) {
    position++;
    if (isUserAuthored(message)) {
      const text = userText(message);
      facts.userMessages.push(text);
      facts.lastUserPosition = position;
      for (const path of pathsIn(text)) touch(facts, path, position, "named");
      turn = { failing: new Map(), denied: [] };
      continue;
    }
    // A summary or placeholder in the range carries the user's messages of the part it stands for; a fold of
    // old tool runs carries their records (`call → outcome`), failures included.
    if (message.role === "user" && message.isMeta) {
      const text = userText(message);
      const carried = readCarriedUserMessages(text);
      if (carried) {
        for (const quote of carried) if (!("folded" in quote)) facts.userMessages.push(shown(quote));
        continue;
      }
      if (message.metadata?.reason === "collapse") {
        noteRecords(facts, turn, text, position);
        continue;
      }
    }
    if (message.role === "assistant") {
      const text = message.content
        .filter((block) => block.type === "text")
        .map((block) => (block.type === "text" ? block.text : ""))
        .join("\n")
        .trim();
      if (text) {
        lastText = text;
        textTurn = turn;
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
      const scan = !["open", "goto", "scroll_up", "scroll_down", "cat"].includes(verb);
      recordOutcome(facts, turn, { call, text, isError: false, position, scan, command: scan });
      continue;
    }
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      const use = pending.get(block.tool_use_id);
      const call = use ? describeToolCall(use) : "(tool)";
      const name = use ? normalizeTool(use.name) : "";
      const text = resultText(block);
      if (isDenial(block, text)) {
        noteDenial(facts, turn, use, call, text, position);
        continue;
      }
      // A file read shows code, not failures: only an explicit error result counts there.
      const scan = !use || !READ_TOOLS.test(name);
      recordOutcome(facts, turn, {
        call,
        text,
        isError: block.is_error === true,
        position,
        scan,
        command: SHELL_TOOLS.test(name),
      });
    }
  }
  if (lastText !== undefined && textTurn) {
    const problems = [...textTurn.failing.values(), ...textTurn.denied];
    if (problems.length === 0) facts.lastAssistantText = lastText;
    else facts.lastTextTurnProblems = problems;
  }
  return facts;
}

function isDenial(block: ToolResultBlock, text: string): boolean {
  return block.is_error === true && DENIAL.test(firstLine(text).trim());
}

function noteDenial(
  facts: ConversationFacts,
  turn: Turn,
  use: ToolUseBlock | undefined,
  call: string,
  text: string,
  position: number,
): void {
  const reason = clip(oneLine(firstLine(text)), SUMMARY_ERROR_LINE_CHARS);
  facts.denied.push({ call, reason, position });
  turn.denied.push(`${call} was denied`);
  facts.lastCalls.push(`${call} → denied: ${clip(reason, 100)}`);
  if (facts.lastCalls.length > 5) facts.lastCalls.shift();
  // The call named a file it would have changed: that file matters, though it is unchanged.
  if (!use) return;
  const input = (use.input && typeof use.input === "object" ? use.input : {}) as Record<string, unknown>;
  const path = stringField(input, ["file_path", "path", "notebook_path", "filename", "target_file"]);
  const name = normalizeTool(use.name);
  if (path && (EDIT_TOOLS.test(name) || WRITE_TOOLS.test(name) || EDITOR_TOOLS.test(name))) {
    const file = facts.files.get(path);
    // noteToolUse counted the attempt as a change: it was not one.
    if (file) {
      if (WRITE_TOOLS.test(name) && file.creates > 0) file.creates--;
      else if (file.edits > 0) file.edits--;
      file.denied++;
    }
  }
}

function recordOutcome(
  facts: ConversationFacts,
  turn: Turn,
  outcome: {
    call: string;
    text: string;
    isError: boolean;
    position: number;
    scan: boolean;
    command: boolean;
  },
): void {
  const { call, text, isError, position } = outcome;
  facts.lastCalls.push(`${call} → ${describeOutcome(text, isError)}`);
  if (facts.lastCalls.length > 5) facts.lastCalls.shift();
  const status = findExitStatus(text);
  const [errorLine, nextLine] = isError || outcome.scan ? errorLines(text) : [];
  // An explicit exit status decides; without one, an error line does.
  const failed = isError || (outcome.scan && (status !== undefined ? status !== 0 : errorLine !== undefined));
  if (outcome.command) {
    const earlier = facts.outcomes.get(call);
    facts.outcomes.delete(call);
    facts.outcomes.set(call, {
      call,
      failed,
      ...(status !== undefined ? { status } : {}),
      runs: (earlier?.runs ?? 0) + 1,
    });
  }
  if (!failed) {
    // A later success of the same call fixes its earlier failures.
    for (const error of facts.errors) if (error.call === call) error.fixed = true;
    turn.failing.delete(call);
    return;
  }
  const error = errorLine ?? lastLine(text) ?? "(no output)";
  turn.failing.set(call, `${call} failed${status !== undefined && status !== 0 ? ` (exit ${status})` : ""}`);
  const same = facts.errors.find((known) => known.call === call && known.error === error && !known.fixed);
  if (same) {
    same.count++;
    same.position = position;
    return;
  }
  facts.errors.push({
    call,
    ...(status !== undefined && status !== 0 ? { status } : {}),
    error,
    ...(nextLine !== undefined ? { next: nextLine } : {}),
    position,
    count: 1,
    fixed: false,
  });
}

/** The failures the records of folded tool runs show: each is a failed call, with its outcome as its error line. */
function noteRecords(facts: ConversationFacts, turn: Turn, text: string, position: number): void {
  for (const { call, outcome } of foldedCallRecords(text) ?? []) {
    const status = /^exit (-?\d+)/.exec(outcome)?.[1];
    const failed =
      (status !== undefined && status !== "0") ||
      findErrorLines(outcome, 1).length > 0 ||
      findErrorCodes(outcome).length > 0;
    if (!failed) continue;
    const error = clip(outcome.replace(/^exit -?\d+: /, ""), SUMMARY_ERROR_LINE_CHARS);
    turn.failing.set(call, `${call} failed`);
    if (facts.errors.some((known) => known.call === call && known.error === error)) continue;
    facts.errors.push({
      call,
      ...(status !== undefined && status !== "0" ? { status: Number(status) } : {}),
      error,
      position,
      count: 1,
      fixed: false,
    });
  }
}

/**
 * The first two lines of an output that say what went wrong, each whole (up to a generous cap): a test
 * runner's `FAIL file` is followed by the assertion that failed.
 */
function errorLines(text: string): string[] {
  const found: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed.length > 0 && isErrorLine(trimmed)) {
      const whole = clip(oneLine(trimmed), SUMMARY_ERROR_LINE_CHARS);
      if (!found.includes(whole)) found.push(whole);
      if (found.length === 2) break;
    }
  }
  return found;
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
  for (const path of pathsIn(command)) {
    const existing = facts.files.get(path);
    if (existing) existing.last = position;
  }
}

/** The file paths a text names (`src/calc.js`, `./README.md`), versions and options left out. */
function pathsIn(text: string): string[] {
  const paths: string[] = [];
  for (const match of text.matchAll(PATH_LIKE)) {
    const path = match[1]!;
    if (/^\d+(\.\d+)+$/.test(path) || path.startsWith("-") || /^[\w-]+\.(?:com|org|io|dev|net)$/.test(path))
      continue;
    if (!paths.includes(path)) paths.push(path);
  }
  return paths;
}

function touch(
  facts: ConversationFacts,
  path: string,
  position: number,
  kind: "read" | "edit" | "create" | "named",
  change?: string,
): void {
  const file = facts.files.get(path) ?? {
    path,
    reads: 0,
    edits: 0,
    creates: 0,
    denied: 0,
    namedByUser: false,
    last: position,
  };
  if (kind === "read") file.reads++;
  else if (kind === "edit") file.edits++;
  else if (kind === "create") file.creates++;
  else file.namedByUser = true;
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

/** The last line of an output that is not just its exit status ("Exit code 1."). */
function lastLine(text: string): string | undefined {
  const lines = text
    .split("\n")
    .filter((line) => line.trim().length > 0 && !/^\W*exit(?:ed with)? (?:code|status)\b/i.test(line.trim()));
  const line = lines[lines.length - 1];
  return line === undefined ? undefined : clip(oneLine(line), SUMMARY_ERROR_LINE_CHARS);
}
