import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectHeldReply } from "../__fixtures__/held-reply.ts";
import { type AnthropicFakeServer, startAnthropicFake } from "./anthropic-fake.ts";

let fake: AnthropicFakeServer;
beforeAll(async () => {
  fake = await startAnthropicFake();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
  fake.setContextLimit(undefined);
});

const BODY = {
  model: "claude-sonnet-4-6",
  max_tokens: 100,
  system: "sys",
  messages: [{ role: "user", content: "Weather in Paris?" }],
};

function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = { "x-api-key": "k" },
  signal?: AbortSignal,
) {
  return fetch(`${fake.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

describe("startAnthropicFake", () => {
  it("accepts x-api-key or Bearer auth and rejects a request with neither", async () => {
    expect((await post("/v1/messages", BODY)).status).toBe(200);
    expect((await post("/v1/messages", BODY, { authorization: "Bearer k" })).status).toBe(200);
    const denied = await post("/v1/messages", BODY, {});
    expect(denied.status).toBe(401);
    expect(((await denied.json()) as { error: { type: string } }).error.type).toBe("authentication_error");
  });

  it("streams every frame with an event line, and the frames assemble the scripted reply", async () => {
    fake.enqueue({
      kind: "reply",
      text: "Checking the weather.",
      toolCalls: [{ id: "toolu_1", name: "get_weather", input: { city: "Paris" } }],
    });
    const response = await post("/v1/messages", { ...BODY, stream: true });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const frames = (await response.text()).split("\n\n").filter(Boolean);
    for (const frame of frames) expect(frame).toMatch(/^event: [a-z_]+\ndata: \{/);
    const events = frames.map(
      (frame) => JSON.parse(frame.split("\ndata: ")[1] ?? "{}") as Record<string, unknown>,
    );
    expect(events.map((event) => event.type)).toContain("ping");
    const text = events
      .filter((event) => (event.delta as { type?: string } | undefined)?.type === "text_delta")
      .map((event) => (event.delta as { text: string }).text)
      .join("");
    expect(text).toBe("Checking the weather.");
    const json = events
      .filter((event) => (event.delta as { type?: string } | undefined)?.type === "input_json_delta")
      .map((event) => (event.delta as { partial_json: string }).partial_json)
      .join("");
    expect(JSON.parse(json)).toEqual({ city: "Paris" });
    expect(events.at(-2)).toMatchObject({ type: "message_delta", delta: { stop_reason: "tool_use" } });
    expect(fake.requests[0]?.operation).toBe("stream");
  });

  it("counts the same way on count_tokens and in usage, ignoring max_tokens", async () => {
    const counted = (await (
      await post("/v1/messages/count_tokens", { ...BODY, max_tokens: undefined })
    ).json()) as {
      input_tokens: number;
    };
    const message = (await (await post("/v1/messages", BODY)).json()) as { usage: { input_tokens: number } };
    expect(counted.input_tokens).toBe(fake.countTokens(BODY));
    expect(message.usage.input_tokens).toBe(counted.input_tokens);
  });

  it("answers over the context limit with the real wording and numbers", async () => {
    fake.setContextLimit(3);
    const response = await post("/v1/messages", BODY);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error).toEqual({
      type: "invalid_request_error",
      message: `prompt is too long: ${fake.countTokens(BODY)} tokens > 3 maximum`,
    });
  });

  it("sends retry-after on rate limits, 529 on overload, 413 request_too_large", async () => {
    fake.enqueue(
      { kind: "error", error: "rate_limit", retryAfterSeconds: 7 },
      { kind: "error", error: "overloaded" },
      { kind: "error", error: "request_too_large" },
    );
    const limited = await post("/v1/messages", BODY);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    expect((await post("/v1/messages", BODY)).status).toBe(529);
    const large = await post("/v1/messages", BODY);
    expect(large.status).toBe(413);
    expect(((await large.json()) as { error: { type: string } }).error.type).toBe("request_too_large");
  });

  it("emits a mid-stream error frame after the given number of events", async () => {
    fake.enqueue({ kind: "error", error: "overloaded", midStreamAfterEvents: 2 });
    const response = await post("/v1/messages", { ...BODY, stream: true });
    expect(response.status).toBe(200);
    const frames = (await response.text()).split("\n\n").filter(Boolean);
    expect(frames).toHaveLength(3);
    expect(frames[2]).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    );
  });

  it("serves registered models and 404s unknown ones", async () => {
    fake.setModel({ id: "claude-x", maxInputTokens: 1000, maxTokens: 10 });
    const known = await fetch(`${fake.url}/v1/models/claude-x`, { headers: { "x-api-key": "k" } });
    expect(await known.json()).toMatchObject({ id: "claude-x", max_input_tokens: 1000, max_tokens: 10 });
    const unknown = await fetch(`${fake.url}/v1/models/nope`, { headers: { "x-api-key": "k" } });
    expect(unknown.status).toBe(404);
  });

  it("reports a forced compaction block and applied edits", async () => {
    fake.enqueue({
      kind: "reply",
      text: "after",
      compaction: "short summary",
      appliedEdits: [{ type: "clear_tool_uses_20250919", cleared_tool_uses: 1, cleared_input_tokens: 10 }],
    });
    const message = (await (await post("/v1/messages", BODY)).json()) as {
      content: unknown[];
      context_management: unknown;
    };
    expect(message.content[0]).toEqual({ type: "compaction", content: "short summary" });
    expect(message.context_management).toEqual({
      applied_edits: [{ type: "clear_tool_uses_20250919", cleared_tool_uses: 1, cleared_input_tokens: 10 }],
    });
  });

  it("refuses a thinking block without its signature, as the API does, and takes no scripted step", async () => {
    fake.enqueue({ kind: "reply", text: "kept for the next request" });
    const unsigned = {
      ...BODY,
      messages: [
        { role: "user", content: "Weather in Paris?" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Look it up." },
            { type: "text", text: "Sunny." },
          ],
        },
        { role: "user", content: "And Rome?" },
      ],
    };
    const refused = await post("/v1/messages", unsigned);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(
      "messages.1.content.0.thinking.signature: Field required",
    );
    const signed = structuredClone(unsigned);
    const thinking = (signed.messages[1]!.content as { signature?: string }[])[0]!;
    thinking.signature = "sig_1";
    const answered = (await (await post("/v1/messages", signed)).json()) as { content: { text: string }[] };
    expect(answered.content[0]?.text).toBe("kept for the next request");
  });

  it("holds a reply until the test releases it, the request recorded meanwhile", async () => {
    await expectHeldReply(fake, async () => {
      const response = await post("/v1/messages", BODY);
      return ((await response.json()) as { content: { text: string }[] }).content[0]?.text;
    });
  });

  it("asks the responder when the script is empty: never for a count, never before a queued step", async () => {
    const seen: string[] = [];
    fake.setResponder((request) => {
      seen.push(request.operation);
      const text = JSON.stringify(request.body).includes("Weather") ? "From the responder." : undefined;
      return text === undefined ? undefined : { kind: "reply", text };
    });
    try {
      fake.enqueue({ kind: "reply", text: "From the script." });
      const first = (await (await post("/v1/messages", BODY)).json()) as { content: { text: string }[] };
      expect(first.content[0]?.text).toBe("From the script.");
      expect((await post("/v1/messages/count_tokens", BODY)).status).toBe(200);
      const second = (await (await post("/v1/messages", BODY)).json()) as { content: { text: string }[] };
      expect(second.content[0]?.text).toBe("From the responder.");
      const other = { ...BODY, messages: [{ role: "user", content: "Hi" }] };
      const third = (await (await post("/v1/messages", other)).json()) as { content: { text: string }[] };
      expect(third.content[0]?.text).toBe("Hello from the Anthropic fake.");
      expect(seen).toEqual(["messages", "messages"]);
    } finally {
      fake.setResponder(undefined);
    }
  });

  it("streams the first events of a reply and then hangs until the client cancels", async () => {
    fake.enqueue({ kind: "reply", text: "Never finished.", hangAfterEvents: 2 });
    const controller = new AbortController();
    const response = await post(
      "/v1/messages",
      { ...BODY, stream: true },
      { "x-api-key": "k" },
      controller.signal,
    );
    const reader = response.body!.getReader();
    let received = "";
    while (!received.includes("content_block_start")) {
      const { value } = await reader.read();
      received += new TextDecoder().decode(value);
    }
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
    expect(received).toContain("message_start");
    expect(received).not.toContain("message_stop");
  });
});
