import { join } from "node:path";
import { sampleCorpus } from "@unforget/testing/corpus";
import { describe, expect, it } from "vitest";
import { recordedResponse, replayRecordedStream } from "./__fixtures__/recorded-stream.ts";
import {
  AnthropicStreamTranslator,
  appliedEditsFromWire,
  contentBlockFromWire,
  stopReasonFromWire,
  usageFromWire,
} from "./anthropic-stream.ts";

const fixtures = join(sampleCorpus().dir, "api-fixtures");
const replay = (name: string) => replayRecordedStream(fixtures, name);

describe("recorded-stream shapes of the Anthropic API (sample corpus)", () => {
  it("keeps the passes of a server compaction, the cache TTL split and deleted cache tokens in the usage", () => {
    const { raw, response } = replay("anthropic-compaction.sample");
    const delta = [...raw].reverse().find((event) => event.type === "message_delta") as {
      usage?: { iterations?: unknown[] };
    };
    expect(delta.usage?.iterations?.length).toBeGreaterThan(0);
    expect(response.usage.iterations?.map((pass) => pass.type)).toContain("compaction");
    const recorded = recordedResponse(fixtures, "anthropic-compaction.sample");
    const usage = usageFromWire(recorded.usage);
    expect(usage.iterations).toEqual([
      {
        type: "compaction",
        inputTokens: 48_210,
        outputTokens: 410,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 0,
      },
      {
        type: "message",
        inputTokens: 530,
        outputTokens: 64,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 0,
      },
    ]);
    expect(usage.cacheCreation).toEqual({ ephemeral5mInputTokens: 0, ephemeral1hInputTokens: 0 });
  });

  it("server compaction: the compaction block is rebuilt from its deltas and kept as an UnknownBlock", () => {
    const { raw, response } = replay("anthropic-compaction.sample");
    const summary = raw
      .filter((event) => event.type === "content_block_delta" && event.index === 0)
      .map((event) => (event.delta as { content: string }).content)
      .join("");
    expect(summary.length).toBeGreaterThan(100);
    expect(response.content[0]).toEqual({
      type: "unknown",
      original: { type: "compaction", content: summary },
    });
    expect(response.content[1]?.type).toBe("text");
    expect(response.id).toBe("msg_sample_compaction_stream");
    // message_delta restates input usage after compaction: 530 input tokens, not the 48 210 of message_start.
    expect(response.usage).toMatchObject({
      inputTokens: 530,
      outputTokens: 64,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 0,
    });
    expect(response.stopReason).toBe("end_turn");
    expect(response.appliedContextEdits).toEqual([]);
  });

  it("clear thinking: thinking and signature deltas assemble into one signed thinking block", () => {
    const { response } = replay("anthropic-clear-thinking.sample");
    const thinking = response.content[0];
    expect(thinking?.type).toBe("thinking");
    if (thinking?.type !== "thinking") return;
    expect(thinking.thinking).toBe("The pot holds 12 litres and loses a third a day. A third of 12 is 4.");
    expect(thinking.signature?.startsWith("U2FtcGxl")).toBe(true);
    expect(response.content[1]).toEqual({ type: "text", text: "About 4 litres a day." });
    expect(response.usage.outputTokens).toBe(41);
  });

  it("clear tool uses: text and usage of the recorded stream", () => {
    const { response } = replay("anthropic-clear-tool-uses.sample");
    expect(response.content).toHaveLength(1);
    expect(response.usage.inputTokens).toBe(912);
    expect(response.usage.outputTokens).toBe(27);
    expect(response.appliedContextEdits).toEqual([]);
  });

  it("recorded non-streamed responses translate block by block", () => {
    const message = recordedResponse(fixtures, "anthropic-compaction.sample");
    const content = message.content.map(contentBlockFromWire);
    expect(content[0]).toEqual({ type: "unknown", original: message.content[0] });
    expect(content[1]?.type).toBe("text");
    expect(usageFromWire(message.usage)).toMatchObject({
      inputTokens: 530,
      outputTokens: 64,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 0,
    });
    expect(stopReasonFromWire(message.stop_reason)).toBe("end_turn");
    expect(appliedEditsFromWire(message.context_management)).toEqual([]);
  });
});

describe("AnthropicStreamTranslator", () => {
  it("maps applied edits and a raw stop reason from message_delta", () => {
    const translator = new AnthropicStreamTranslator();
    const [event] = translator.translate({
      type: "message_delta",
      delta: { stop_reason: "compaction", stop_sequence: null },
      usage: { output_tokens: 9 },
      context_management: {
        applied_edits: [
          { type: "clear_tool_uses_20250919", cleared_tool_uses: 2, cleared_input_tokens: 500 },
        ],
      },
    });
    expect(event).toEqual({
      type: "message_delta",
      stopReason: "pause_turn",
      rawStopReason: "compaction",
      usage: { outputTokens: 9 },
      appliedContextEdits: [
        { type: "clear_tool_uses_20250919", clearedToolUses: 2, clearedInputTokens: 500 },
      ],
    });
  });

  it("ignores ping and unknown event types", () => {
    const translator = new AnthropicStreamTranslator();
    expect(translator.translate({ type: "ping" })).toEqual([]);
    expect(translator.translate({ type: "future_event", value: 1 })).toEqual([]);
  });
});
