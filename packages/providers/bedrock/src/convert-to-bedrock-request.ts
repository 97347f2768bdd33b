import type {
  ContentBlock as BedrockContentBlock,
  Message as BedrockMessage,
  CachePointBlock,
  ConverseRequest,
  DocumentFormat,
  ImageFormat,
  SystemContentBlock,
  Tool,
  ToolConfiguration,
  ToolResultContentBlock,
} from "@aws-sdk/client-bedrock-runtime";
import type {
  CacheControl,
  ContentBlock,
  CountTokensRequest,
  DocumentBlock,
  ImageBlock,
  ModelRequest,
  RequestMessage,
  TextBlock,
  ToolChoice,
  ToolDefinition,
} from "@unforget/core";
import { contentBlocks, InvalidMessageError } from "@unforget/core";
import type { BedrockProviderOptions } from "./bedrock-provider.ts";

type DocumentType = NonNullable<ConverseRequest["additionalModelRequestFields"]>;

/** The parts of a Converse request that carry the conversation; CountTokens takes the same parts. */
export interface ConverseConversation {
  messages: BedrockMessage[];
  system?: SystemContentBlock[];
  toolConfig?: ToolConfiguration;
}

/** Everything `ConverseCommand` / `ConverseStreamCommand` need apart from the model id. */
export interface ConverseInput extends ConverseConversation {
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  additionalModelRequestFields?: DocumentType;
  requestMetadata?: Record<string, string>;
}

/** Placeholder for a turn whose every block had no Converse form (Converse rejects empty content). */
export const EMPTY_TURN_TEXT = "(no content)";

const IMAGE_FORMATS: Readonly<Record<string, ImageFormat>> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/jpg": "jpeg",
  "image/gif": "gif",
  "image/webp": "webp",
};

const DOCUMENT_FORMATS: Readonly<Record<string, DocumentFormat>> = {
  "application/pdf": "pdf",
  "text/csv": "csv",
  "application/msword": "doc",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "application/vnd.ms-excel": "xls",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
  "text/html": "html",
  "text/plain": "txt",
  "text/markdown": "md",
};

/** Converse content-block member names; an unknown block carrying one of them is sent back as it came. */
const CONVERSE_MEMBERS: ReadonlySet<string> = new Set([
  "audio",
  "cachePoint",
  "citationsContent",
  "document",
  "guardContent",
  "image",
  "reasoningContent",
  "searchResult",
  "text",
  "toolAddition",
  "toolRemoval",
  "toolResult",
  "toolUse",
  "video",
]);

/** Translates a core request into the Converse input (everything but the model id). */
export function convertToBedrockRequest(request: ModelRequest): ConverseInput {
  const input: ConverseInput = convertToBedrockConversation(request);
  const inferenceConfig: NonNullable<ConverseInput["inferenceConfig"]> = { maxTokens: request.maxTokens };
  if (request.temperature !== undefined) inferenceConfig.temperature = request.temperature;
  if (request.topP !== undefined) inferenceConfig.topP = request.topP;
  if (request.stopSequences !== undefined && request.stopSequences.length > 0) {
    inferenceConfig.stopSequences = request.stopSequences;
  }
  input.inferenceConfig = inferenceConfig;

  const options = bedrockOptions(request);
  const additional: Record<string, unknown> = {};
  if (request.thinking?.type === "enabled") {
    additional.thinking = { type: "enabled", budget_tokens: request.thinking.budgetTokens };
  }
  if (options.anthropicBeta !== undefined && options.anthropicBeta.length > 0) {
    additional.anthropic_beta = options.anthropicBeta;
  }
  Object.assign(additional, options.additionalModelRequestFields);
  if (Object.keys(additional).length > 0) input.additionalModelRequestFields = additional as DocumentType;
  if (options.requestMetadata !== undefined) input.requestMetadata = options.requestMetadata;
  return input;
}

/** Translates the conversation parts of a request (messages, system, tools); used for CountTokens too. */
export function convertToBedrockConversation(
  request: CountTokensRequest | ModelRequest,
): ConverseConversation {
  const conversation: ConverseConversation = { messages: toConverseMessages(request.messages) };
  const system = toSystemBlocks(request.system);
  if (system.length > 0) conversation.system = system;
  const toolConfig = toToolConfig(request.tools, request.toolChoice, request.messages);
  if (toolConfig !== undefined) conversation.toolConfig = toolConfig;
  return conversation;
}

