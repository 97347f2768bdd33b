// Loads the shared evaluation corpus for the fitting script and the benchmark. The corpus is read in place
// (UNFORGET_CORPUS_DIR or ../shared/corpus next to the repository), never copied into the repository.
// Session files are converted to the core message model here, directly from their raw JSON, so the
// benchmark does not depend on the importers being finished.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type ContentBlock,
  createMessage,
  createUsage,
  isRecord,
  type Message,
  normalizeContent,
  type Usage,
} from "@unforget/core";

const here = dirname(fileURLToPath(import.meta.url));

export function corpusDirectory(): string {
  return process.env.UNFORGET_CORPUS_DIR ?? resolve(here, "../../../../shared/corpus");
}

function listFiles(directory: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(directory).sort()) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) files.push(...listFiles(path));
    else files.push(path);
  }
  return files;
}

export interface TextSample {
  /** Corpus-relative file the sample came from. */
  source: string;
  /** Kind of text: the corpus sub-folder (prose-en, code, cjk, …) or "session". */
  kind: string;
  text: string;
}

/** The text files of `corpus/text`, whole (licence and notice files skipped). */
export function loadTextFiles(): TextSample[] {
  const root = join(corpusDirectory(), "text");
  return listFiles(root)
    .filter((path) => !/\/(LICENSE|NOTICE|COPYRIGHT)[^/]*$/.test(path))
    .map((path) => ({
      source: relative(corpusDirectory(), path),
      kind: relative(root, path).split("/")[0] ?? "text",
      text: readFileSync(path, "utf8"),
    }));
}

/** Splits a text at line boundaries into chunks of roughly `targetChars` characters (deterministic). */
export function chunkText(text: string, targetChars: number): string[] {
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + targetChars);
    if (end < text.length) {
      const newline = text.indexOf("\n", end);
      end = newline === -1 || newline - end > targetChars ? end : newline + 1;
    }
    chunks.push(text.slice(start, end));
    start = end;
  }
  return chunks;
}

export interface CorpusSession {
  source: string;
  format: "claude-code" | "sweagent" | "mini-swe-agent" | "openhands";
  messages: Message[];
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (isRecord(part) && typeof part.text === "string" ? part.text : ""))
      .filter((part) => part.length > 0)
      .join("\n");
  }
  return content === undefined || content === null ? "" : JSON.stringify(content);
}

function parseArguments(raw: unknown): unknown {
  if (typeof raw !== "string") return raw ?? {};
  try {
    return JSON.parse(raw);
  } catch {
    return { raw };
  }
}

/** OpenAI-chat messages (SWE-agent history, mini-swe-agent) to core messages. */
function fromOpenAiChat(history: unknown[]): Message[] {
  const messages: Message[] = [];
  let toolIndex = 0;
  for (const raw of history) {
    if (!isRecord(raw)) continue;
    const text = textOf(raw.content);
    if (raw.role === "assistant") {
      const content: ContentBlock[] = [];
      if (text.length > 0) content.push({ type: "text", text });
      const calls = Array.isArray(raw.tool_calls) ? raw.tool_calls : [];
      for (const call of calls) {
        if (!isRecord(call) || !isRecord(call.function)) continue;
        content.push({
          type: "tool_use",
          id: typeof call.id === "string" ? call.id : `call_${toolIndex++}`,
          name: String(call.function.name ?? "tool"),
          input: parseArguments(call.function.arguments),
        });
      }
      if (content.length > 0) messages.push(createMessage("assistant", content));
    } else if (raw.role === "tool") {
      const ids = Array.isArray(raw.tool_call_ids) ? raw.tool_call_ids : [raw.tool_call_id];
      messages.push(
        createMessage("user", [
          { type: "tool_result", tool_use_id: String(ids[0] ?? "unknown"), content: text },
        ]),
      );
    } else if (text.length > 0) {
      messages.push(createMessage("user", text));
    }
  }
  return messages;
}

