import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ModelResponseAccumulator } from "@unforget/provider-runtime";
import { describe, expect, it } from "vitest";
import {
  AnthropicStreamTranslator,
  appliedEditsFromWire,
  contentBlockFromWire,
  stopReasonFromWire,
  usageFromWire,
} from "./anthropic-stream.ts";

const corpusDir =
  process.env.UNFORGET_CORPUS_DIR ??
  resolve(fileURLToPath(new URL(".", import.meta.url)), "../../../../../shared/corpus");
const fixtures = join(corpusDir, "api-fixtures");

function replay(name: string) {
  const lines = readFileSync(join(fixtures, `${name}.chunks.txt`), "utf8")
    .split("\n")
    .filter(Boolean);
  const raw = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  const translator = new AnthropicStreamTranslator();
  const accumulator = new ModelResponseAccumulator();
  for (const event of raw) for (const translated of translator.translate(event)) accumulator.push(translated);
  return { raw, response: accumulator.finish() };
}

describe.runIf(existsSync(fixtures))("recorded Anthropic streams (corpus api-fixtures)", () => {
  it("keeps the passes of a server compaction, the cache TTL split and deleted cache tokens in the usage", () => {
    const { raw, response } = replay("anthropic-compaction.1");
    const delta = [...raw].reverse().find((event) => event.type === "message_delta") as {
      usage?: { iterations?: unknown[] };
    };
    expect(delta.usage?.iterations?.length).toBeGreaterThan(0);
    expect(response.usage.iterations?.map((pass) => pass.type)).toContain("compaction");
    const recorded = JSON.parse(readFileSync(join(fixtures, "anthropic-compaction.1.json"), "utf8")) as {
      usage: unknown;
    };
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
    const message = JSON.parse(readFileSync(join(fixtures, "anthropic-compaction.1.json"), "utf8")) as {
      content: { type: string; content?: string }[];
      usage: unknown;
      stop_reason: string;
      context_management: unknown;
    };
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