/** `providerOptions.bedrock`, checked: a malformed value is a caller's mistake, said at once. */
function bedrockOptions(request: ModelRequest): BedrockProviderOptions {
  const raw: unknown = request.providerOptions?.bedrock;
  if (raw === undefined) return {};
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new InvalidMessageError(
      "providerOptions.bedrock must be an object ({ additionalModelRequestFields, anthropicBeta, requestMetadata }).",
    );
  }
  return raw as BedrockProviderOptions;
}

function toSystemBlocks(system: string | TextBlock[] | undefined): SystemContentBlock[] {
  if (system === undefined) return [];
  if (typeof system === "string") return system.length > 0 ? [{ text: system }] : [];
  const blocks: SystemContentBlock[] = [];
  for (const block of system) {
    if (block.text.length > 0) blocks.push({ text: block.text });
    if (block.cache_control) blocks.push({ cachePoint: cachePoint(block.cache_control) });
  }
  return blocks;
}

/**
 * Converse requires strictly alternating roles, so consecutive messages with the same role are merged into
 * one turn (the Anthropic API does the same on its side).
 */
function toConverseMessages(messages: RequestMessage[]): BedrockMessage[] {
  const result: BedrockMessage[] = [];
  let documentCount = 0;
  const nextDocumentName = () => {
    documentCount += 1;
    return documentCount;
  };
  for (const message of messages) {
    const content = contentBlocks(message.content).flatMap((block) =>
      toConverseBlocks(block, nextDocumentName),
    );
    const previous = result.at(-1);
    if (previous !== undefined && previous.role === message.role) {
      previous.content = [...(previous.content ?? []), ...content];
    } else {
      result.push({ role: message.role, content });
    }
  }
  for (const message of result) {
    const content = message.content ?? [];
    if (content.every((block) => block.cachePoint !== undefined)) {
      message.content = [{ text: EMPTY_TURN_TEXT }, ...content];
    }
  }
  return result;
}

function toConverseBlocks(block: ContentBlock, nextDocumentNumber: () => number): BedrockContentBlock[] {
  const withCache = (converted: BedrockContentBlock[], control: CacheControl | undefined) =>
    control ? [...converted, { cachePoint: cachePoint(control) }] : converted;
  switch (block.type) {
    case "text":
      // Converse rejects blank text blocks; an empty text adds nothing to the conversation.
      return withCache(block.text.length > 0 ? [{ text: block.text }] : [], block.cache_control);
    case "image":
      return withCache([{ image: toImage(block) }], block.cache_control);
    case "document":
      return withCache([{ document: toDocument(block, nextDocumentNumber()) }], block.cache_control);
    case "tool_use":
      return withCache(
        [{ toolUse: { toolUseId: block.id, name: block.name, input: toDocumentValue(block.input) } }],
        block.cache_control,
      );
    case "tool_result": {
      const content: ToolResultContentBlock[] =
        typeof block.content === "string"
          ? block.content.length > 0
            ? [{ text: block.content }]
            : []
          : block.content.flatMap((part): ToolResultContentBlock[] => {
              if (part.type === "text") return part.text.length > 0 ? [{ text: part.text }] : [];
              if (part.type === "image") return [{ image: toImage(part) }];
              return [{ document: toDocument(part, nextDocumentNumber()) }];
            });
      return withCache(
        [
          {
            toolResult: {
              toolUseId: block.tool_use_id,
              content,
              ...(block.is_error ? { status: "error" as const } : {}),
            },
          },
        ],
        block.cache_control,
      );
    }
    case "thinking":
      return [
        {
          reasoningContent: {
            reasoningText: {
              text: block.thinking,
              ...(block.signature === undefined ? {} : { signature: block.signature }),
            },
          },
        },
      ];
    case "redacted_thinking":
      return [{ reasoningContent: { redactedContent: Buffer.from(block.data, "base64") } }];
    case "unknown": {
      const member = block.original.type;
      const value = block.original[member];
      // Only blocks that came from Converse (stored as `{ type: member, [member]: value }`) can go back.
      if (value === undefined) return [];
      if (CONVERSE_MEMBERS.has(member)) return [{ [member]: value } as unknown as BedrockContentBlock];
      return [{ $unknown: [member, value] } as unknown as BedrockContentBlock];
    }
  }
}

function cachePoint(control: CacheControl): CachePointBlock {
  return control.ttl === "1h" ? { type: "default", ttl: "1h" } : { type: "default" };
}

