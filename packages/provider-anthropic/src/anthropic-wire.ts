import type {
  AppliedContextEdit,
  ContentBlock,
  ContextManagementEdit,
  CountTokensRequest,
  ModelRequest,
  StopReason,
  TextBlock,
  ToolChoice,
  ToolResultContentBlock,
  Usage,
} from "@unforget/core";

/** A JSON object in the Messages API's wire shape (snake_case keys). */
export type WireObject = Record<string, unknown>;

/** Beta header each `context_management` edit family needs. */
export const CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27";
export const COMPACTION_BETA = "compact-2026-01-12";

const KNOWN_STOP_REASONS: ReadonlySet<string> = new Set([
  "end_turn",
  "max_tokens",
  "stop_sequence",
  "tool_use",
  "pause_turn",
  "refusal",
  "model_context_window_exceeded",
]);

function camelToSnake(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

function snakeToCamel(key: string): string {
  return key.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function textBlockToWire(block: TextBlock): WireObject {
  const wire: WireObject = { type: "text", text: block.text };
  if (block.cache_control) wire.cache_control = block.cache_control;
  if (block.citations && block.citations.length > 0) wire.citations = block.citations;
  return wire;
}

function toolResultPartToWire(block: ToolResultContentBlock): WireObject {
  if (block.type === "text") return textBlockToWire(block);
  return contentBlockToWire(block);
}

/** Core block → Messages API block. An `UnknownBlock` goes out exactly as it came in. */
export function contentBlockToWire(block: ContentBlock): WireObject {
  switch (block.type) {
    case "text":
      return textBlockToWire(block);
    case "image":
    case "document": {
      const wire: WireObject = { type: block.type, source: block.source };
      if (block.type === "document") {
        if (block.title !== undefined) wire.title = block.title;
        if (block.context !== undefined) wire.context = block.context;
      }
      if (block.cache_control) wire.cache_control = block.cache_control;
      return wire;
    }
    case "tool_use": {
      const wire: WireObject = { type: "tool_use", id: block.id, name: block.name, input: block.input ?? {} };
      if (block.cache_control) wire.cache_control = block.cache_control;
      return wire;
    }
    case "tool_result": {
      const wire: WireObject = {
        type: "tool_result",
        tool_use_id: block.tool_use_id,
        content: typeof block.content === "string" ? block.content : block.content.map(toolResultPartToWire),
      };
      if (block.is_error !== undefined) wire.is_error = block.is_error;
      if (block.cache_control) wire.cache_control = block.cache_control;
      return wire;
    }
    case "thinking": {
      const wire: WireObject = { type: "thinking", thinking: block.thinking };
      if (block.signature !== undefined) wire.signature = block.signature;
      return wire;
    }
    case "redacted_thinking":
      return { type: "redacted_thinking", data: block.data };
    case "unknown":
      return block.original;
  }
}

/** Messages API block → core block. Anything this version does not model becomes an `UnknownBlock`. */
export function contentBlockFromWire(raw: unknown): ContentBlock {
  if (!isObject(raw) || typeof raw.type !== "string") {
    return { type: "unknown", original: { type: "invalid", value: raw } };
  }
  switch (raw.type) {
    case "text": {
      if (typeof raw.text !== "string") break;
      const block: TextBlock = { type: "text", text: raw.text };
      if (Array.isArray(raw.citations) && raw.citations.length > 0) block.citations = raw.citations;
      return block;
    }
    case "tool_use":
      if (typeof raw.id !== "string" || typeof raw.name !== "string") break;
      return { type: "tool_use", id: raw.id, name: raw.name, input: raw.input ?? {} };
    case "thinking": {
      if (typeof raw.thinking !== "string") break;
      return typeof raw.signature === "string" && raw.signature !== ""
        ? { type: "thinking", thinking: raw.thinking, signature: raw.signature }
        : { type: "thinking", thinking: raw.thinking };
    }
    case "redacted_thinking":
      if (typeof raw.data !== "string") break;
      return { type: "redacted_thinking", data: raw.data };
  }
  return { type: "unknown", original: structuredClone(raw) as { type: string; [key: string]: unknown } };
}

function systemToWire(system: ModelRequest["system"]): unknown {
  if (system === undefined) return undefined;
  if (typeof system === "string") return system;
  return system.map(textBlockToWire);
}

function toolChoiceToWire(choice: ToolChoice): WireObject {
  const wire: WireObject = { type: choice.type };
  if (choice.type === "tool") wire.name = choice.name;
  if (choice.type !== "none" && choice.disableParallelToolUse !== undefined) {
    wire.disable_parallel_tool_use = choice.disableParallelToolUse;
  }
  return wire;
}

/** `context_management` edit in core's camelCase → the API's snake_case; unknown keys pass through renamed. */
export function contextEditToWire(edit: ContextManagementEdit): WireObject {
  const wire: WireObject = {};
  for (const [key, value] of Object.entries(edit)) {
    if (value !== undefined) wire[camelToSnake(key)] = value;
  }
  return wire;
}

/** Beta flags a request needs: its context-management edits plus `providerOptions.anthropic.betas`. */
export function requiredBetas(
  request: Pick<ModelRequest, "contextManagement" | "providerOptions">,
): string[] {
  const betas = new Set<string>();
  for (const edit of request.contextManagement?.edits ?? []) {
    if (edit.type.startsWith("compact_")) betas.add(COMPACTION_BETA);
    else betas.add(CONTEXT_MANAGEMENT_BETA);
  }
  const extra = request.providerOptions?.anthropic?.betas;
  if (Array.isArray(extra)) for (const beta of extra) if (typeof beta === "string") betas.add(beta);
  return [...betas];
}

function providerExtras(request: Pick<ModelRequest, "providerOptions">): WireObject {
  const extras: WireObject = {};
  for (const [key, value] of Object.entries(request.providerOptions?.anthropic ?? {})) {
    if (key !== "betas") extras[key] = value;
  }
  return extras;
}

function sharedBody(request: CountTokensRequest): WireObject {
  const body: WireObject = {
    model: request.model,
    messages: request.messages.map((message) => ({
      role: message.role,
      content: message.content.map(contentBlockToWire),
    })),
  };
  const system = systemToWire(request.system);
  if (system !== undefined) body.system = system;
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => {
      const wire: WireObject = { name: tool.name, input_schema: tool.inputSchema };
      if (tool.description !== undefined) wire.description = tool.description;
      if (tool.cache_control) wire.cache_control = tool.cache_control;
      return wire;
    });
  }
  if (request.toolChoice) body.tool_choice = toolChoiceToWire(request.toolChoice);
  if (request.thinking) {
    body.thinking =
      request.thinking.type === "enabled"
        ? { type: "enabled", budget_tokens: request.thinking.budgetTokens }
        : { type: "disabled" };
  }
  if (request.contextManagement && request.contextManagement.edits.length > 0) {
    body.context_management = { edits: request.contextManagement.edits.map(contextEditToWire) };
  }
  return body;
}

