import {
  type ContentBlock,
  type ContextManagementEdit,
  type CountTokensRequest,
  contentBlocks,
  InvalidMessageError,
  type ModelRequest,
  type TextBlock,
  type ToolChoice,
  type ToolResultContentBlock,
} from "@unforget/core";
import { prepareRequest, type UnsignedThinkingPolicy } from "@unforget/provider-runtime";
import { ANTHROPIC_PROVIDER_ID } from "./anthropic-error.ts";
import type { AnthropicProviderOptions } from "./anthropic-provider.ts";

/** A JSON object in the Messages API's wire shape (snake_case keys). */
export type WireObject = Record<string, unknown>;

/** Beta header each `context_management` edit family needs. */
export const CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27";
export const COMPACTION_BETA = "compact-2026-01-12";

/** The Messages API call a request becomes: the body, and the betas that select the beta endpoint. */
export interface AnthropicRequest {
  /** The JSON body, snake_case as the API takes it (`max_tokens`, `tool_use_id`, `cache_control`, …). */
  body: WireObject;
  /** The `anthropic-beta` flags the request needs; empty for the GA endpoint. */
  betas: string[];
}

/** What the provider does with a thinking block without a signature: the API refuses it, so it is left out. */
export const ANTHROPIC_UNSIGNED_THINKING: UnsignedThinkingPolicy = "drop";

/**
 * The `POST /v1/messages` call the provider makes for a request (without `stream`): the JSON body in the
 * API's wire shape and the beta flags (sent as the `anthropic-beta` header, which selects the beta endpoint).
 * Pure, nothing is sent; the request is prepared exactly as the provider prepares it (checked, string
 * contents as text blocks, unsigned thinking left out), so this is what would go on the wire.
 */
export function convertToAnthropicRequest(given: ModelRequest): AnthropicRequest {
  const request = prepareRequest(given, ANTHROPIC_UNSIGNED_THINKING);
  const body = conversationBody(request);
  body.max_tokens = request.maxTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stopSequences && request.stopSequences.length > 0) body.stop_sequences = request.stopSequences;
  const { betas, ...extras } = anthropicOptions(request);
  return { body: { ...body, ...extras }, betas: requiredBetas(request, betas) };
}

/** The `POST /v1/messages/count_tokens` call: only the fields that endpoint accepts (no `max_tokens`). */
export function convertToAnthropicCountRequest(given: CountTokensRequest): AnthropicRequest {
  const request = prepareRequest(given, ANTHROPIC_UNSIGNED_THINKING);
  return { body: conversationBody(request), betas: requiredBetas(request, anthropicOptions(request).betas) };
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

/** `context_management` edit in core's camelCase → the API's snake_case; unknown keys pass through renamed. */
export function contextEditToWire(edit: ContextManagementEdit): WireObject {
  const wire: WireObject = {};
  for (const [key, value] of Object.entries(edit)) {
    if (value !== undefined) wire[camelToSnake(key)] = value;
  }
  return wire;
}

/** Beta flags a request needs: its context-management edits plus the ones named in its options. */
function requiredBetas(
  request: Pick<ModelRequest, "contextManagement">,
  extra: string[] | undefined,
): string[] {
  const betas = new Set<string>();
  for (const edit of request.contextManagement?.edits ?? []) {
    betas.add(edit.type.startsWith("compact_") ? COMPACTION_BETA : CONTEXT_MANAGEMENT_BETA);
  }
  for (const beta of extra ?? []) betas.add(beta);
  return [...betas];
}

/** `providerOptions.anthropic`, checked: a malformed value is a caller's mistake, said at once. */
function anthropicOptions(request: Pick<ModelRequest, "providerOptions">): AnthropicProviderOptions {
  const options: unknown = request.providerOptions?.[ANTHROPIC_PROVIDER_ID];
  if (options === undefined) return {};
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new InvalidMessageError(
      "providerOptions.anthropic must be an object of Anthropic request fields (e.g. { betas: [...], top_k: 5 }).",
    );
  }
  const { betas } = options as AnthropicProviderOptions;
  if (betas !== undefined && !(Array.isArray(betas) && betas.every((beta) => typeof beta === "string"))) {
    throw new InvalidMessageError(
      "providerOptions.anthropic.betas must be an array of beta names (e.g. ['context-1m-2025-08-07']).",
    );
  }
  return options as AnthropicProviderOptions;
}

function conversationBody(request: CountTokensRequest): WireObject {
  const body: WireObject = {
    model: request.model,
    messages: request.messages.map((message) => ({
      role: message.role,
      content: contentBlocks(message.content).map(contentBlockToWire),
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

function camelToSnake(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
