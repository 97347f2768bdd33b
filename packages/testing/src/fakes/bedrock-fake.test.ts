import http2 from "node:http2";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectHeldReply } from "../__fixtures__/held-reply.ts";
import type { BedrockFakeServer } from "./bedrock-fake.ts";
import { startBedrockFake } from "./bedrock-fake.ts";

const SIGV4 = "AWS4-HMAC-SHA256 Credential=AKIDTEST/20260101/us-east-1/bedrock/aws4_request, Signature=abc";
const MODEL = "anthropic.claude-sonnet-4-6";
const codec = new EventStreamCodec(toUtf8, fromUtf8);

interface RawResponse {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: Buffer;
}

/** A bare HTTP/2 client: the fake is checked at the wire level, without the SDK in between. */
function post(url: string, path: string, body: unknown, authorization: string | null = SIGV4) {
  return new Promise<RawResponse>((resolve, reject) => {
    const session = http2.connect(url);
    session.on("error", reject);
    const headers: http2.OutgoingHttpHeaders = {
      ":method": "POST",
      ":path": path,
      "content-type": "application/json",
    };
    if (authorization !== null) headers.authorization = authorization;
    const stream = session.request(headers);
    let status = 0;
    let responseHeaders: http2.IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on("response", (incoming) => {
      status = Number(incoming[":status"]);
      responseHeaders = incoming;
    });
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      session.close();
      resolve({ status, headers: responseHeaders, body: Buffer.concat(chunks) });
    });
    stream.on("error", reject);
    stream.end(JSON.stringify(body));
  });
}

/** Splits an event-stream body into decoded messages (prelude length tells where each ends). */
function decodeFrames(body: Buffer) {
  const frames: { headers: Record<string, unknown>; payload: unknown }[] = [];
  let offset = 0;
  while (offset < body.length) {
    const length = body.readUInt32BE(offset);
    const message = codec.decode(body.subarray(offset, offset + length));
    const headers: Record<string, unknown> = {};
    for (const [name, header] of Object.entries(message.headers)) headers[name] = header.value;
    frames.push({ headers, payload: JSON.parse(toUtf8(message.body)) });
    offset += length;
  }
  return frames;
}

const conversation = { messages: [{ role: "user", content: [{ text: "Weather in Paris?" }] }] };

