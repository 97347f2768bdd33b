import { findToolPairViolations } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { importClaudeCodeTranscript } from "./claude-code/import-claude-code-transcript.ts";
import { importOpenHandsTrajectory } from "./openhands/import-openhands-trajectory.ts";
import { importUnforgetTranscript } from "./unforget/import-unforget-transcript.ts";

// Shapes that made an importer quadratic. Each import must finish (the quadratic versions took 20 s to over a
// minute at this size, past the test timeout) and its output must stay linear in the input. Speed itself is
// measured in bench/importers.bench.ts, never asserted here.
const COUNT = 40_000;
const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;

/** A user line, then COUNT assistant lines in one parent chain, each of the response `responseId` names. */
function assistantLines(responseId: (index: number) => string): string {
  const lines: unknown[] = [
    { type: "user", uuid: "u0", parentUuid: null, message: { role: "user", content: "go" } },
  ];
  for (let index = 1; index <= COUNT; index++) {
    lines.push({
      type: "assistant",
      uuid: `a${index}`,
      parentUuid: index === 1 ? "u0" : `a${index - 1}`,
      message: {
        id: responseId(index),
        role: "assistant",
        content: [{ type: "text", text: `part ${index}` }],
      },
    });
  }
  return jsonl(lines);
}

describe("imports stay linear whatever the shape", () => {
  it("Claude Code: 40,000 assistant lines with distinct response ids", () => {
    const text = assistantLines((index) => `msg_${index}`);
    const result = importClaudeCodeTranscript(text);
    expect(result.messages).toHaveLength(2);
    expect(result.messages[1]?.content).toHaveLength(COUNT);
    expect(JSON.stringify(result.messages).length).toBeLessThan(4 * text.length);
  });

  it("Claude Code: 40,000 split lines of one response", () => {
    const result = importClaudeCodeTranscript(assistantLines(() => "msg_1"));
    expect(result.messages).toHaveLength(2);
    expect(result.messages[1]?.metadata?.sourceLines).toHaveLength(COUNT);
    expect(result.report.counts.mergedSourceItems).toBe(COUNT - 1);
  });

  it("OpenHands: 40,000 actions that no observation answers", () => {
    const events: unknown[] = [{ id: 0, source: "user", action: "message", args: { content: "go" } }];
    for (let index = 1; index <= COUNT; index++) {
      events.push({
        id: index,
        source: "agent",
        action: "run",
        args: { command: `ls ${index}`, thought: `step ${index}` },
      });
    }
    const result = importOpenHandsTrajectory(events);
    expect(result.report.counts.sourceItems).toBe(COUNT + 1);
    expect(result.messages).toHaveLength(2);
    expect(result.messages[1]?.content).toHaveLength(COUNT);
    expect(findToolPairViolations(result.messages)).toEqual([]);
  });

  it("OpenHands: 40,000 older-log actions answered in order after all of them", () => {
    const events: unknown[] = [{ action: "message", content: "go" }];
    for (let index = 0; index < COUNT; index++) events.push({ action: "run", command: `ls ${index}` });
    for (let index = 0; index < COUNT; index++) events.push({ observation: "run", content: `out ${index}` });
    const result = importOpenHandsTrajectory(events);
    expect(result.report.counts.toolPairs).toBe(COUNT);
    expect(result.report.repairs).toEqual([]);
    const results = result.messages[2]?.content ?? [];
    expect(results[COUNT - 1]).toMatchObject({ type: "tool_result", content: `out ${COUNT - 1}` });
  });

  it("Unforget: 40,000 consecutive user messages in a transcript", () => {
    const lines = Array.from({ length: COUNT }, (_, index) => ({
      v: 1,
      type: "message",
      id: `m${index}`,
      timestamp: "2025-01-01T00:00:00.000Z",
      message: { id: `m${index}`, role: "user", content: `line ${index}` },
    }));
    const result = importUnforgetTranscript(jsonl(lines));
    expect(result.messages).toHaveLength(1);
    expect(result.report.repairs).toHaveLength(COUNT - 1);
  });
});
