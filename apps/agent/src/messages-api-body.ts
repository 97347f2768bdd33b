import type { ContentBlock, RequestMessage, TextBlock, ToolDefinition } from "@unforget/core";

/** A JSON object in the Anthropic Messages API's wire shape (snake_case keys). */
export type WireObject = Record<string, unknown>;

/** Exactly the body of a `POST /v1/messages` request: what a replayed call would send. */
export interface MessagesApiBody {
  model: string;
  system: string | WireObject[];
  messages: { role: "user" | "assistant"; content: WireObject[] }[];
  tools: WireObject[];
  max_tokens: number;
}

export interface MessagesApiRequest {
  model: string;
  system: string | TextBlock[];
  messages: readonly RequestMessage[];
  tools: readonly ToolDefinition[];
  maxTokens: number;
}

/**
 * Builds the Messages API body for a request, whatever format the session was recorded in: core's content
 * blocks already have the wire's field names, so each block keeps its fields; a block this version does not
 * model goes out as it came in; tool definitions get `input_schema`.
 */
export function toMessagesApiBody(request: MessagesApiRequest): MessagesApiBody {
  return {
    model: request.model,
    system: typeof request.system === "string" ? request.system : request.system.map(blockToWire),
    messages: request.messages.map((message) => ({
      role: message.role,
      content: message.content.map(blockToWire),
    })),
    tools: request.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      input_schema: tool.inputSchema,
      ...(tool.cache_control ? { cache_control: tool.cache_control } : {}),
    })),
    max_tokens: request.maxTokens,
  };
}

function blockToWire(block: ContentBlock): WireObject {
  if (block.type === "unknown") return block.original;
  if (block.type === "tool_result" && typeof block.content !== "string") {
    return { ...block, content: block.content.map((part) => blockToWire(part as ContentBlock)) };
  }
  if (block.type === "tool_use") return { ...block, input: block.input ?? {} };
  if (block.type === "text" && block.citations?.length === 0) {
    const { citations: _empty, ...rest } = block;
    return rest;
  }
  return { ...block };
}
