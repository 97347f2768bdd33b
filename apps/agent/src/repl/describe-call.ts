import type { ContextEvent } from "@unforget/compact";
import type { PermissionUpdate } from "@unforget/session";
import { describeSummaryWriter } from "../agent/summary-writer.ts";
import { formatTokens } from "./repl-state.ts";

/** The input fields that say what a call does, most telling first. */
const SUBJECT_FIELDS = ["command", "file_path", "path", "pattern", "url", "query", "description", "prompt"];

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** `Bash(npm test)`, `Read(src/index.ts)`, `mcp__github__search({"q":"x"})`. */
export function describeCall(name: string, input: Record<string, unknown>, max = 80): string {
  const field = SUBJECT_FIELDS.find((key) => typeof input[key] === "string" && input[key] !== "");
  const subject = field ? String(input[field]) : Object.keys(input).length > 0 ? JSON.stringify(input) : "";
  return subject === "" ? name : `${name}(${oneLine(subject, max)})`;
}

/** The first lines of a result and how many more there are. */
export function foldOutput(output: string, lines = 3): { shown: string; more: number } {
  const all = output.replace(/\s+$/, "").split("\n");
  return { shown: all.slice(0, lines).join("\n"), more: Math.max(0, all.length - lines) };
}

/** What an "always allow" answer adds, in words, or undefined when there is nothing to offer. */
export function describeSuggestions(suggestions: readonly PermissionUpdate[]): string | undefined {
  const parts = suggestions.map((update) => {
    if (update.type === "addRules") return update.rules.join(", ");
    if (update.type === "setMode") return `${update.mode} mode`;
    return `the folder ${update.directories.join(", ")}`;
  });
  return parts.length > 0 ? parts.join("; ") : undefined;
}

/** One line about what the context manager did, for the screen; undefined for what the user need not see. */
export function describeContextEvent(event: ContextEvent): string | undefined {
  switch (event.type) {
    case "layer":
      return `Compacted: ${event.layer} freed ${formatTokens(event.tokensFreed)} tokens (${formatTokens(event.tokensBefore)} → ${formatTokens(event.tokensAfter)})${event.trigger === "manual" ? ", as asked" : ""}${describeSummaryWriter(event)}`;
    case "vetoed":
      return `Compaction (${event.layer}) vetoed by ${event.by}: ${event.reason}`;
    case "layer-failed":
      return `Compaction layer ${event.layer} failed (${event.error}); the next layer takes over`;
    case "breaker-open":
      return `Compaction layer ${event.layer} is paused after ${event.consecutiveFailures} failures in a row; it is tried again in ${event.retryInCalls} model call${event.retryInCalls === 1 ? "" : "s"}`;
    case "pins-unhonoured":
      return `Pinned ${event.messageIds.join(", ")} no longer fit the pins' cap (${formatTokens(event.capTokens)} tokens, the window is smaller now): they are compacted like any message until /unpin makes room`;
    case "pin-refused":
      return `A plugin's pin of ${event.id} was refused: ${event.reason}`;
    case "background-applied":
      return `A summary written in the background replaced ${event.messagesSummarized} messages`;
    default:
      return undefined;
  }
}
