import {
  AIMessage,
  AIMessageChunk,
  type BaseMessage,
  ChatMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import fc from "fast-check";

/**
 * LangChain messages of every shape the adapter handles: string and block content; LangChain's standard blocks
 * (text with annotations, image and file by url, base64 or file id, reasoning, tool_call) and the providers'
 * own (Anthropic image with source, thinking with signature, redacted thinking, tool_use, cache_control);
 * image_url as a string, an object with detail, or a data URL; tool calls in content, in `tool_calls`, or both,
 * with and without ids; invalid tool calls; usage in `usage_metadata` and `response_metadata`; tool messages
 * with status, artifact and rich content; chunks; and shapes the adapter does not know.
 */

const text = fc.string({ maxLength: 30 });
const base64 = fc
  .uint8Array({ minLength: 1, maxLength: 9 })
  .map((bytes) => Buffer.from(bytes).toString("base64"));
const json = fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown);
const maybe = <T>(arbitrary: fc.Arbitrary<T>, freq = 2) => fc.option(arbitrary, { nil: undefined, freq });

function defined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as T;
}

const textBlock = fc
  .record({
    text,
    cache: maybe(fc.constant({ type: "ephemeral" })),
    index: maybe(fc.nat(5)),
    annotations: maybe(fc.constant([{ type: "citation", url: "https://example.com" }])),
  })
  .map(({ text: value, cache, index, annotations }) =>
    defined({ type: "text", text: value, cache_control: cache, index, annotations }),
  );

const mediaBlock = fc.oneof(
  fc.constant({ type: "image_url", image_url: "https://example.com/a.png" }),
  fc.constant({ type: "image_url", image_url: { url: "https://example.com/b.png", detail: "low" } }),
  base64.map((data) => ({ type: "image_url", image_url: `data:image/png;base64,${data}` })),
  fc.constant({ type: "image", url: "https://example.com/c.png" }),
  base64.map((data) => ({ type: "image", data, mimeType: "image/jpeg" })),
  fc.constant({ type: "image", fileId: "file_1", mimeType: "image/png" }),
  base64.map((data) => ({ type: "image", source_type: "base64", data, mime_type: "image/png" })),
  base64.map((data) => ({
    type: "file",
    data,
    mimeType: "application/pdf",
    metadata: { filename: "a.pdf" },
  })),
  base64.map((data) => ({ type: "image", source: { type: "base64", media_type: "image/png", data } })),
  fc.constant({ type: "document", source: { type: "url", url: "https://example.com/d.pdf" }, title: "d" }),
);

const unknownBlock = fc.constantFrom(
  { type: "mystery", payload: 1 },
  { type: "non_standard", value: { kind: "x" } },
  { type: "audio", url: "https://example.com/e.wav" },
);

const toolName = fc.constantFrom("read", "bash");
const args = fc.dictionary(fc.constantFrom("path", "query"), json, { maxKeys: 2 });

let counter = 0;

const humanMessage = fc
  .record({
    content: fc.oneof(
      text,
      fc.array(fc.oneof(textBlock, mediaBlock, unknownBlock), { minLength: 1, maxLength: 3 }),
    ),
    id: maybe(fc.constant("")),
    name: maybe(fc.constantFrom("alice", "bob")),
    kwargs: maybe(fc.constant({ source: "ui" })),
  })
  .map(({ content, id, name, kwargs }) => {
    const fields = defined({
      content,
      id: id === undefined ? undefined : `human_${++counter}`,
      name,
      additional_kwargs: kwargs,
    });
    return new HumanMessage(fields as never);
  });

