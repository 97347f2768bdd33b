import {
  type ContentBlock,
  createMessage,
  type DocumentBlock,
  type ImageBlock,
  type Message,
  type TextBlock,
  type ToolResultBlock,
  type ToolResultContentBlock,
  type UnknownBlock,
} from "@unforget/core";
import type { ModelMessage } from "ai";
import { isRecord } from "./is-record.ts";
import {
  DENIED_TOOL_RESULT,
  isCacheControl,
  isString,
  MESSAGE_FLAGS,
  type MessageStash,
  mediaBlock,
  OPAQUE_MESSAGE,
  OPAQUE_PARTS,
  OUTPUT_ITEM_DATA,
  opaque,
  type Part,
  type PartStash,
  type ProviderOptions,
  pick,
  type Report,
  takeOptions,
  withExtras,
  withStash,
} from "./model-message-parts.ts";

function decodeText(part: Part): ContentBlock {
  const { value: cache, extras, rest } = takeOptions(part.providerOptions, "cacheControl", isCacheControl);
  // An Unforget block the AI SDK has no part for travelled as a placeholder text: it comes back whole.
  if (isRecord(extras?.unknown) && typeof extras.unknown.type === "string")
    return { type: "unknown", original: extras.unknown as UnknownBlock["original"] };
  const block: TextBlock = { type: "text", text: String(part.text) };
  if (cache) block.cache_control = cache;
  return withStash(withExtras(block, extras), {
    providerOptions: rest,
    extra: pick(part, ["type", "text", "providerOptions"]),
  });
}

function decodeMediaPart(part: Part, report: Report, role: string): ContentBlock {
  const { value: cache, extras, rest } = takeOptions(part.providerOptions, "cacheControl", isCacheControl);
  const isImage = part.type === "image";
  const stash: PartStash = {
    part: part.type,
    providerOptions: rest,
    extra: pick(part, ["type", isImage ? "image" : "data", "mediaType", "filename", "providerOptions"]),
    ...(typeof part.filename === "string" ? { filename: part.filename } : {}),
  };
  const mediaType = typeof part.mediaType === "string" ? part.mediaType : undefined;
  const block = mediaBlock(isImage ? part.image : part.data, mediaType, isImage, stash);
  if (!block) {
    report(
      `${role} part ${part.type} with unreadable data`,
      `a ${part.type} part whose data is neither bytes, base64, a URL nor a provider reference was kept as it is`,
    );
    return opaque(part);
  }
  if (cache) block.cache_control = cache;
  return withExtras(block, extras);
}

function decodeReasoning(part: Part): ContentBlock {
  const extra = pick(part, ["type", "text", "providerOptions"]);
  const redacted = takeOptions(part.providerOptions, "redactedData", isString);
  if (redacted.value !== undefined) {
    return withStash(withExtras({ type: "redacted_thinking", data: redacted.value }, redacted.extras), {
      providerOptions: redacted.rest,
      extra,
      ...(part.text ? { text: String(part.text) } : {}),
    });
  }
  const { value: signature, extras, rest } = takeOptions(part.providerOptions, "signature", isString);
  const block: ContentBlock = { type: "thinking", thinking: String(part.text) };
  if (signature !== undefined) block.signature = signature;
  return withStash(withExtras(block, extras), { providerOptions: rest, extra });
}

function decodeToolCall(part: Part): ContentBlock {
  if (part.providerExecuted === true) return opaque(part);
  const { value: cache, extras, rest } = takeOptions(part.providerOptions, "cacheControl", isCacheControl);
  const block: ContentBlock = {
    type: "tool_use",
    id: String(part.toolCallId),
    name: String(part.toolName),
    input: part.input,
  };
  if (cache) block.cache_control = cache;
  return withStash(withExtras(block, extras), {
    providerOptions: rest,
    extra: pick(part, ["type", "toolCallId", "toolName", "input", "providerOptions"]),
  });
}

/** One item of a `content` tool output as a tool-result block. */
function decodeOutputItem(item: unknown, report: Report): ToolResultContentBlock {
  if (!isRecord(item) || typeof item.type !== "string") {
    report("tool output item without a type", "a tool output item without a type was kept as it is");
    return withStash<TextBlock>({ type: "text", text: "[unreadable tool output item]" }, { extra: { item } });
  }
  const {
    value: cache,
    extras,
    rest: providerOptions,
  } = takeOptions(item.providerOptions, "cacheControl", isCacheControl);
  const finish = <B extends ToolResultContentBlock>(block: B): B => {
    if (cache) block.cache_control = cache;
    return withExtras(block, extras);
  };
  switch (item.type) {
    case "text":
      return finish(
        withStash<TextBlock>(
          { type: "text", text: String(item.text) },
          { providerOptions, extra: pick(item, ["type", "text", "providerOptions"]) },
        ),
      );
    default: {
      const field = OUTPUT_ITEM_DATA[item.type];
      if (field === undefined) break;
      const stash: PartStash = {
        part: item.type,
        providerOptions,
        extra: pick(item, ["type", field, "mediaType", "filename", "providerOptions"]),
        ...(typeof item.filename === "string" ? { filename: item.filename } : {}),
      };
      const mediaType = typeof item.mediaType === "string" ? item.mediaType : undefined;
      const image = item.type.startsWith("image");
      const block =
        field === "fileId" && typeof item.fileId === "string"
          ? withStash<DocumentBlock | ImageBlock>(
              image
                ? { type: "image", source: { type: "file", file_id: item.fileId } }
                : { type: "document", source: { type: "file", file_id: item.fileId } },
              { ...stash, kind: "id", mediaType: mediaType ?? null },
            )
          : mediaBlock(item[field], mediaType, image, stash);
      if (block) return finish(block);
    }
  }
  report(
    `tool output item ${item.type}`,
    `a tool output item of type ${item.type} was kept as it is and shown to the ladder as "[${item.type}]"`,
  );
  return withStash<TextBlock>({ type: "text", text: `[${item.type}]` }, { extra: { item } });
}

