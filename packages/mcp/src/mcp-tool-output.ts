import type { ImageBlock, TextBlock, ToolOutput } from "@unforget/core";

/** The part of an MCP `tools/call` result this package reads (the SDK has validated its shape). */
export interface McpCallResult {
  content?: readonly Record<string, unknown>[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Image types every provider accepts in a tool result; other images are described, not sent. */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

function describeBinary(kind: string, mimeType: unknown, data: unknown, uri?: unknown): string {
  const bytes = typeof data === "string" ? Math.floor((data.length * 3) / 4) : 0;
  const from = typeof uri === "string" ? ` from ${uri}` : "";
  return `[${kind}${from} (${String(mimeType ?? "unknown type")}, about ${bytes} bytes) not shown: the model cannot read it here]`;
}

function image(mimeType: string, data: string): ImageBlock {
  return { type: "image", source: { type: "base64", media_type: mimeType, data } };
}

/** One MCP content item as what the model reads. */
function convertItem(item: Record<string, unknown>): TextBlock | ImageBlock {
  switch (item.type) {
    case "text":
      return { type: "text", text: String(item.text ?? "") };
    case "image":
      return IMAGE_TYPES.has(String(item.mimeType)) && typeof item.data === "string"
        ? image(String(item.mimeType), item.data)
        : { type: "text", text: describeBinary("image", item.mimeType, item.data) };
    case "audio":
      return { type: "text", text: describeBinary("audio", item.mimeType, item.data) };
    case "resource_link": {
      const description = typeof item.description === "string" ? `: ${item.description}` : "";
      return {
        type: "text",
        text: `[resource ${String(item.name ?? "")} at ${String(item.uri)}${description}]`,
      };
    }
    case "resource": {
      const resource = (item.resource ?? {}) as Record<string, unknown>;
      if (typeof resource.text === "string")
        return { type: "text", text: `[resource ${String(resource.uri)}]\n${resource.text}` };
      return IMAGE_TYPES.has(String(resource.mimeType)) && typeof resource.blob === "string"
        ? image(String(resource.mimeType), resource.blob)
        : { type: "text", text: describeBinary("resource", resource.mimeType, resource.blob, resource.uri) };
    }
    default:
      return { type: "text", text: `[content of type ${String(item.type)} not shown]` };
  }
}

/**
 * An MCP tool result as a `ToolOutput`: text stays text (one string when there is nothing else), images become
 * image blocks, other binary content is described, and `structuredContent` is the JSON text when the tool sent
 * no content of its own (a tool that sends both puts the same data in its text, as the spec asks).
 */
export function mcpResultToToolOutput(result: McpCallResult): ToolOutput {
  const isError = result.isError === true;
  const blocks = (result.content ?? []).map(convertItem);
  if (blocks.length === 0 && result.structuredContent !== undefined)
    blocks.push({ type: "text", text: JSON.stringify(result.structuredContent) });
  if (blocks.length === 0)
    return {
      content: isError ? "The tool failed and said nothing more." : "(the tool returned no content)",
      isError,
    };
  if (blocks.every((block) => block.type === "text"))
    return { content: blocks.map((block) => (block as TextBlock).text).join("\n"), isError };
  return { content: blocks, isError };
}
