import { contentBlocks, type Message, type RequestMessage } from "@unforget/core";
import { isTextObservation, resultText, userText } from "./conversation.ts";

// What counts as an error code, independently of the records' own detector: exception and error class names
// (`ValueError`, `ModuleNotFoundError`), TypeScript and Rust codes (`TS2345`, `E0308`), linter codes
// (`E999`, `F821`), Node's `ERR_…` codes and the common errno names.
const ERROR_CODE =
  /\b(?:[A-Z][A-Za-z0-9]*(?:Error|Exception)|TS\d{4}|[EF]\d{3,4}|ERR_[A-Z0-9_]+|E(?:NOENT|ACCES|PERM|EXIST|ISDIR|NOTDIR|NOTEMPTY|CONNREFUSED|CONNRESET|ADDRINUSE|TIMEDOUT|PIPE|MFILE|NOSPC|INVAL|AGAIN))\b/g;
// A numbered source line (`123:    raise ValueError(...)`) shows code, not an error that happened.
const SOURCE_LINE = /^\s*(?:\d+(?:\t|→|\s*[:|])|[\w./-]+:\d+[:-])/;

/** The error codes in a tool output, in order of first appearance, each once. */
export function findErrorCodes(text: string): string[] {
  const codes = new Set<string>();
  for (const line of text.split("\n")) {
    if (SOURCE_LINE.test(line)) continue;
    for (const match of line.matchAll(ERROR_CODE)) codes.add(match[0]);
  }
  return [...codes];
}

/** Follows the error codes a session's tool outputs showed, to ask which of them a request still holds. */
export interface ErrorCodeTracker {
  /** Called with every message of the session, in order. */
  observe(message: Message): void;
  /** How many distinct codes were seen, and how many of them appear anywhere in `request`. */
  kept(request: readonly RequestMessage[]): { seen: number; kept: number };
}

export function createErrorCodeTracker(): ErrorCodeTracker {
  const seen = new Set<string>();
  return {
    observe(message) {
      if (message.role !== "user") return;
      if (isTextObservation(message)) for (const code of findErrorCodes(userText(message))) seen.add(code);
      for (const block of message.content) {
        if (block.type === "tool_result")
          for (const code of findErrorCodes(resultText(block))) seen.add(code);
      }
    },
    kept(request) {
      if (seen.size === 0) return { seen: 0, kept: 0 };
      const text = request
        .flatMap((message) =>
          contentBlocks(message.content).map((block) =>
            block.type === "text"
              ? block.text
              : block.type === "tool_result"
                ? resultText(block)
                : JSON.stringify(block),
          ),
        )
        .join("\n");
      let kept = 0;
      for (const code of seen) if (new RegExp(`\\b${code}\\b`).test(text)) kept++;
      return { seen: seen.size, kept };
    },
  };
}
