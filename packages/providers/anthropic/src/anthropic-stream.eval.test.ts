import { join } from "node:path";
import { evaluationCorpus } from "@unforget/testing/corpus";
import { describe, expect, it } from "vitest";
import { recordedResponse, replayRecordedStream } from "./__fixtures__/recorded-stream.ts";
import {
  appliedEditsFromWire,
  contentBlockFromWire,
  stopReasonFromWire,
  usageFromWire,
} from "./anthropic-stream.ts";

// Streams and responses the Anthropic API really sent (the corpus's api-fixtures); anthropic-stream.test.ts
// replays streams of the same shapes from the sample corpus.
const fixtures = join(evaluationCorpus().dir, "api-fixtures");
const replay = (name: string) => replayRecordedStream(fixtures, name);

describe("recorded Anthropic streams (corpus api-fixtures)", () => {
  it("keeps the passes of a server compaction, the cache TTL split and deleted cache tokens in the usage", () => {
    const { raw, response } = replay("anthropic-compaction.1");
    const delta = [...raw].reverse().find((event) => event.type === "message_delta") as {
      usage?: { iterations?: unknown[] };
    };
    expect(delta.usage?.iterations?.length).toBeGreaterThan(0);
    expect(response.usage.iterations?.map((pass) => pass.type)).toContain("compaction");
    const recorded = recordedResponse(fixtures, "anthropic-compaction.1");
    const usage = usageFromWire(recorded.usage);
    expect(usage.iterations).toEqual([
      {
        type: "compaction",
        inputTokens: 60_385,
        outputTokens: 592,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 0,
      },
      {
        type: "message",
        inputTokens: 682,
        outputTokens: 1_320,
        cacheCreationInputTokens: 0,
        cacheReadInputTokens: 0,
      },
    ]);
    expect(usage.cacheCreation).toEqual({ ephemeral5mInputTokens: 0, ephemeral1hInputTokens: 0 });
  });

  it("server compaction: the compaction block is rebuilt from its deltas and kept as an UnknownBlock", () => {
    const { raw, response } = replay("anthropic-compaction.1");
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
    expect(response.id).toBe("msg_01WJn2D9FrjipEZ9u51siJHC");
    // message_delta restates input usage after compaction: 612 input tokens, not the 60 385 of message_start.
    expect(response.usage).toMatchObject({
      inputTokens: 612,
      outputTokens: 2819,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 0,
    });
    expect(response.stopReason).toBe("end_turn");
    expect(response.appliedContextEdits).toEqual([]);
  });

  it("clear thinking: thinking and signature deltas assemble into one signed thinking block", () => {
    const { response } = replay("anthropic-clear-thinking.1");
    const thinking = response.content[0];
    expect(thinking?.type).toBe("thinking");
    if (thinking?.type !== "thinking") return;
    expect(thinking.thinking).toBe(
      "The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185",
    );
    expect(thinking.signature?.startsWith("EvQBCkYICxgCKkAx")).toBe(true);
    expect(response.content[1]).toEqual({ type: "text", text: "925 ÷ 5 = 185" });
    expect(response.usage.outputTokens).toBe(53);
  });

  it("clear tool uses: text and usage of the recorded stream", () => {
    const { response } = replay("anthropic-clear-tool-uses.1");
    expect(response.content).toHaveLength(1);
    expect(response.usage.inputTokens).toBe(859);
    expect(response.usage.outputTokens).toBe(122);
    expect(response.appliedContextEdits).toEqual([]);
  });

  it("recorded non-streamed responses translate block by block", () => {
    const message = recordedResponse(fixtures, "anthropic-compaction.1");
    const content = message.content.map(contentBlockFromWire);
    expect(content[0]).toEqual({ type: "unknown", original: message.content[0] });
    expect(content[1]?.type).toBe("text");
    expect(usageFromWire(message.usage)).toMatchObject({
      inputTokens: 682,
      outputTokens: 1320,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 0,
    });
    expect(stopReasonFromWire(message.stop_reason)).toBe("end_turn");
    expect(appliedEditsFromWire(message.context_management)).toEqual([]);
  });
});