function decodeToolResult(part: Part, report: Report): ToolResultBlock {
  const { value: cache, extras, rest } = takeOptions(part.providerOptions, "cacheControl", isCacheControl);
  const output = isRecord(part.output) ? part.output : { type: "json", value: part.output ?? null };
  const stash: PartStash = {
    toolName: String(part.toolName),
    providerOptions: rest,
    extra: pick(part, ["type", "toolCallId", "toolName", "output", "providerOptions"]),
    outputProviderOptions: output.providerOptions as ProviderOptions | undefined,
  };
  const block: ToolResultBlock = { type: "tool_result", tool_use_id: String(part.toolCallId), content: "" };
  switch (output.type) {
    case "text":
    case "error-text":
      block.content = String(output.value);
      stash.outputExtra = pick(output, ["type", "value", "providerOptions"]);
      break;
    case "json":
    case "error-json":
      block.content = JSON.stringify(output.value ?? null);
      stash.output = output.type;
      stash.outputExtra = pick(output, ["type", "value", "providerOptions"]);
      break;
    case "execution-denied":
      block.content = typeof output.reason === "string" ? output.reason : DENIED_TOOL_RESULT;
      stash.output = "execution-denied";
      stash.reason = typeof output.reason === "string";
      stash.outputExtra = pick(output, ["type", "reason", "providerOptions"]);
      break;
    case "content":
      block.content = Array.isArray(output.value)
        ? output.value.map((item) => decodeOutputItem(item, report))
        : [];
      stash.output = "content";
      stash.outputExtra = pick(output, ["type", "value", "providerOptions"]);
      break;
    default:
      report(
        `tool output ${String(output.type)}`,
        `a tool output of type ${String(output.type)} was kept as it is`,
      );
      block.content = JSON.stringify(output);
      stash.extra = { ...stash.extra, output };
  }
  const { isError, ...blockExtras } = extras ?? {};
  if (
    output.type === "error-text" ||
    output.type === "error-json" ||
    output.type === "execution-denied" ||
    (output.type === "content" && isError === true)
  )
    block.is_error = true;
  if (cache) block.cache_control = cache;
  return withStash(withExtras(block, blockExtras), stash);
}

function decodePart(part: unknown, role: string, report: Report): ContentBlock {
  if (!isRecord(part) || typeof part.type !== "string") {
    report(`${role} part without a type`, `a ${role} part without a type was kept as it is`);
    return opaque(part);
  }
  const typed = part as Part;
  switch (typed.type) {
    case "text":
      if (typeof typed.text === "string") return decodeText(typed);
      break;
    case "image":
    case "file":
      return decodeMediaPart(typed, report, role);
    case "reasoning":
      if (typeof typed.text === "string") return decodeReasoning(typed);
      break;
    case "tool-call":
      if (typeof typed.toolCallId === "string" && typeof typed.toolName === "string")
        return decodeToolCall(typed);
      break;
    case "tool-result":
      // A result in an assistant message is a provider-executed tool's: it travels with its call, opaque.
      if (role === "tool" && typeof typed.toolCallId === "string") return decodeToolResult(typed, report);
      if (role === "assistant") return opaque(typed);
      break;
    default:
      if (OPAQUE_PARTS.has(typed.type)) return opaque(typed);
  }
  report(`${role} part ${typed.type}`, `a ${role} message part of type ${typed.type} was kept as it is`);
  return opaque(typed);
}

/** One AI SDK message as an Unforget message (a fresh id; the stash in `metadata.aiSdk` and on the blocks). */
export function decodeModelMessage(message: ModelMessage, report: Report = () => {}): Message {
  const raw = message as unknown;
  const role = isRecord(raw) ? raw.role : undefined;
  const content = isRecord(raw) ? raw.content : undefined;
  const known = role === "system" || role === "user" || role === "assistant" || role === "tool";
  const wellFormed =
    known && (typeof content === "string" ? role !== "tool" : Array.isArray(content) && role !== "system");
  if (!isRecord(raw) || !wellFormed) {
    const shape = known
      ? `${String(role)} message with content ${typeof content}`
      : `message role ${String(role)}`;
    report(shape, `a ${shape} was kept as it is`);
    return createMessage("user", [{ type: "unknown", original: { type: OPAQUE_MESSAGE, message: raw } }], {
      isMeta: true,
    });
  }
  const stash: MessageStash = {};
  if (role === "system" || role === "tool") stash.role = role;
  const options = takeOptions(raw.providerOptions);
  if (options.rest !== undefined) stash.providerOptions = options.rest;
  const extra = pick(raw, ["role", "content", "providerOptions"]);
  if (extra) stash.extra = extra;
  let blocks: ContentBlock[];
  if (typeof content === "string") {
    stash.text = true;
    blocks = [{ type: "text", text: content }];
  } else {
    blocks = (content as unknown[]).map((part) => decodePart(part, role, report));
  }
  const init: Parameters<typeof createMessage>[2] = {
    ...(Object.keys(stash).length > 0 ? { metadata: { aiSdk: stash } } : {}),
    ...(role === "system" ? { isMeta: true } : {}),
  };
  // What only Unforget marks on a message (a meta message, an observation, a summary) came in `unforget`.
  for (const flag of MESSAGE_FLAGS) if (options.extras?.[flag] === true) init[flag] = true;
  return createMessage(role === "assistant" ? "assistant" : "user", blocks, init);
}