describe("startBedrockFake", () => {
  let fake: BedrockFakeServer;
  beforeAll(async () => {
    fake = await startBedrockFake();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
    fake.setContextLimit(undefined);
    fake.setCountTokensSupported(undefined);
  });

  it("serves Converse over h2c and records the decoded model id", async () => {
    fake.enqueue({ kind: "reply", text: "Sunny.", usage: { cacheReadInputTokens: 7 } });
    const response = await post(
      fake.url,
      `/model/${encodeURIComponent(`us.${MODEL}`)}/converse`,
      conversation,
    );
    expect(response.status).toBe(200);
    expect(response.headers["x-amzn-requestid"]).toBeTruthy();
    const body = JSON.parse(response.body.toString("utf8"));
    expect(body.output.message).toEqual({ role: "assistant", content: [{ text: "Sunny." }] });
    expect(body.stopReason).toBe("end_turn");
    expect(body.usage.inputTokens).toBe(fake.countTokens(conversation));
    expect(body.usage.cacheReadInputTokens).toBe(7);
    expect(fake.requests[0]?.path).toBe(`/model/us.${MODEL}/converse`);
    expect(fake.requests[0]?.operation).toBe("messages");
  });

  it("holds a reply until the test releases it, the request recorded meanwhile", async () => {
    await expectHeldReply(fake, async () => {
      const response = await post(fake.url, `/model/${encodeURIComponent(MODEL)}/converse`, conversation);
      return JSON.parse(response.body.toString("utf8")).output.message.content[0]?.text;
    });
  });

  it("streams binary event-stream frames in the real order, ending with metadata", async () => {
    fake.enqueue({
      kind: "reply",
      thinking: "Two steps.",
      text: "Checking.",
      toolCalls: [{ id: "tooluse_1", name: "get_weather", input: { city: "Paris" } }],
    });
    const response = await post(fake.url, `/model/${MODEL}/converse-stream`, conversation);
    expect(response.headers["content-type"]).toBe("application/vnd.amazon.eventstream");
    const frames = decodeFrames(response.body);
    expect(frames.every((frame) => frame.headers[":message-type"] === "event")).toBe(true);
    const types = frames.map((frame) => frame.headers[":event-type"]);
    expect(types[0]).toBe("messageStart");
    expect(types.slice(-2)).toEqual(["messageStop", "metadata"]);
    expect(frames.at(-2)?.payload).toEqual({ stopReason: "tool_use" });
    const toolStart = frames.find((frame) => frame.headers[":event-type"] === "contentBlockStart");
    expect(toolStart?.payload).toEqual({
      contentBlockIndex: 2,
      start: { toolUse: { toolUseId: "tooluse_1", name: "get_weather" } },
    });
    const toolInput = frames
      .filter((frame) => JSON.stringify(frame.payload).includes('"toolUse":{"input"'))
      .map((frame) => (frame.payload as { delta: { toolUse: { input: string } } }).delta.toolUse.input)
      .join("");
    expect(JSON.parse(toolInput)).toEqual({ city: "Paris" });
    const signature = frames.find((frame) => JSON.stringify(frame.payload).includes('"signature"'));
    expect(signature).toBeDefined();
  });

  it("answers errors with x-amzn-errortype and __type, status per kind", async () => {
    const cases = [
      ["rate_limit", 429, "ThrottlingException"],
      ["overloaded", 503, "ServiceUnavailableException"],
      ["server_error", 500, "InternalServerException"],
      ["prompt_too_long_generic", 400, "ValidationException"],
      ["authentication", 403, "AccessDeniedException"],
    ] as const;
    for (const [kind, status, name] of cases) {
      fake.enqueue({ kind: "error", error: kind });
      const response = await post(fake.url, `/model/${MODEL}/converse`, conversation);
      expect(response.status).toBe(status);
      expect(String(response.headers["x-amzn-errortype"]).split(":")[0]).toBe(name);
      expect(JSON.parse(response.body.toString("utf8")).__type).toBe(name);
    }
    fake.enqueueBedrock({
      kind: "bedrock-exception",
      name: "ModelNotReadyException",
      status: 429,
      message: "warming",
    });
    const notReady = await post(fake.url, `/model/${MODEL}/converse`, conversation);
    expect(notReady.status).toBe(429);
    expect(notReady.headers["x-amzn-errortype"]).toMatch(/^ModelNotReadyException:/);
  });

  it("rejects a request with no Authorization header, accepts SigV4 and bearer", async () => {
    const anonymous = await post(fake.url, `/model/${MODEL}/converse`, conversation, null);
    expect(anonymous.status).toBe(403);
    const bearer = await post(fake.url, `/model/${MODEL}/converse`, conversation, "Bearer api-key");
    expect(bearer.status).toBe(200);
  });

  it("sends a mid-stream exception frame after the requested number of events", async () => {
    fake.enqueue({
      kind: "error",
      error: "prompt_too_long",
      actualTokens: 210_000,
      limitTokens: 200_000,
      midStreamAfterEvents: 2,
    });
    const response = await post(fake.url, `/model/${MODEL}/converse-stream`, conversation);
    expect(response.status).toBe(200);
    const frames = decodeFrames(response.body);
    expect(frames).toHaveLength(3);
    expect(frames[2]?.headers[":message-type"]).toBe("exception");
    expect(frames[2]?.headers[":exception-type"]).toBe("validationException");
    expect(frames[2]?.payload).toEqual({
      message: "The model returned the following errors: prompt is too long: 210000 tokens > 200000 maximum",
    });
  });

  it("counts tokens for bare model ids and rejects cross-region ids like the real service", async () => {
    const body = { input: { converse: conversation } };
    const bare = await post(fake.url, `/model/${encodeURIComponent(MODEL)}/count-tokens`, body);
    expect(JSON.parse(bare.body.toString("utf8"))).toEqual({ inputTokens: fake.countTokens(conversation) });
    expect(fake.countTokens(body)).toBe(fake.countTokens(conversation));
    const prefixed = await post(
      fake.url,
      `/model/${encodeURIComponent(`global.${MODEL}`)}/count-tokens`,
      body,
    );
    expect(prefixed.status).toBe(400);
    expect(prefixed.body.toString("utf8")).toContain("doesn't support counting tokens");
  });

  it("counting never consumes a queued reply, but does consume a queued error", async () => {
    fake.enqueue({ kind: "reply", text: "for the model call" });
    const body = { input: { converse: conversation } };
    expect((await post(fake.url, `/model/${MODEL}/count-tokens`, body)).status).toBe(200);
    const reply = await post(fake.url, `/model/${MODEL}/converse`, conversation);
    expect(reply.body.toString("utf8")).toContain("for the model call");
    fake.enqueue({ kind: "error", error: "server_error" });
    expect((await post(fake.url, `/model/${MODEL}/count-tokens`, body)).status).toBe(500);
  });

  it("over the context limit: the real overflow text with its count, and the queued reply is kept", async () => {
    fake.setContextLimit(3);
    fake.enqueue({ kind: "reply", text: "after compaction" });
    const rejected = await post(fake.url, `/model/${MODEL}/converse`, conversation);
    expect(rejected.status).toBe(400);
    expect(JSON.parse(rejected.body.toString("utf8")).message).toBe(
      `The model returned the following errors: prompt is too long: ${fake.countTokens(conversation)} tokens > 3 maximum`,
    );
    fake.setContextLimit(undefined);
    const accepted = await post(fake.url, `/model/${MODEL}/converse`, conversation);
    expect(accepted.body.toString("utf8")).toContain("after compaction");
  });

  it("refuses reasoning without its signature (Converse and CountTokens) and takes no scripted step", async () => {
    fake.enqueue({ kind: "reply", text: "kept for the next request" });
    const reasoning = (signature?: string) => ({
      reasoningContent: { reasoningText: { text: "Look it up.", ...(signature ? { signature } : {}) } },
    });
    const conversation = (signature?: string) => ({
      messages: [
        { role: "user", content: [{ text: "Weather in Paris?" }] },
        { role: "assistant", content: [reasoning(signature), { text: "Sunny." }] },
        { role: "user", content: [{ text: "And Rome?" }] },
      ],
    });
    const refused = await post(fake.url, `/model/${MODEL}/converse`, conversation());
    expect(refused.status).toBe(400);
    expect(refused.headers["x-amzn-errortype"]).toContain("ValidationException");
    expect(refused.body.toString()).toContain(
      "messages.1.content.0.reasoningContent.reasoningText.signature",
    );
    const count = await post(fake.url, `/model/${MODEL}/count-tokens`, {
      input: { converse: conversation() },
    });
    expect(count.status).toBe(400);
    const answered = await post(fake.url, `/model/${MODEL}/converse`, conversation("sig_1"));
    expect(answered.status).toBe(200);
    expect(answered.body.toString()).toContain("kept for the next request");
  });
});
