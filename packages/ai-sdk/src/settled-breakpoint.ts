import type { HostBreakpoints } from "@unforget/compact";
import type { ModelMessage } from "ai";
import { isRecord } from "./is-record.ts";

/** Provider options as the AI SDK's parts and messages carry them (`{ anthropic: { cacheControl } }`). */
export type PartProviderOptions = Record<string, Record<string, unknown>>;

/** Parts a breakpoint may go on (reasoning cannot carry one). */
const CACHEABLE_PARTS = new Set(["text", "image", "file", "tool-call", "tool-result"]);

/** Anthropic's breakpoint as AI SDK provider options; the other providers ignore the key. */
export function anthropicBreakpoint(ttl: "5m" | "1h" | undefined): PartProviderOptions {
  return {
    anthropic: { cacheControl: ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" } },
  };
}

/** Breakpoints in the provider options of a part or a message: Anthropic's cache control, Bedrock's cache point. */
function breakpointsIn(options: unknown): number {
  if (!isRecord(options)) return 0;
  let count = 0;
  for (const value of Object.values(options)) {
    if (!isRecord(value)) continue;
    if (
      value.cacheControl !== undefined ||
      value.cache_control !== undefined ||
      value.cachePoint !== undefined
    )
      count++;
  }
  return count;
}

/** How AI SDK messages carry breakpoints, and how one gets the settled breakpoint (`marker` on its last cacheable part). */
export function modelMessageBreakpoints(marker: PartProviderOptions): HostBreakpoints<ModelMessage> {
  const withMarker = (options: unknown): PartProviderOptions => {
    const merged: PartProviderOptions = isRecord(options) ? { ...(options as PartProviderOptions) } : {};
    for (const [key, value] of Object.entries(marker)) merged[key] = { ...merged[key], ...value };
    return merged;
  };
  return {
    count(message) {
      let count = breakpointsIn(message.providerOptions);
      if (Array.isArray(message.content))
        for (const part of message.content)
          count += breakpointsIn((part as { providerOptions?: unknown }).providerOptions);
      return count;
    },
    mark(message) {
      if (message.role === "system") return undefined;
      if (typeof message.content === "string") {
        if (message.content.length === 0) return undefined;
        return {
          ...message,
          content: [{ type: "text", text: message.content, providerOptions: withMarker(undefined) }],
        } as ModelMessage;
      }
      const parts = message.content as { type: string; text?: unknown; providerOptions?: unknown }[];
      // Anthropic refuses a breakpoint on an empty text block.
      const at = parts.findLastIndex(
        (part) => CACHEABLE_PARTS.has(part.type) && !(part.type === "text" && part.text === ""),
      );
      if (at < 0) return undefined;
      const content = parts.map((part, index) =>
        index === at ? { ...part, providerOptions: withMarker(part.providerOptions) } : part,
      );
      return { ...message, content } as ModelMessage;
    },
  };
}
