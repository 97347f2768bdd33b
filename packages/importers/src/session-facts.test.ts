import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage } from "@unforget/core";
import { loadCorpusFile, sampleCorpus } from "@unforget/testing/corpus";
import { TranscriptWriter } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { importClaudeCodeTranscript } from "./claude-code/import-claude-code-transcript.ts";
import { importOpenHandsEvaluationOutput } from "./openhands/import-openhands-trajectory.ts";
import { importMiniSweAgentTrajectory } from "./swe-agent/import-mini-swe-agent-trajectory.ts";
import { importSweAgentTrajectory } from "./swe-agent/import-swe-agent-trajectory.ts";
import { importUnforgetTranscript } from "./unforget/import-unforget-transcript.ts";

const sample = sampleCorpus();
const corpus = (relativePath: string) => loadCorpusFile(relativePath, sample.dir);
const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;

describe("an import carries what the source knows about the session", () => {
  it("Claude Code: session id, working directory, model and start; title summaries keep the source's dates", () => {
    const result = importClaudeCodeTranscript(corpus("claude-code/sample/weather_session.jsonl"));
    expect(result).toMatchObject({
      sessionId: "sample-cc",
      workingDirectory: "/home/dev/weather",
      model: "claude-sonnet-4-5",
      startedAt: "2025-07-03T09:00:00.000Z",
    });
    const summary = result.entries.find((entry) => entry.type === "summary");
    // The summary line has no date: it takes its leaf's (a-6), never 1970-01-01.
    expect(summary?.timestamp).toBe("2025-07-03T09:00:52.000Z");
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
    expect(importSweAgentTrajectory(corpus("sweagent/sample/tinytime__tinytime-17.traj"))).toMatchObject({
      workingDirectory: "/tinytime__tinytime",
      model: "gpt-4o",
    });
    // The state and the configuration as objects or as JSON text, depending on the version.
    expect(importSweAgentTrajectory(corpus("sweagent/sample/thought_action.traj"))).toMatchObject({
      workingDirectory: "/labels__labels",
      model: "gpt-4o-mini",
    });
    const replayed = sample.sessions
      .filter((session) => session.format === "swe-agent")
      .map((session) => importSweAgentTrajectory(loadCorpusFile(session.path)));
    // SWE-agent histories carry no dates: nothing is invented.
    expect(replayed.every((result) => result.startedAt === undefined)).toBe(true);
  });

  it("OpenHands evaluation output: the instance id, the model and the first event's time", () => {
    const [first] = importOpenHandsEvaluationOutput(corpus("openhands/sample_evaluation_output.jsonl"));
    expect(first?.result).toMatchObject({
      sessionId: "sample__backup-1",
      startedAt: "2025-07-05T10:00:00.000Z",
    });
    expect(first?.result.model).toMatch(/claude-sonnet-4-5/);
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