/** The `POST /v1/messages` body for a request (without `stream`). */
export function messageBodyToWire(request: ModelRequest): WireObject {
  const body = sharedBody(request);
  body.max_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stopSequences && request.stopSequences.length > 0) body.stop_sequences = request.stopSequences;
  return { ...body, ...providerExtras(request) };
}

/** The `POST /v1/messages/count_tokens` body: only the fields that endpoint accepts (no `max_tokens`). */
export function countTokensBodyToWire(request: CountTokensRequest): WireObject {
  return sharedBody(request);
}

/** Wire usage → core usage; absent cache fields are 0. */
export function usageFromWire(raw: unknown): Usage {
  const usage = isObject(raw) ? raw : {};
  const read = (key: string) => (typeof usage[key] === "number" ? (usage[key] as number) : 0);
  return {
    inputTokens: read("input_tokens"),
    outputTokens: read("output_tokens"),
    cacheCreationInputTokens: read("cache_creation_input_tokens"),
    cacheReadInputTokens: read("cache_read_input_tokens"),
  };
}

/** The usage fields a `message_delta` actually carried (later events replace earlier numbers). */
export function partialUsageFromWire(raw: unknown): Partial<Usage> {
  const usage = isObject(raw) ? raw : {};
  const partial: Partial<Usage> = {};
  if (typeof usage.input_tokens === "number") partial.inputTokens = usage.input_tokens;
  if (typeof usage.output_tokens === "number") partial.outputTokens = usage.output_tokens;
  if (typeof usage.cache_creation_input_tokens === "number") {
    partial.cacheCreationInputTokens = usage.cache_creation_input_tokens;
  }
  if (typeof usage.cache_read_input_tokens === "number")
    partial.cacheReadInputTokens = usage.cache_read_input_tokens;
  return partial;
}

/**
 * Wire stop reason → core stop reason. `compaction` (a server compaction paused the turn) asks the caller
 * to send the conversation again, which is what `pause_turn` means; the raw word is kept separately.
 */
export function stopReasonFromWire(raw: unknown): StopReason {
  if (typeof raw !== "string") return "other";
  if (KNOWN_STOP_REASONS.has(raw)) return raw as StopReason;
  if (raw === "compaction") return "pause_turn";
  return "other";
}

/** `context_management.applied_edits` → core's camelCase `AppliedContextEdit`s; undefined when not reported. */
export function appliedEditsFromWire(contextManagement: unknown): AppliedContextEdit[] | undefined {
  if (!isObject(contextManagement) || !Array.isArray(contextManagement.applied_edits)) return undefined;
  return contextManagement.applied_edits.filter(isObject).map((edit) => {
    const applied: AppliedContextEdit = { type: String(edit.type ?? "unknown") };
    for (const [key, value] of Object.entries(edit)) {
      if (key !== "type") applied[snakeToCamel(key)] = value;
    }
    return applied;
  });
}
