import type { ModelMessage } from "ai";
import fc from "fast-check";

/**
 * AI SDK messages of every shape the adapter handles, in the forms the AI SDK 6 and 7 accept: text, images and
 * files given as base64, bytes, Buffers, URLs, URL strings, tagged data and provider references; reasoning with
 * Anthropic signatures and redacted data; tool calls (also provider-executed); every tool output type; approval
 * parts; provider options (Anthropic cache control beside other keys); and shapes the adapter does not know.
 */

const text = fc.string({ maxLength: 40 });
const base64 = fc.uint8Array({ maxLength: 12 }).map((bytes) => Buffer.from(bytes).toString("base64"));
const json = fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown);

const providerOptions = fc.option(
  fc.constantFrom<Record<string, Record<string, unknown>>>(
    { anthropic: { cacheControl: { type: "ephemeral" } } },
    { anthropic: { cacheControl: { type: "ephemeral", ttl: "1h" }, citations: { enabled: true } } },
    { anthropic: { cacheControl: { type: "persistent" } } },
    { bedrock: { cachePoint: { type: "default" } } },
    { openai: { imageDetail: "low" }, anthropic: { cacheControl: { type: "ephemeral" } } },
    {},
  ),
  { nil: undefined },
);

/** Adds the field only when the value is defined (the AI SDK's own objects never carry `undefined` fields). */
function withOptional<T extends Record<string, unknown>>(base: T, extra: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) out[key] = value;
  return out as T;
}

const bytes = fc.uint8Array({ minLength: 1, maxLength: 12 });
const bareData = fc.oneof(
  base64,
  bytes,
  bytes.map((value) => Buffer.from(value)),
  bytes.map((value) => value.slice().buffer),
  fc.constant(new URL("https://example.com/a.png")),
  fc.constant("https://example.com/b.pdf"),
  fc.constant({ anthropic: "file_011", openai: "file-abc" }),
);
const taggedData = fc.oneof(
  base64.map((data) => ({ type: "data", data })),
  bytes.map((data) => ({ type: "data", data })),
  fc.constant({ type: "url", url: new URL("https://example.com/c.pdf") }),
  fc.constant({ type: "reference", reference: { anthropic: "file_022" } }),
  text.map((value) => ({ type: "text", text: value })),
);

const textPart = fc
  .record({ text, providerOptions })
  .map(({ text: value, providerOptions: options }) =>
    withOptional({ type: "text", text: value }, { providerOptions: options }),
  );

const imagePart = fc
  .record({
    image: bareData,
    mediaType: fc.option(fc.constantFrom("image/png", "image/jpeg"), { nil: undefined }),
    providerOptions,
  })
  .map(({ image, mediaType, providerOptions: options }) =>
    withOptional({ type: "image", image }, { mediaType, providerOptions: options }),
  );

const filePart = fc
  .record({
    data: fc.oneof(bareData, taggedData),
    mediaType: fc.constantFrom("application/pdf", "image/png", "text/plain", "image"),
    filename: fc.option(fc.constantFrom("report.pdf", "notes.txt"), { nil: undefined }),
    providerOptions,
  })
  .map(({ data, mediaType, filename, providerOptions: options }) =>
    withOptional({ type: "file", data, mediaType }, { filename, providerOptions: options }),
  );

const reasoningPart = fc
  .record({
    text,
    providerOptions: fc.option(
      fc.constantFrom<Record<string, Record<string, unknown>>>(
        { anthropic: { signature: "sig_abc" } },
        { anthropic: { redactedData: "cmVkYWN0ZWQ=" } },
        { bedrock: { signature: "bsig" } },
        { anthropic: { signature: "s", other: true }, google: { thoughtSignature: "t" } },
      ),
      { nil: undefined },
    ),
  })
  .map(({ text: value, providerOptions: options }) =>
    withOptional({ type: "reasoning", text: value }, { providerOptions: options }),
  );

const toolName = fc.constantFrom("read", "bash", "search");

const toolCallPart = (id: string) =>
  fc
    .record({
      toolName,
      input: fc.dictionary(fc.constantFrom("path", "query", "limit"), json, { maxKeys: 3 }),
      providerOptions,
      providerExecuted: fc.option(fc.constant(true), { nil: undefined, freq: 4 }),
    })
    .map(({ toolName: name, input, providerOptions: options, providerExecuted }) =>
      withOptional(
        { type: "tool-call", toolCallId: id, toolName: name, input },
        {
          providerOptions: options,
          providerExecuted,
        },
      ),
    );

const outputItem = fc.oneof(
  text.map((value) => ({ type: "text", text: value })),
  base64.map((data) => ({ type: "image-data", data, mediaType: "image/png" })),
  base64.map((data) => ({ type: "file-data", data, mediaType: "application/pdf", filename: "a.pdf" })),
  fc.constant({ type: "file-url", url: "https://example.com/d.pdf" }),
  fc.constant({ type: "image-url", url: "https://example.com/e.png" }),
  fc.constant({ type: "file-id", fileId: "file_033" }),
  fc.constant({ type: "image-file-id", fileId: { anthropic: "file_044" } }),
  taggedData.map((data) => ({ type: "file", data, mediaType: "image/png" })),
  fc.constant({ type: "custom", providerOptions: { anthropic: { type: "search_result" } } }),
);

