import type {
  ContentBlock,
  CountTokensRequest,
  DocumentBlock,
  ImageBlock,
  ModelRequest,
  RequestMessage,
  ToolChoice,
  ToolResultBlock,
} from "@unforget/core";
import { contentBlocks, InvalidMessageError } from "@unforget/core";
import { isRecord } from "./is-record.ts";
import { toVertexSchema } from "./to-vertex-schema.ts";
import type { VertexProviderOptions } from "./vertex-provider.ts";

/** A Gemini `Part` as it travels on the wire. Internal: never exported from the package. */
export type VertexPart = Record<string, unknown>;

export interface VertexContent {
  role: "user" | "model";
  parts: VertexPart[];
}

/** The JSON body of generateContent / streamGenerateContent (and, without generationConfig, countTokens). */
export interface VertexRequestBody {
  contents: VertexContent[];
  systemInstruction?: { role: "system"; parts: VertexPart[] };
  tools?: Record<string, unknown>[];
  toolConfig?: Record<string, unknown>;
  generationConfig?: Record<string, unknown>;
  safetySettings?: unknown[];
  labels?: Record<string, string>;
  cachedContent?: string;
}

/** Type of the `UnknownBlock.original` that wraps a Gemini part this version does not model. */
export const VERTEX_PART_BLOCK_TYPE = "vertex_part";

/**
 * Translates the core request to Vertex's wire format: roles user/model, consecutive same-role messages
 * merged, tool results as `functionResponse` parts named after their call and ordered like the calls of
 * the preceding model turn, thinking as `thought` parts, signature-only thinking blocks re-attached as
 * `thoughtSignature` to the part before them, system prompt as `systemInstruction`, tools as
 * `functionDeclarations`, tool choice as `toolConfig`.
 */
export function convertToVertexRequest(request: ModelRequest | CountTokensRequest): VertexRequestBody {
  const body: VertexRequestBody = { contents: buildContents(request.messages) };
  const system = systemParts(request.system);
  if (system.length > 0) body.systemInstruction = { role: "system", parts: system };
  if (request.tools && request.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          ...(tool.description === undefined ? {} : { description: tool.description }),
          parameters: toVertexSchema(tool.inputSchema),
        })),
      },
    ];
  }
  if (request.toolChoice) body.toolConfig = toolConfig(request.toolChoice);
  const vertexOptions = vertexProviderOptions(request);
  const generation: Record<string, unknown> = {};
  const full = request as Partial<ModelRequest>;
  if (full.maxTokens !== undefined) generation.maxOutputTokens = full.maxTokens;
  if (full.temperature !== undefined) generation.temperature = full.temperature;
  if (full.topP !== undefined) generation.topP = full.topP;
  if (full.stopSequences !== undefined && full.stopSequences.length > 0)
    generation.stopSequences = full.stopSequences;
  if (request.thinking?.type === "enabled") {
    generation.thinkingConfig = { thinkingBudget: request.thinking.budgetTokens, includeThoughts: true };
  } else if (request.thinking?.type === "disabled") {
    generation.thinkingConfig = { thinkingBudget: 0 };
  }
  if (isRecord(vertexOptions.generationConfig)) Object.assign(generation, vertexOptions.generationConfig);
  if (Object.keys(generation).length > 0) body.generationConfig = generation;
  if (Array.isArray(vertexOptions.safetySettings)) body.safetySettings = vertexOptions.safetySettings;
  if (isRecord(vertexOptions.labels)) body.labels = vertexOptions.labels as Record<string, string>;
  if (typeof vertexOptions.cachedContent === "string") body.cachedContent = vertexOptions.cachedContent;
  return body;
}

/** The countTokens body: what occupies the window (contents, system instruction, tools), nothing else. */
export function convertToVertexCountRequest(request: CountTokensRequest): VertexRequestBody {
  const full = convertToVertexRequest(request);
  const body: VertexRequestBody = { contents: full.contents };
  if (full.systemInstruction) body.systemInstruction = full.systemInstruction;
  if (full.tools) body.tools = full.tools;
  return body;
}

/** `providerOptions.vertex`, checked: a malformed value is a caller's mistake, said at once. */
function vertexProviderOptions(request: Pick<ModelRequest, "providerOptions">): VertexProviderOptions {
  const raw: unknown = request.providerOptions?.vertex;
  if (raw === undefined) return {};
  if (!isRecord(raw)) {
    throw new InvalidMessageError(
      "providerOptions.vertex must be an object ({ generationConfig, safetySettings, labels, cachedContent }).",
    );
  }
  return raw as VertexProviderOptions;
}

function systemParts(system: ModelRequest["system"]): VertexPart[] {
  if (system === undefined) return [];
  if (typeof system === "string") return system === "" ? [] : [{ text: system }];
  return system.filter((block) => block.text !== "").map((block) => ({ text: block.text }));
}

