import { estimateTextTokens } from "../conversation/conversation.ts";
import type { CacheSafeParameters } from "../summary/summarizer.ts";
import type { PrepareOptions } from "./context-manager-options.ts";
import type { ContextView } from "./context-view.ts";

/** What every request shares besides its messages: counted in the context, reused by a model summary. */
export interface RequestShape {
  /** Called with each call's options: counts a changed system prompt or tool list, notes the tools offered. */
  set(options: PrepareOptions): void;
  /** The live request's system, tools and output limit (a model summary reuses them, same cache prefix). */
  readonly cacheSafe: CacheSafeParameters;
  /** Every tool the session's requests offered, recorded on each boundary so deferred tool lists survive it. */
  readonly discoveredTools: readonly string[];
}

/** The shape of the calls; `initial` (the requests' system prompt and tools, known before the first call) is counted at once. */
export function createRequestShape(view: ContextView, initial?: PrepareOptions): RequestShape {
  const discovered = new Set<string>();
  let lastSystem: unknown;
  let lastTools: unknown;
  let cacheSafe: CacheSafeParameters = {};
  const shape: RequestShape = {
    set(options) {
      for (const tool of options.tools ?? []) discovered.add(tool.name);
      if (options.system !== lastSystem || options.tools !== lastTools) {
        lastSystem = options.system;
        lastTools = options.tools;
        const systemText =
          typeof options.system === "string"
            ? options.system
            : (options.system ?? []).map((block) => block.text).join("\n");
        const toolText = options.tools ? JSON.stringify(options.tools) : "";
        view.setPreambleTokens(
          estimateTextTokens(systemText) + (toolText ? estimateTextTokens(toolText) : 0),
        );
      }
      cacheSafe = {};
      if (options.system !== undefined) cacheSafe.system = options.system;
      if (options.tools !== undefined) cacheSafe.tools = options.tools;
      if (options.maxTokens !== undefined) cacheSafe.maxTokens = options.maxTokens;
    },
    get cacheSafe() {
      return cacheSafe;
    },
    get discoveredTools() {
      return [...discovered];
    },
  };
  if (initial) shape.set(initial);
  return shape;
}
