import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage } from "@unforget/core";
import { listCorpusSessions, loadCorpusFile } from "@unforget/testing/corpus";
import { TranscriptWriter } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { importClaudeCodeTranscript } from "./import-claude-code-transcript.ts";
import { importMiniSweAgentTrajectory } from "./import-mini-swe-agent-trajectory.ts";
import { importOpenHandsEvaluationOutput } from "./import-openhands-trajectory.ts";
import { importSweAgentTrajectory } from "./import-swe-agent-trajectory.ts";
import { importUnforgetTranscript } from "./import-unforget-transcript.ts";

const corpus = (suffix: string) => {
  const session = listCorpusSessions().find((candidate) => candidate.relativePath.endsWith(suffix));
  if (!session) throw new Error(`No corpus session ends with ${suffix}`);
  return loadCorpusFile(session.path);
};
const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;

describe("an import carries what the source knows about the session", () => {
  it("Claude Code: session id, working directory, model and start; title summaries keep the source's dates", () => {
    const result = importClaudeCodeTranscript(corpus("claude-code-log/edge_cases.jsonl"));
    expect(result).toMatchObject({
      sessionId: "edge_cases",
      workingDirectory: "/tmp",
      model: "claude-sonnet-4",
      startedAt: "2025-06-14T11:00:00.000Z",
    });
    const summary = result.entries.find((entry) => entry.type === "summary");
    // The summary line has no date: it takes its leaf's (edge_011), never 1970-01-01.
    expect(summary?.timestamp).toBe("2025-06-14T11:03:30.000Z");
  });

  it("Claude Code: a summary whose leaf is unknown takes the session's start; synthetic replies name no model", () => {
    const result = importClaudeCodeTranscript(
      jsonl([
        { type: "summary", summary: "Fixing the parser", leafUuid: "gone" },
        {
          type: "user",
          uuid: "u1",
          sessionId: "s1",
          cwd: "/work",
          timestamp: "2025-03-01T09:00:00Z",
          message: { role: "user", content: "hi" },
        },
        {
          type: "assistant",
          uuid: "a1",
          parentUuid: "u1",
          timestamp: "2025-03-01T09:00:05Z",
          message: { id: "r1", role: "assistant", model: "claude-opus-4-1", content: "hello" },
        },
        {
          type: "user",
          uuid: "u2",
          parentUuid: "a1",
          timestamp: "2025-03-01T09:01:00Z",
          message: { role: "user", content: "again" },
        },
        {
          type: "assistant",
          uuid: "a2",
          parentUuid: "u2",
          timestamp: "2025-03-01T09:01:01Z",
          message: { id: "r2", role: "assistant", model: "<synthetic>", content: "API Error" },
        },
      ]),
    );
    expect(result.entries[0]).toMatchObject({ type: "summary", timestamp: "2025-03-01T09:00:00.000Z" });
    expect(result).toMatchObject({ sessionId: "s1", workingDirectory: "/work", model: "claude-opus-4-1" });
  });

  it("SWE-agent: the working directory from the first step's state and the configured model", () => {
    expect(importSweAgentTrajectory(corpus("pydicom__pydicom-1458.traj")).workingDirectory).toBe(
      "/pydicom__pydicom",
    );
    const replayed = listCorpusSessions()
      .filter((session) => session.format === "swe-agent")
      .map((session) => importSweAgentTrajectory(loadCorpusFile(session.path)));
    expect(replayed.map((result) => result.model)).toContain("gpt-4o");
    // SWE-agent histories carry no dates: nothing is invented.
    expect(replayed.every((result) => result.startedAt === undefined)).toBe(true);
  });

  it("OpenHands evaluation output: the instance id, the model and the first event's time", () => {
    const [first] = importOpenHandsEvaluationOutput(corpus("openhands/multi_swe_bench_example_output.jsonl"));
    expect(first?.result).toMatchObject({
      sessionId: "ponylang__ponyc-4595",
      startedAt: "2025-04-30T16:32:54.707Z",
    });
    expect(first?.result.model).toMatch(/llama-4-maverick/);
  });

  it("mini-swe-agent: the configured model of a run saved with its info", () => {
    const result = importMiniSweAgentTrajectory({
      info: { config: { model: { model_name: "anthropic/claude-sonnet-4" } } },
      messages: [
        { role: "user", content: "Solve it" },
        { role: "assistant", content: "```bash\nls\n```" },
      ],
    });
    expect(result.model).toBe("anthropic/claude-sonnet-4");
  });

  it("Unforget: the session id, the metadata's working directory and the assistant's model", async () => {
    const dir = await mkdtemp(join(tmpdir(), "unforget-facts-"));
    try {
      const path = join(dir, "session.jsonl");
      const writer = await TranscriptWriter.open(path, { sessionId: "s-42" });
      await writer.append({ type: "metadata", data: { workingDirectory: "/repo" } });
      await writer.appendMessage(createMessage("user", "hi"));
      await writer.appendMessage(createMessage("assistant", "hello", { model: "claude-haiku-4-5" }));
      await writer.close();
      const result = importUnforgetTranscript(await readFile(path, "utf8"));
      expect(result).toMatchObject({
        sessionId: "s-42",
        workingDirectory: "/repo",
        model: "claude-haiku-4-5",
      });
      expect(result.startedAt).toBe(result.entries[0]?.timestamp);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
