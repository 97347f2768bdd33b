import { fakeTokenCount } from "./fake-script.ts";

/**
 * The Anthropic `context_management` edits, applied by the fake the way the API reports them: tool
 * results cleared past a trigger, thinking of older turns cleared, a `compact_*` edit summarising the
 * conversation. Deterministic, so tests can predict every number.
 */

const DEFAULT_CLEAR_TOOL_USES_TRIGGER = 100_000;
const DEFAULT_CLEAR_TOOL_USES_KEEP = 3;
const DEFAULT_COMPACT_TRIGGER = 150_000;
const CLEARED_TOOL_RESULT_TEXT = "[cleared by context management]";

export type WireBlock = Record<string, unknown> & { type: string };
type WireMessage = { role: string; content: string | WireBlock[] };
export type WireBody = {
  model?: string;
  system?: unknown;
  messages?: WireMessage[];
  tools?: unknown[];
  stream?: boolean;
  context_management?: { edits?: Record<string, unknown>[] };
};

/** The request parts the fake counts: system, messages and tools (never max_tokens or other settings). */
export function countWireTokens(body: unknown): number {
  const wire = (body ?? {}) as WireBody;
  return fakeTokenCount([wire.system ?? "", wire.messages ?? [], wire.tools ?? []]);
}

export interface ContextManagementOutcome {
  /** Tokens the model "saw" after the edits. */
  inputTokens: number;
  appliedEdits: Record<string, unknown>[];
  compaction?: { summary: string; inputTokensBefore: number; pause: boolean };
}

/**
 * Applies `context_management` edits the way the API reports them, deterministically: tool results beyond
 * the kept ones are cleared once the trigger is exceeded, thinking blocks of older turns are cleared, and a
 * `compact_*` edit whose trigger is exceeded produces a compaction block summarising the conversation.
 */
export function applyContextManagement(body: WireBody): ContextManagementOutcome {
  const edits = body.context_management?.edits ?? [];
  let working: WireBody = structuredClone(body);
  const appliedEdits: Record<string, unknown>[] = [];
  let compaction: ContextManagementOutcome["compaction"];
  for (const edit of edits) {
    const type = String(edit.type ?? "");
    const before = countWireTokens(working);
    if (type.startsWith("clear_tool_uses_")) {
      const trigger = numberField(edit.trigger, "value") ?? DEFAULT_CLEAR_TOOL_USES_TRIGGER;
      if (before <= trigger) continue;
      const keep = numberField(edit.keep, "value") ?? DEFAULT_CLEAR_TOOL_USES_KEEP;
      const excluded = new Set(Array.isArray(edit.exclude_tools) ? edit.exclude_tools.map(String) : []);
      const toolNames = new Map<string, string>();
      const results: WireBlock[] = [];
      for (const message of working.messages ?? []) {
        if (typeof message.content === "string") continue;
        for (const block of message.content) {
          if (block.type === "tool_use") toolNames.set(String(block.id), String(block.name));
          if (block.type === "tool_result" && !excluded.has(toolNames.get(String(block.tool_use_id)) ?? "")) {
            results.push(block);
          }
        }
      }
      const cleared = results.slice(0, Math.max(0, results.length - keep));
      for (const block of cleared) block.content = CLEARED_TOOL_RESULT_TEXT;
      if (cleared.length === 0) continue;
      appliedEdits.push({
        type,
        cleared_tool_uses: cleared.length,
        cleared_input_tokens: before - countWireTokens(working),
      });
    } else if (type.startsWith("clear_thinking_")) {
      const keepSetting = edit.keep;
      if (keepSetting === "all" || (isRecord(keepSetting) && keepSetting.type === "all")) continue;
      const keep = numberField(keepSetting, "value") ?? 1;
      const turns = (working.messages ?? []).filter(
        (message) =>
          message.role === "assistant" &&
          Array.isArray(message.content) &&
          message.content.some((block) => block.type === "thinking" || block.type === "redacted_thinking"),
      );
      const clearedTurns = turns.slice(0, Math.max(0, turns.length - keep));
      for (const message of clearedTurns) {
        message.content = (message.content as WireBlock[]).filter(
          (block) => block.type !== "thinking" && block.type !== "redacted_thinking",
        );
      }
      if (clearedTurns.length === 0) continue;
      appliedEdits.push({
        type,
        cleared_thinking_turns: clearedTurns.length,
        cleared_input_tokens: before - countWireTokens(working),
      });
    } else if (type.startsWith("compact_")) {
      const trigger = numberField(edit.trigger, "value") ?? DEFAULT_COMPACT_TRIGGER;
      if (before <= trigger) continue;
      const messages = working.messages ?? [];
      const summary = `Summary of ${messages.length} earlier messages (fake compaction).`;
      const last = messages.at(-1);
      working = {
        ...working,
        messages: [
          { role: "user", content: [{ type: "compaction", content: summary }] },
          ...(last && last.role === "user" ? [last] : []),
        ],
      };
      compaction = { summary, inputTokensBefore: before, pause: edit.pause_after_compaction === true };
    }
  }
  const outcome: ContextManagementOutcome = { inputTokens: countWireTokens(working), appliedEdits };
  if (compaction) outcome.compaction = compaction;
  return outcome;
}

function numberField(value: unknown, key: string): number | undefined {
  if (!isRecord(value)) return undefined;
  const field = value[key];
  return typeof field === "number" ? field : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