const output = fc.oneof(
  text.map((value) => ({ type: "text", value })),
  json.map((value) => ({ type: "json", value })),
  text.map((value) => ({ type: "error-text", value })),
  json.map((value) => ({ type: "error-json", value })),
  fc.option(text, { nil: undefined }).map((reason) => withOptional({ type: "execution-denied" }, { reason })),
  fc.array(outputItem, { maxLength: 3 }).map((value) => ({ type: "content", value })),
  text.map((value) => ({ type: "text", value, providerOptions: { openai: { detail: "x" } } })),
);

const toolResultPart = (id: string) =>
  fc
    .record({ toolName, output, providerOptions })
    .map(({ toolName: name, output: value, providerOptions: options }) =>
      withOptional(
        { type: "tool-result", toolCallId: id, toolName: name, output: value },
        {
          providerOptions: options,
        },
      ),
    );

const approvalRequest = (id: string) =>
  fc.constant({ type: "tool-approval-request", approvalId: `approval_${id}`, toolCallId: id });
const approvalResponse = (id: string) =>
  fc
    .boolean()
    .map((approved) => ({ type: "tool-approval-response", approvalId: `approval_${id}`, approved }));

const unknownPart = fc.constantFrom(
  { type: "mystery", payload: { a: 1 } },
  { type: "source", sourceType: "url", id: "src_1", url: "https://example.com" },
);

const messageOptions = fc.option(
  fc.constantFrom<Record<string, Record<string, unknown>>>(
    { anthropic: { cacheControl: { type: "ephemeral" } } },
    { bedrock: { cachePoint: { type: "default" } } },
  ),
  { nil: undefined, freq: 3 },
);

let toolCounter = 0;

/** A round: a user turn, an assistant turn (maybe with tool calls), then the tool message answering them. */
const round = fc
  .record({
    system: fc.option(text, { nil: undefined, freq: 6 }),
    user: fc.oneof(text, fc.array(fc.oneof(textPart, imagePart, filePart), { minLength: 1, maxLength: 3 })),
    userOptions: messageOptions,
    thinking: fc.array(reasoningPart, { maxLength: 2 }),
    assistant: fc.oneof(text, fc.array(fc.oneof(textPart, filePart, unknownPart), { maxLength: 2 })),
    calls: fc.integer({ min: 0, max: 3 }),
    approval: fc.boolean(),
    odd: fc.option(
      fc.constantFrom<unknown>(
        { role: "developer", content: "be brief" },
        { role: "user", content: 42 },
        { role: "tool", content: "not parts" },
      ),
      { nil: undefined, freq: 8 },
    ),
  })
  .chain((spec) => {
    const ids = Array.from({ length: spec.calls }, () => `call_${++toolCounter}`);
    return fc
      .record({
        calls: fc.tuple(...ids.map(toolCallPart)),
        results: fc.tuple(...ids.map(toolResultPart)),
        approvalRequest: ids[0] && spec.approval ? approvalRequest(ids[0]) : fc.constant(undefined),
        approvalResponse: ids[0] && spec.approval ? approvalResponse(ids[0]) : fc.constant(undefined),
      })
      .map((parts) => {
        const messages: unknown[] = [];
        if (spec.system !== undefined) messages.push({ role: "system", content: spec.system });
        messages.push(
          withOptional({ role: "user", content: spec.user }, { providerOptions: spec.userOptions }),
        );
        const assistantParts =
          typeof spec.assistant === "string" ? [{ type: "text", text: spec.assistant }] : spec.assistant;
        const content =
          spec.thinking.length === 0 && parts.calls.length === 0 && typeof spec.assistant === "string"
            ? spec.assistant
            : [
                ...spec.thinking,
                ...assistantParts,
                ...parts.calls,
                ...(parts.approvalRequest ? [parts.approvalRequest] : []),
              ];
        // A provider-executed call's result comes back in the assistant message itself.
        const executed = new Set(
          parts.calls.filter((call) => "providerExecuted" in call).map((call) => call.toolCallId),
        );
        const serverResults = parts.results.filter((result) => executed.has(result.toolCallId));
        const clientResults = parts.results.filter((result) => !executed.has(result.toolCallId));
        messages.push({
          role: "assistant",
          content: Array.isArray(content) ? [...content, ...serverResults] : content,
        });
        if (clientResults.length > 0)
          messages.push({
            role: "tool",
            content: [...clientResults, ...(parts.approvalResponse ? [parts.approvalResponse] : [])],
          });
        if (spec.odd !== undefined) messages.push(spec.odd);
        return messages;
      });
  });

/** A conversation of one to five rounds. */
export const arbitraryModelMessages = fc
  .array(round, { minLength: 1, maxLength: 5 })
  .map((rounds) => rounds.flat() as ModelMessage[]);
