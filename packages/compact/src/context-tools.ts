import type { Tool } from "@unforget/core";
import type { ContextManager } from "./context-manager.ts";

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
