import type { Tool } from "@unforget/core";
import type { ContextManager } from "./context-manager.ts";
import type { PinsStatus } from "./pins.ts";

/**
 * The model-callable compact tool (core's `Tool` contract): the model asks for a compaction, optionally saying
 * what the summary must keep; the manager compacts before the next model call. It changes nothing outside
 * the session, so it is read-only and may run beside the turn's other calls.
 */
export function createCompactTool(manager: Pick<ContextManager, "requestCompaction">): Tool {
  return {
    name: "compact",
    description:
      "Summarise the conversation so far to free context. Use it at a natural break when the context is getting full. Optionally say what the summary must keep.",
    inputSchema: {
      type: "object",
      properties: {
        instructions: { type: "string", description: "What the summary must keep (optional)." },
      },
      additionalProperties: false,
    },
    readOnly: true,
    concurrencySafe: true,
    async execute(input) {
      const instructions = input?.instructions;
      if (instructions !== undefined && typeof instructions !== "string") {
        return { content: "The `instructions` of compact must be a string (or left out).", isError: true };
      }
      manager.requestCompaction(instructions);
      return {
        content: "Compaction scheduled: the conversation will be summarised before the next model call.",
        isError: false,
      };
    },
  };
}

/**
 * The model-callable snip tool (core's `Tool` contract): the model drops the middle of the conversation,
 * keeping the most recent messages; the user's own messages from the dropped part are carried into the
 * placeholder, and the transcript keeps everything.
 */
export function createSnipTool(manager: Pick<ContextManager, "requestSnip">): Tool {
  return {
    name: "snip",
    description:
      "Drop the middle of the conversation (old tool output you no longer need), keeping the opening and the most recent messages. The full transcript stays on disk.",
    inputSchema: {
      type: "object",
      properties: {
        keep_recent_messages: {
          type: "integer",
          minimum: 2,
          description: "How many of the most recent messages to keep.",
        },
      },
      required: ["keep_recent_messages"],
      additionalProperties: false,
    },
    readOnly: true,
    concurrencySafe: true,
    async execute(input) {
      const keep = input?.keep_recent_messages;
      if (typeof keep !== "number" || !Number.isInteger(keep) || keep < 2) {
        return { content: "snip needs `keep_recent_messages`, an integer of at least 2.", isError: true };
      }
      manager.requestSnip(keep);
      return {
        content: `Snip scheduled: all but the opening and the last ${keep} messages will be dropped from the context before the next model call.`,
        isError: false,
      };
    },
  };
}

/** Ids listed per kind by `context_status`: the newest, so its output stays bounded however long the session. */
const STATUS_IDS = 20;

/**
 * The model-callable context_status tool (core's `Tool` contract): the context's size, the window, where
 * compaction starts and in about how many turns, the compactions so far, and what was cleared or summarised with
 * the ids a history tool reads them back by (a cleared result's tool_use id, a summary's id). It only reads.
 */
export function createContextStatusTool(
  manager: Pick<ContextManager, "status" | "entries"> & Partial<Pick<ContextManager, "pins">>,
): Tool {
  return {
    name: "context_status",
    description:
      "Report the context budget: tokens in the context, the window, where compaction starts and in about how many turns, compactions so far, and what was cleared or summarised (with ids to read back with history_read).",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    readOnly: true,
    concurrencySafe: true,
    resultRetention: "reproducible",
    async execute() {
      return { content: describeContextStatus(manager), isError: false };
    },
  };
}

/** What context_status reads: the manager's status and entries, and its pins when it has them. */
type StatusSource = Pick<ContextManager, "status" | "entries"> & Partial<Pick<ContextManager, "pins">>;

function describeContextStatus(manager: StatusSource): string {
  const status = manager.status();
  const count = (value: number) => value.toLocaleString("en-US");
  const soon =
    status.turnsUntilCompaction === undefined
      ? `when it comes is not known yet (${status.growthUnknown ?? "the rate of growth is not known"})`
      : `compaction in about ${count(status.turnsUntilCompaction)} turns at the recent rate`;
  const cleared: string[] = [];
  const removed = new Set<string>();
  const summaries: string[] = [];
  for (const entry of manager.entries) {
    if (entry.type === "summary" && entry.kind === "compact") summaries.push(entry.id);
    if (entry.type !== "layer_decision") continue;
    for (const edit of entry.edits) {
      if (edit.kind === "replace_tool_result" && edit.toolUseIds?.[0] !== undefined)
        cleared.push(edit.toolUseIds[0]);
      if (edit.kind === "replace_messages") for (const id of edit.messageIds ?? []) removed.add(id);
    }
  }
  const distinct = [...new Set(cleared)];
  const newest = (ids: readonly string[]) =>
    ids.length === 0
      ? ""
      : `; ${ids.length > STATUS_IDS ? "newest " : ""}ids: ${ids.slice(-STATUS_IDS).join(", ")}`;
  return [
    `Context: ${count(status.tokens)} tokens of a ${count(status.contextWindow)}-token window (${Math.round(status.percentUsed)}% of the usable ${count(status.effectiveWindow)}).`,
    `Compaction starts at ${count(status.threshold)} tokens: ${soon}. Requests stop at ${count(status.blockingLimit)}.`,
    `Compactions so far: ${count(status.compactions)}.`,
    `Tool results cleared, saved or cut: ${count(distinct.length)}${newest(distinct)}.`,
    `Messages folded or dropped (snip, collapse): ${count(removed.size)}.`,
    `Summaries: ${count(summaries.length)}${newest(summaries)}.`,
    ...(manager.pins ? [describePins(manager.pins(), count)] : []),
    "Read anything listed back, byte-exact, with history_read (id), or find it with history_search.",
  ].join("\n");
}

/** The pins line: how many, their size against the cap, and each pinned message's id (unhonoured ones said so). */
function describePins(pins: PinsStatus, count: (value: number) => string): string {
  if (pins.items.length === 0)
    return `Pinned messages: 0 (kept verbatim by every compaction; up to ${count(pins.capTokens)} tokens).`;
  const ids = pins.items
    .slice(-STATUS_IDS)
    .map((item) => (item.honoured ? item.messageId : `${item.messageId} (over the cap: not kept)`));
  return `Pinned messages: ${count(pins.items.length)}, ${count(pins.tokens)} of ${count(pins.capTokens)} tokens (kept verbatim by every compaction)${pins.items.length > STATUS_IDS ? "; newest" : ";"} ids: ${ids.join(", ")}.`;
}
