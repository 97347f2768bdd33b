import { UnforgetError } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { importClaudeCodeTranscript } from "./claude-code/import-claude-code-transcript.ts";
import { importOpenHandsTrajectory } from "./openhands/import-openhands-trajectory.ts";
import type { ImportResult } from "./shared/import-result.ts";
import { importMiniSweAgentTrajectory } from "./swe-agent/import-mini-swe-agent-trajectory.ts";
import { importSweAgentTrajectory } from "./swe-agent/import-swe-agent-trajectory.ts";
import { importUnforgetTranscript } from "./unforget/import-unforget-transcript.ts";

const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;
const deepArray = (depth: number): string => `${"[".repeat(depth)}"core"${"]".repeat(depth)}`;

/** Runs an import and fails the test with the error's class when anything but an UnforgetError escapes. */
function importSafely(run: () => ImportResult): ImportResult {
  try {
    return run();
  } catch (error) {
    expect(error, String(error)).toBeInstanceOf(UnforgetError);
    throw error;
  }
}

const kinds = (result: ImportResult) => result.report.problems.map((problem) => problem.kind);

describe("numeric timestamps outside the valid date range", () => {
  it("mini-swe-agent: reports the timestamp and imports the message", () => {
    const result = importSafely(() =>
      importMiniSweAgentTrajectory('[{"role":"user","content":"hi","timestamp":1e16}]'),
    );
    expect(result.messages).toHaveLength(1);
    expect(result.report.problems).toEqual([
      expect.objectContaining({ kind: "invalid_timestamp", location: { index: 0 } }),
    ]);
  });

  it("SWE-agent, Claude Code and OpenHands: report it and keep going", () => {
    const sweAgent = importSafely(() =>
      importSweAgentTrajectory({ history: [{ role: "user", content: "hi", timestamp: -1e300 }] }),
    );
    expect(kinds(sweAgent)).toEqual(["invalid_timestamp"]);
    const claudeCode = importSafely(() =>
      importClaudeCodeTranscript(
        jsonl([
          { type: "user", uuid: "u1", timestamp: 1e16, message: { role: "user", content: "hi" } },
          { type: "summary", summary: "A title", leafUuid: "u1", timestamp: 8.64e15 + 1 },
        ]),
      ),
    );
    expect(claudeCode.messages).toHaveLength(1);
    expect(kinds(claudeCode)).toEqual(["invalid_timestamp", "invalid_timestamp"]);
    const openHands = importSafely(() =>
      importOpenHandsTrajectory([
        { id: 1, source: "user", action: "message", args: { content: "hi" }, timestamp: 1e16 },
      ]),
    );
    expect(openHands.messages).toHaveLength(1);
    expect(kinds(openHands)).toEqual(["invalid_timestamp"]);
    // Every timestamp in the output is a valid ISO date.
    for (const result of [sweAgent, claudeCode, openHands]) {
      for (const entry of result.entries)
        expect(new Date(entry.timestamp).toISOString()).toBe(entry.timestamp);
    }
  });
});

describe("wrong-typed and absurdly deep values inside valid lines", () => {
  it("Claude Code: an object timestamp on a rewind leaf does not break branch selection", () => {
    const text = jsonl([
      {
        type: "user",
        uuid: "u1",
        parentUuid: null,
        timestamp: "2025-01-01T00:00:00Z",
        message: { role: "user", content: "a" },
      },
      {
        type: "assistant",
        uuid: "a1",
        parentUuid: "u1",
        timestamp: "2025-01-01T00:00:01Z",
        message: { id: "r1", role: "assistant", content: "b" },
      },
      {
        type: "user",
        uuid: "u2",
        parentUuid: "a1",
        timestamp: { toString: 1 },
        message: { role: "user", content: "first try" },
      },
      {
        type: "user",
        uuid: "u3",
        parentUuid: "a1",
        timestamp: "2025-01-01T00:00:03Z",
        message: { role: "user", content: "second try" },
      },
    ]);
    const result = importSafely(() => importClaudeCodeTranscript(text));
    expect(result.messages.map((message) => message.id)).toEqual(["u1", "a1", "u3"]);
    expect(kinds(result)).toContain("invalid_timestamp");
  });

  it("Claude Code: an attachment whose content is nested 10,000 arrays deep is reported, the rest imported", () => {
    const text = [
      JSON.stringify({
        type: "user",
        uuid: "u1",
        timestamp: "2025-01-01T00:00:00Z",
        message: { role: "user", content: "a" },
      }),
      `{"type":"attachment","uuid":"x1","timestamp":"2025-01-01T00:00:01Z","attachment":{"type":"file","content":${deepArray(10_000)}}}`,
      JSON.stringify({
        type: "assistant",
        uuid: "a1",
        timestamp: "2025-01-01T00:00:02Z",
        message: { id: "r1", role: "assistant", content: "b" },
      }),
    ].join("\n");
    const result = importSafely(() => importClaudeCodeTranscript(text));
    expect(result.messages.map((message) => message.id)).toEqual(["u1", "a1"]);
    expect(result.report.problems).toEqual([
      expect.objectContaining({ kind: "too_deep", location: { line: 2 } }),
    ]);
    // The result can be written as a transcript: nothing in it is too deep to serialise.
    expect(() => JSON.stringify(result)).not.toThrow();
  });

  it("deep values in tool inputs, messages and events are reported in every format", () => {
    const deep = JSON.parse(deepArray(10_000)) as unknown;
    const results = [
      importSafely(() =>
        importSweAgentTrajectory({
          history: [
            { role: "user", content: "go" },
            {
              role: "assistant",
              content: "x",
              tool_calls: [{ id: "c1", function: { name: "bash", arguments: deep } }],
            },
          ],
        }),
      ),
      importSafely(() =>
        importMiniSweAgentTrajectory([
          { role: "user", content: deep },
          { role: "user", content: "go" },
        ]),
      ),
      importSafely(() =>
        importOpenHandsTrajectory([
          { id: 1, source: "user", action: "message", args: { content: "go" } },
          { id: 2, source: "agent", action: "run", args: { command: deep } },
        ]),
      ),
      importSafely(() =>
        importUnforgetTranscript(
          `${JSON.stringify({ v: 1, type: "message", id: "m1", timestamp: "2025-01-01T00:00:00Z", message: { id: "m1", role: "user", content: "go" } })}\n` +
            `{"v":1,"type":"message","id":"m2","timestamp":"2025-01-01T00:00:01Z","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"t","name":"x","input":${deepArray(10_000)}}]}}\n`,
        ),
      ),
    ];
    for (const result of results) {
      // The transcript reader (core) already refuses such a line as an invalid entry.
      expect(result.report.problems.map((problem) => problem.description).join()).toMatch(/levels deep/);
      expect(result.messages.length).toBeGreaterThan(0);
      expect(() => JSON.stringify(result)).not.toThrow();
    }
  });

  it("OpenHands: a forgotten_event_ids entry that is an object is reported, the condensation still recorded", () => {
    const result = importSafely(() =>
      importOpenHandsTrajectory([
        { id: 1, source: "user", action: "message", args: { content: "go" } },
        { id: 2, source: "agent", action: "message", args: { content: "ok" } },
        {
          id: 3,
          source: "agent",
          action: "condensation",
          args: { forgotten_event_ids: [2, { toString: 1 }] },
        },
      ]),
    );
    expect(kinds(result)).toContain("invalid_event_id");
    const decision = result.entries.find((entry) => entry.type === "layer_decision");
    expect(decision).toMatchObject({ edits: [{ kind: "forget_events", details: { eventIds: ["2"] } }] });
  });
});
