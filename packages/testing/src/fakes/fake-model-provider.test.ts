import {
  AbortedError,
  type ModelRequest,
  type ModelStreamEvent,
  PromptTooLongError,
  ProviderRequestError,
} from "@unforget/core";
import { describe, expect, it } from "vitest";
import { expectHeldReply } from "../__fixtures__/held-reply.ts";
import { createFakeModelProvider } from "./fake-model-provider.ts";

const request = (text: string): ModelRequest => ({
  model: "claude-sonnet-4-6",
  maxTokens: 100,
  messages: [{ role: "user", content: [{ type: "text", text }] }],
});

describe("createFakeModelProvider", () => {
  it("answers with the scripted replies in order, then the default, and records a copy of each request", async () => {
    const provider = createFakeModelProvider();
    provider.enqueue(
      { kind: "reply", text: "first" },
      { kind: "reply", toolCalls: [{ name: "lookup", input: { q: "x" } }] },
    );
    const sent = request("hello");
    const first = await provider.createMessage(sent);
    sent.messages.push({ role: "assistant", content: [{ type: "text", text: "added later" }] });
    const second = await provider.createMessage(sent);
    const third = await provider.createMessage(request("again"));
    expect(first.content).toEqual([{ type: "text", text: "first" }]);
    expect(first.stopReason).toBe("end_turn");
    expect(second.content).toEqual([
      { type: "tool_use", id: "toolu_fake_1", name: "lookup", input: { q: "x" } },
    ]);
    expect(second.stopReason).toBe("tool_use");
    expect(third.content).toEqual([{ type: "text", text: "Hello from the fake provider." }]);
    // The first request is recorded as it was sent, not as the caller's array became.
    const bodies = provider.requests.map((recorded) => recorded.body as ModelRequest);
    expect(bodies.map((body) => body.messages.length)).toEqual([1, 2, 1]);
    expect(provider.requests.map((recorded) => recorded.operation)).toEqual([
      "messages",
      "messages",
      "messages",
    ]);
  });

  it("holds a reply until the test releases it, the request recorded meanwhile", async () => {
    const provider = createFakeModelProvider();
    await expectHeldReply(provider, async () => {
      const [block] = (await provider.createMessage(request("hello"))).content;
      return block?.type === "text" ? block.text : undefined;
    });
  });

  it("maps scripted errors to the typed errors a real provider throws", async () => {
    const provider = createFakeModelProvider({ providerId: "fake-x" });
    provider.enqueue(
      { kind: "error", error: "authentication" },
      { kind: "error", error: "prompt_too_long", actualTokens: 210_000, limitTokens: 200_000 },
      { kind: "error", error: "overloaded" },
    );
    const auth = await provider.createMessage(request("a")).catch((error: unknown) => error);
    expect(auth).toBeInstanceOf(ProviderRequestError);
    expect(auth).toMatchObject({ providerId: "fake-x", status: 401, retryable: false });
    const tooLong = await provider.createMessage(request("b")).catch((error: unknown) => error);
    expect(tooLong).toBeInstanceOf(PromptTooLongError);
    expect((tooLong as PromptTooLongError).tokenGap).toBe(10_000);
    expect(await provider.createMessage(request("c")).catch((error: unknown) => error)).toMatchObject({
      status: 529,
      retryable: true,
    });
  });

  it("overflows past its context limit, and counting consumes no scripted reply", async () => {
    const provider = createFakeModelProvider({ contextLimit: 10 });
    provider.enqueue({ kind: "reply", text: "kept for the model call" });
    const counted = await provider.countTokens(request("a fairly long question"));
    expect(counted.method).toBe("native");
    await expect(provider.createMessage(request("a fairly long question"))).rejects.toBeInstanceOf(
      PromptTooLongError,
    );
    provider.setContextLimit(undefined);
    expect((await provider.createMessage(request("q"))).content).toEqual([
      { type: "text", text: "kept for the model call" },
    ]);
  });

  it("streams the events of the scripted reply, assembling to the final response", async () => {
    const provider = createFakeModelProvider();
    provider.enqueue({
      kind: "reply",
      thinking: "hmm",
      text: "done",
      toolCalls: [{ name: "t", input: { a: 1 } }],
    });
    const stream = provider.streamMessage(request("go"));
    const events: ModelStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((event) => event.type)).toEqual([
      "message_start",
      "block_start",
      "thinking_delta",
      "signature_delta",
      "block_stop",
      "block_start",
      "text_delta",
      "block_stop",
      "block_start",
      "tool_input_delta",
      "block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect((await stream.finalResponse()).content.map((block) => block.type)).toEqual([
      "thinking",
      "text",
      "tool_use",
    ]);
  });

  it("hangs until aborted, and holds calls at a gate until released", async () => {
    const provider = createFakeModelProvider();
    provider.enqueue({ kind: "hang" });
    const controller = new AbortController();
    const hanging = provider.createMessage(request("wait"), { signal: controller.signal });
    controller.abort();
    await expect(hanging).rejects.toBeInstanceOf(AbortedError);

    provider.enqueue({ kind: "reply", text: "after the gate" });
    const gate = provider.hold();
    let settled = false;
    const held = provider.createMessage(request("held")).then((response) => {
      settled = true;
      return response;
    });
    await gate.reached;
    expect(settled).toBe(false);
    gate.release();
    expect((await held).content).toEqual([{ type: "text", text: "after the gate" }]);
  });
});
