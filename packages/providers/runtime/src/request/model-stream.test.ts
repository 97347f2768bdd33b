import {
  createUsage,
  InvalidOperationError,
  type ModelStreamEvent,
  PromptTooLongError,
} from "@unforget/core";
import { describe, expect, it } from "vitest";
import { createModelStream } from "./model-stream.ts";

const events: ModelStreamEvent[] = [
  {
    type: "message_start",
    id: "r1",
    model: "m",
    usage: createUsage({ inputTokens: 10, cacheReadInputTokens: 5 }),
  },
  { type: "block_start", index: 0, block: { type: "thinking", thinking: "" } },
  { type: "thinking_delta", index: 0, thinking: "hmm" },
  { type: "signature_delta", index: 0, signature: "sig" },
  { type: "block_stop", index: 0 },
  { type: "block_start", index: 1, block: { type: "text", text: "" } },
  { type: "text_delta", index: 1, text: "Hel" },
  { type: "text_delta", index: 1, text: "lo" },
  { type: "block_stop", index: 1 },
  { type: "block_start", index: 2, block: { type: "tool_use", id: "t1", name: "Read", input: {} } },
  { type: "tool_input_delta", index: 2, partialJson: '{"path":' },
  { type: "tool_input_delta", index: 2, partialJson: '"/a"}' },
  { type: "block_stop", index: 2 },
  { type: "message_delta", stopReason: "tool_use", rawStopReason: "tool_use", usage: { outputTokens: 7 } },
  { type: "message_stop" },
];

async function* from(list: ModelStreamEvent[], error?: unknown): AsyncGenerator<ModelStreamEvent> {
  for (const event of list) yield event;
  if (error) throw error;
}

describe("createModelStream", () => {
  it("assembles the final response from events", async () => {
    const response = await createModelStream(() => from(events)).finalResponse();
    expect(response).toEqual({
      id: "r1",
      model: "m",
      role: "assistant",
      content: [
        { type: "thinking", thinking: "hmm", signature: "sig" },
        { type: "text", text: "Hello" },
        { type: "tool_use", id: "t1", name: "Read", input: { path: "/a" } },
      ],
      stopReason: "tool_use",
      rawStopReason: "tool_use",
      usage: { inputTokens: 10, outputTokens: 7, cacheCreationInputTokens: 0, cacheReadInputTokens: 5 },
    });
  });

  it("yields every event once to an iterator and still resolves finalResponse", async () => {
    const stream = createModelStream(() => from(events));
    const seen: string[] = [];
    for await (const event of stream) seen.push(event.type);
    expect(seen).toHaveLength(events.length);
    expect((await stream.finalResponse()).content).toHaveLength(3);
    expect(() => stream[Symbol.asyncIterator]()).toThrow(InvalidOperationError);
  });

  it("surfaces a mid-stream error to both the iterator and finalResponse", async () => {
    const failure = new PromptTooLongError("prompt is too long", { actualTokens: 10, limitTokens: 5 });
    const stream = createModelStream(() => from(events.slice(0, 3), failure));
    await expect(stream.finalResponse()).rejects.toBe(failure);
    const iterated = createModelStream(() => from(events.slice(0, 3), failure));
    await expect(
      (async () => {
        for await (const _ of iterated) {
          // consume
        }
      })(),
    ).rejects.toBe(failure);
    await expect(iterated.finalResponse()).rejects.toBe(failure);
  });

  it("keeps unparseable tool input instead of dropping it", async () => {
    const broken: ModelStreamEvent[] = [
      events[0]!,
      { type: "block_start", index: 0, block: { type: "tool_use", id: "t", name: "x", input: {} } },
      { type: "tool_input_delta", index: 0, partialJson: '{"a":' },
      { type: "message_stop" },
    ];
    const response = await createModelStream(() => from(broken)).finalResponse();
    expect(response.content[0]).toMatchObject({ type: "tool_use", input: { _raw: '{"a":' } });
  });
});
