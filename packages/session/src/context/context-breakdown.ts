import type { Message, TextBlock, ToolDefinition } from "@unforget/core";
import { estimateMessageTokens, estimateTextTokens } from "@unforget/tokens";
import { projectMessages } from "@unforget/transcript";
import { attachmentKindOf } from "./attachment-message.ts";

/** Estimated tokens of each part of the context (the `/context` view); the parts add up to `total`. */
export interface ContextBreakdown {
  system: number;
  tools: number;
  /** The MEMORY.md index and recalled memories. */
  memory: number;
  /** The compaction summary standing for earlier history. */
  summary: number;
  /** Other context the session added: hook context, task notifications and status, restored files, … */
  attachments: number;
  /** Tool results (outputs of the tools the model called). */
  toolResults: number;
  /** Everything else: the user's prompts and the model's answers and calls. */
  messages: number;
  total: number;
}

const MEMORY_KINDS: ReadonlySet<string> = new Set(["memory-index", "memory"]);

/** What the breakdown reads from the session. */
export interface BreakdownSource {
  readonly system: string | TextBlock[] | undefined;
  readonly definitions: readonly ToolDefinition[];
  /** The messages of the last request, when there was one. */
  readonly projected: readonly Message[] | undefined;
  /** The manager's entries, projected when no request was made yet. */
  readonly entries: Parameters<typeof projectMessages>[0];
}

const cache = new WeakMap<readonly Message[], ContextBreakdown>();

/** The breakdown of the last request's context (remembered per request), or of the context as it stands. */
export function contextBreakdown(source: BreakdownSource): ContextBreakdown {
  const messages = source.projected ?? projectMessages(source.entries);
  const cached = source.projected ? cache.get(source.projected) : undefined;
  if (cached) return cached;
  const breakdown: ContextBreakdown = {
    system: systemTokens(source.system),
    tools: source.definitions.length === 0 ? 0 : estimateTextTokens(JSON.stringify(source.definitions)),
    memory: 0,
    summary: 0,
    attachments: 0,
    toolResults: 0,
    messages: 0,
    total: 0,
  };
  for (const message of messages) {
    const kind = attachmentKindOf(message);
    if (kind !== undefined) {
      breakdown[MEMORY_KINDS.has(kind) ? "memory" : "attachments"] += estimateMessageTokens(message);
      continue;
    }
    if (message.isCompactSummary) {
      breakdown.summary += estimateMessageTokens(message);
      continue;
    }
    const results = message.content.filter((block) => block.type === "tool_result");
    if (results.length === 0) {
      breakdown.messages += estimateMessageTokens(message);
      continue;
    }
    const resultTokens = estimateMessageTokens({ role: message.role, content: results });
    breakdown.toolResults += resultTokens;
    breakdown.messages += Math.max(0, estimateMessageTokens(message) - resultTokens);
  }
  breakdown.total =
    breakdown.system +
    breakdown.tools +
    breakdown.memory +
    breakdown.summary +
    breakdown.attachments +
    breakdown.toolResults +
    breakdown.messages;
  if (source.projected) cache.set(source.projected, breakdown);
  return breakdown;
}

function systemTokens(system: string | TextBlock[] | undefined): number {
  if (system === undefined) return 0;
  return estimateTextTokens(
    typeof system === "string" ? system : system.map((block) => block.text).join("\n"),
  );
}