function toImage(block: ImageBlock) {
  const source = block.source;
  if (source.type === "base64") {
    const format = IMAGE_FORMATS[source.media_type.toLowerCase()];
    if (format === undefined) {
      throw new InvalidMessageError(
        `Bedrock Converse accepts png, jpeg, gif and webp images, not ${source.media_type}; convert the image before sending it.`,
      );
    }
    return { format, source: { bytes: Buffer.from(source.data, "base64") } };
  }
  if (source.type === "url" && source.url.startsWith("s3://")) {
    const format = IMAGE_FORMATS[`image/${extension(source.url)}`];
    if (format !== undefined) return { format, source: { s3Location: { uri: source.url } } };
  }
  throw new InvalidMessageError(
    `Bedrock Converse takes images as base64 bytes or s3:// locations with a png/jpeg/gif/webp extension; this image has a ${source.type} source. Download it and send it as base64.`,
  );
}

function toDocument(block: DocumentBlock, number: number) {
  const source = block.source;
  const name = documentName(block.title, number);
  const context = block.context === undefined ? {} : { context: block.context };
  if (source.type === "text")
    return { format: "txt" as const, name, source: { text: source.data }, ...context };
  if (source.type === "base64") {
    const format = DOCUMENT_FORMATS[source.media_type.toLowerCase()];
    if (format === undefined) {
      throw new InvalidMessageError(
        `Bedrock Converse does not accept documents of type ${source.media_type}; use pdf, csv, doc, docx, xls, xlsx, html, txt or md.`,
      );
    }
    return { format, name, source: { bytes: Buffer.from(source.data, "base64") }, ...context };
  }
  if (source.type === "url" && source.url.startsWith("s3://")) {
    const format = Object.values(DOCUMENT_FORMATS).find((candidate) => candidate === extension(source.url));
    if (format !== undefined)
      return { format, name, source: { s3Location: { uri: source.url } }, ...context };
  }
  throw new InvalidMessageError(
    `Bedrock Converse takes documents as base64 bytes, plain text or s3:// locations; this document has a ${source.type} source. Download it and send it as base64.`,
  );
}

/**
 * Converse document names may hold only letters, digits, single spaces, hyphens, parentheses and square
 * brackets, and must be unique within a request: the title is cleaned and numbered.
 */
function documentName(title: string | undefined, number: number): string {
  const cleaned = (title ?? "")
    .replace(/[^A-Za-z0-9\s\-()[\]]/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 180);
  return cleaned.length > 0 ? `${cleaned} (${number})` : `document-${number}`;
}

function extension(url: string): string {
  const last = url.split("?")[0]?.split(".").at(-1) ?? "";
  return last.toLowerCase() === "jpg" ? "jpeg" : last.toLowerCase();
}

function toToolConfig(
  tools: ToolDefinition[] | undefined,
  choice: ToolChoice | undefined,
  messages: RequestMessage[],
): ToolConfiguration | undefined {
  const specs: Tool[] = [];
  for (const tool of tools ?? []) {
    specs.push({
      toolSpec: {
        name: tool.name,
        ...(tool.description === undefined || tool.description === ""
          ? {}
          : { description: tool.description }),
        inputSchema: { json: toDocumentValue(tool.inputSchema) },
      },
    });
    if (tool.cache_control) specs.push({ cachePoint: cachePoint(tool.cache_control) });
  }
  if (specs.length === 0) {
    // Converse rejects toolUse/toolResult blocks when no toolConfig is present (a summarising call with the
    // tools removed, for example). Declare the tools the history used, with an open schema.
    const used = new Set<string>();
    for (const message of messages) {
      for (const block of contentBlocks(message.content)) if (block.type === "tool_use") used.add(block.name);
    }
    const hasToolBlocks = messages.some((message) =>
      contentBlocks(message.content).some(
        (block) => block.type === "tool_use" || block.type === "tool_result",
      ),
    );
    if (!hasToolBlocks) return undefined;
    if (used.size === 0) used.add("tool");
    for (const name of used) {
      specs.push({ toolSpec: { name, inputSchema: { json: { type: "object" } } } });
    }
    return { tools: specs };
  }
  const config: ToolConfiguration = { tools: specs };
  // Converse has no "none" choice: the tools stay declared (history may reference them), no choice is sent.
  if (choice?.type === "auto") config.toolChoice = { auto: {} };
  else if (choice?.type === "any") config.toolChoice = { any: {} };
  else if (choice?.type === "tool") config.toolChoice = { tool: { name: choice.name } };
  return config;
}

/** Converse "document" values are JSON values; undefined is not one. */
function toDocumentValue(value: unknown): never {
  return (value === undefined ? {} : value) as never;
}