/** An assistant turn, and the ids of the tool calls it made (for the tool messages that answer them). */
const aiTurn = fc
  .record({
    text: maybe(text, 1),
    thinking: maybe(fc.constantFrom("thinking", "reasoning", "redacted")),
    calls: fc.array(
      fc.record({
        name: toolName,
        args,
        where: fc.constantFrom("calls", "tool_use", "tool_call"),
        noId: fc.boolean(),
        typed: fc.boolean(),
      }),
      {
        maxLength: 3,
      },
    ),
    invalid: fc.boolean(),
    usage: maybe(fc.constantFrom("metadata", "anthropic", "openai")),
    chunk: fc.boolean(),
    stringContent: fc.boolean(),
    unknown: maybe(unknownBlock, 4),
  })
  .map((spec) => {
    const content: Record<string, unknown>[] = [];
    if (spec.thinking === "thinking") content.push({ type: "thinking", thinking: "hmm", signature: "sig" });
    if (spec.thinking === "reasoning") content.push({ type: "reasoning", reasoning: "let me see" });
    if (spec.thinking === "redacted") content.push({ type: "redacted_thinking", data: "cmVk" });
    if (spec.text !== undefined) content.push({ type: "text", text: spec.text });
    if (spec.unknown) content.push(spec.unknown);
    const toolCalls: Record<string, unknown>[] = [];
    const ids: string[] = [];
    for (const call of spec.calls) {
      const id = `call_${++counter}`;
      ids.push(id);
      if (call.where === "tool_use")
        content.push({ type: "tool_use", id, name: call.name, input: call.args });
      if (call.where === "tool_call")
        content.push({ type: "tool_call", id, name: call.name, args: call.args });
      const toolCall: Record<string, unknown> = { name: call.name, args: call.args };
      if (!call.noId || call.where !== "calls") toolCall.id = id;
      if (call.typed) toolCall.type = "tool_call";
      toolCalls.push(toolCall);
    }
    const onlyText = content.length === (spec.text === undefined ? 0 : 1) && spec.unknown === undefined;
    const fields: Record<string, unknown> = {
      content: spec.stringContent && onlyText ? (spec.text ?? "") : content,
      tool_calls: toolCalls,
      id: `ai_${++counter}`,
    };
    if (spec.invalid)
      fields.invalid_tool_calls = [
        { name: "bash", args: "{oops", id: "bad_1", error: "not JSON", type: "invalid_tool_call" },
      ];
    if (spec.usage === "metadata")
      fields.usage_metadata = {
        input_tokens: 1200,
        output_tokens: 40,
        total_tokens: 1240,
        input_token_details: { cache_read: 1000, cache_creation: 100 },
      };
    if (spec.usage === "anthropic")
      fields.response_metadata = {
        id: "msg_1",
        model: "claude-sonnet-4-5",
        usage: { input_tokens: 10, output_tokens: 5 },
      };
    if (spec.usage === "openai")
      fields.response_metadata = {
        model_name: "gpt-5",
        tokenUsage: { promptTokens: 9, completionTokens: 3 },
      };
    // Calls without an id are answered by no tool message (nothing could name them).
    const answered = ids.filter(
      (_, index) => !spec.calls[index]!.noId || spec.calls[index]!.where !== "calls",
    );
    return {
      message: spec.chunk ? new AIMessageChunk(fields as never) : new AIMessage(fields as never),
      ids: answered,
    };
  });

const toolMessage = (id: string) =>
  fc
    .record({
      content: fc.oneof(text, fc.array(fc.oneof(textBlock, mediaBlock, unknownBlock), { maxLength: 2 })),
      status: maybe(fc.constantFrom("success", "error")),
      artifact: maybe(json),
      name: maybe(toolName),
    })
    .map(
      ({ content, status, artifact, name }) =>
        new ToolMessage(
          defined({ content, tool_call_id: id, status, artifact, name, id: `tool_${++counter}` }) as never,
        ),
    );

const round = fc
  .tuple(humanMessage, aiTurn)
  .chain(([human, ai]) =>
    fc
      .tuple(...ai.ids.map(toolMessage))
      .chain((tools) =>
        fc
          .option(
            fc.constantFrom<BaseMessage>(
              new SystemMessage("Be brief."),
              new ChatMessage({ content: "note", role: "critic" }),
            ),
            { nil: undefined, freq: 6 },
          )
          .map((odd) => [human, ai.message, ...tools, ...(odd ? [odd] : [])] as BaseMessage[]),
      ),
  );

/** A conversation of one to four rounds. */
export const arbitraryLangChainMessages = fc
  .array(round, { minLength: 1, maxLength: 4 })
  .map((rounds) => rounds.flat());