function toolConfig(choice: ToolChoice): Record<string, unknown> {
  switch (choice.type) {
    case "auto":
      return { functionCallingConfig: { mode: "AUTO" } };
    case "any":
      return { functionCallingConfig: { mode: "ANY" } };
    case "none":
      return { functionCallingConfig: { mode: "NONE" } };
    case "tool":
      return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [choice.name] } };
  }
}

function buildContents(messages: RequestMessage[]): VertexContent[] {
  const contents: VertexContent[] = [];
  // Calls of the latest model turn, in order, by id: tool results are named and ordered after them.
  let pendingCalls: { id: string; name: string }[] = [];
  const namesById = new Map<string, string>();
  for (const message of messages) {
    const role = message.role === "assistant" ? "model" : "user";
    const blocks = contentBlocks(message.content);
    const parts =
      role === "model"
        ? modelParts(blocks, (id, name) => {
            namesById.set(id, name);
          })
        : userParts(blocks, pendingCalls, namesById);
    if (role === "model") {
      pendingCalls = blocks.flatMap((block) =>
        block.type === "tool_use" ? [{ id: block.id, name: block.name }] : [],
      );
    }
    if (parts.length === 0) continue;
    const previous = contents.at(-1);
    if (previous && previous.role === role) previous.parts.push(...parts);
    else contents.push({ role, parts });
  }
  return contents;
}

function modelParts(blocks: ContentBlock[], remember: (id: string, name: string) => void): VertexPart[] {
  const parts: VertexPart[] = [];
  for (const block of blocks) {
    if (block.type === "thinking") {
      if (block.thinking === "") {
        // A signature-only block belongs to the part before it.
        const previous = parts.at(-1);
        if (previous && block.signature !== undefined) previous.thoughtSignature = block.signature;
        else if (block.signature !== undefined) parts.push({ text: "", thoughtSignature: block.signature });
      } else {
        parts.push({
          text: block.thinking,
          thought: true,
          ...(block.signature === undefined ? {} : { thoughtSignature: block.signature }),
        });
      }
    } else if (block.type === "tool_use") {
      remember(block.id, block.name);
      parts.push({ functionCall: { name: block.name, args: isRecord(block.input) ? block.input : {} } });
    } else {
      // Tool results cannot appear in a model turn; redacted thinking is Anthropic's: nothing Gemini could use.
      parts.push(...contentParts(block));
    }
  }
  return parts;
}

/** Text, media and preserved Gemini parts, the same in both roles; anything else yields nothing. */
function contentParts(block: ContentBlock): VertexPart[] {
  switch (block.type) {
    case "text":
      return block.text === "" ? [] : [{ text: block.text }];
    case "image":
    case "document":
      return mediaParts(block);
    case "unknown":
      return block.original.type === VERTEX_PART_BLOCK_TYPE && isRecord(block.original.part)
        ? [structuredClone(block.original.part)]
        : [];
    default:
      return [];
  }
}

function userParts(
  blocks: ContentBlock[],
  pendingCalls: { id: string; name: string }[],
  namesById: Map<string, string>,
): VertexPart[] {
  const results = blocks.filter((block): block is ToolResultBlock => block.type === "tool_result");
  const order = new Map(pendingCalls.map((call, index) => [call.id, index]));
  const sorted = [...results].sort(
    (left, right) =>
      (order.get(left.tool_use_id) ?? Number.MAX_SAFE_INTEGER) -
      (order.get(right.tool_use_id) ?? Number.MAX_SAFE_INTEGER),
  );
  const parts: VertexPart[] = [];
  const attachments: VertexPart[] = [];
  for (const result of sorted) {
    const name = namesById.get(result.tool_use_id) ?? result.tool_use_id;
    const text =
      typeof result.content === "string"
        ? result.content
        : result.content
            .filter((part) => part.type === "text")
            .map((part) => part.text)
            .join("\n");
    parts.push({
      functionResponse: { name, response: result.is_error ? { error: text } : { content: text } },
    });
    if (typeof result.content !== "string") {
      for (const part of result.content) if (part.type !== "text") attachments.push(...mediaParts(part));
    }
  }
  parts.push(...attachments);
  for (const block of blocks) parts.push(...contentParts(block));
  return parts;
}

function mediaParts(block: ImageBlock | DocumentBlock): VertexPart[] {
  const source = block.source;
  const fallbackType = block.type === "image" ? "image/png" : "application/pdf";
  switch (source.type) {
    case "base64":
      return [{ inlineData: { mimeType: source.media_type, data: source.data } }];
    case "url":
      return [{ fileData: { mimeType: mimeTypeFromUrl(source.url) ?? fallbackType, fileUri: source.url } }];
    case "file":
      return [{ fileData: { mimeType: fallbackType, fileUri: source.file_id } }];
    case "text":
      return [
        { text: block.type === "document" && block.title ? `${block.title}\n\n${source.data}` : source.data },
      ];
  }
}

const MIME_BY_EXTENSION: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  pdf: "application/pdf",
  txt: "text/plain",
};

function mimeTypeFromUrl(url: string): string | undefined {
  const extension = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url)?.[1]?.toLowerCase();
  return extension === undefined ? undefined : MIME_BY_EXTENSION[extension];
}