function readUsage(raw: unknown): Usage | undefined {
  if (!isRecord(raw)) return undefined;
  const number = (value: unknown) => (typeof value === "number" ? value : 0);
  return createUsage({
    inputTokens: number(raw.input_tokens),
    outputTokens: number(raw.output_tokens),
    cacheCreationInputTokens: number(raw.cache_creation_input_tokens),
    cacheReadInputTokens: number(raw.cache_read_input_tokens),
  });
}

function fromClaudeCode(lines: string[]): Message[] {
  const messages: Message[] = [];
  for (const line of lines) {
    if (line.trim().length === 0) continue;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (
      !isRecord(entry) ||
      (entry.type !== "user" && entry.type !== "assistant") ||
      !isRecord(entry.message)
    ) {
      continue;
    }
    const content = normalizeContent(entry.message.content);
    if (content.length === 0) continue;
    const usage = readUsage(entry.message.usage);
    messages.push(
      createMessage(entry.type, content, {
        ...(typeof entry.message.id === "string" ? { responseId: entry.message.id } : {}),
        ...(usage && entry.type === "assistant" ? { usage } : {}),
      }),
    );
  }
  return messages;
}

function fromOpenHands(events: unknown[]): Message[] {
  const messages: Message[] = [];
  for (const event of events) {
    if (!isRecord(event)) continue;
    const role = event.source === "agent" ? "assistant" : "user";
    const parts: string[] = [];
    if (typeof event.message === "string" && event.message.length > 0) parts.push(event.message);
    if (typeof event.content === "string" && event.content.length > 0) parts.push(event.content);
    const content: ContentBlock[] = parts.map((text) => ({ type: "text", text }));
    if (typeof event.action === "string" && isRecord(event.args) && event.action !== "message") {
      content.push({
        type: "tool_use",
        id: `event_${String(event.id)}`,
        name: event.action,
        input: event.args,
      });
    }
    if (content.length > 0) messages.push(createMessage(role, content));
  }
  return messages;
}

/** Every session in the corpus, as core messages. */
export function loadSessions(): CorpusSession[] {
  const root = corpusDirectory();
  const sessions: CorpusSession[] = [];
  for (const path of listFiles(join(root, "sweagent")).filter((file) => file.endsWith(".traj"))) {
    const data: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (isRecord(data) && Array.isArray(data.history)) {
      sessions.push({
        source: relative(root, path),
        format: "sweagent",
        messages: fromOpenAiChat(data.history),
      });
    }
  }
  for (const path of listFiles(join(root, "mini-swe-agent")).filter((file) => file.endsWith(".json"))) {
    const data: unknown = JSON.parse(readFileSync(path, "utf8"));
    const history = Array.isArray(data)
      ? data
      : isRecord(data) && Array.isArray(data.messages)
        ? data.messages
        : [];
    sessions.push({
      source: relative(root, path),
      format: "mini-swe-agent",
      messages: fromOpenAiChat(history),
    });
  }
  for (const path of listFiles(join(root, "claude-code")).filter((file) => file.endsWith(".jsonl"))) {
    const lines = readFileSync(path, "utf8").split("\n");
    sessions.push({ source: relative(root, path), format: "claude-code", messages: fromClaudeCode(lines) });
  }
  for (const path of listFiles(join(root, "openhands"))) {
    if (path.endsWith(".json")) {
      const data: unknown = JSON.parse(readFileSync(path, "utf8"));
      if (Array.isArray(data)) {
        sessions.push({ source: relative(root, path), format: "openhands", messages: fromOpenHands(data) });
      }
    } else if (path.endsWith(".jsonl")) {
      for (const line of readFileSync(path, "utf8").split("\n")) {
        if (line.trim().length === 0) continue;
        const data: unknown = JSON.parse(line);
        if (isRecord(data) && Array.isArray(data.history)) {
          sessions.push({
            source: relative(root, path),
            format: "openhands",
            messages: fromOpenHands(data.history),
          });
        }
      }
    }
  }
  return sessions.filter((session) => session.messages.length > 0);
}
