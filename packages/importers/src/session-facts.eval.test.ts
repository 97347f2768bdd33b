import { findToolPairViolations, getMessageText } from "@unforget/core";
import { evaluationCorpus, loadCorpusFile } from "@unforget/testing/corpus";
import { describe, expect, it } from "vitest";
import { importClaudeCodeTranscript } from "./claude-code/import-claude-code-transcript.ts";
import { importOpenHandsEvaluationOutput } from "./openhands/import-openhands-trajectory.ts";
import { importSweAgentTrajectory } from "./swe-agent/import-swe-agent-trajectory.ts";

// What the third-party corpus's sessions are known to hold (session-facts.test.ts and
// import-trajectories.test.ts check the same on the sample corpus).
const { sessions } = evaluationCorpus();
const corpus = (suffix: string) => {
  const session = sessions.find((candidate) => candidate.relativePath.endsWith(suffix));
  expect(session, `a corpus session ending with ${suffix}`).toBeDefined();
  return loadCorpusFile(session!.path);
};

describe("an import carries what the source knows about the session (corpus)", () => {
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

  it("SWE-agent: the working directory from the first step's state and the configured model", () => {
    expect(importSweAgentTrajectory(corpus("pydicom__pydicom-1458.traj")).workingDirectory).toBe(
      "/pydicom__pydicom",
    );
    const replayed = sessions
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
});

describe("importSweAgentTrajectory on a real run (corpus)", () => {
  it("keeps demonstrations apart from the task in a real run: filtering them keeps the task", () => {
    const [session] = sessions.filter((candidate) =>
      candidate.relativePath.endsWith("pydicom__pydicom-1458.traj"),
    );
    const result = importSweAgentTrajectory(loadCorpusFile(session!.path));
    const demonstrations = result.messages.filter((message) => message.metadata?.isDemonstration === true);
    expect(demonstrations).toHaveLength(1);
    expect(demonstrations[0]).toMatchObject({ isMeta: true, role: "user" });
    // The task (the pydicom issue about pixel data) is not inside the demonstration but in the message after it.
    const issue = "ISSUE:\nPixel Representation attribute should be optional for pixel data handler";
    expect(getMessageText(demonstrations[0]!)).not.toContain(issue);
    const rest = result.messages.filter((message) => message.metadata?.isDemonstration !== true);
    expect(rest[0]?.role).toBe("user");
    expect(getMessageText(rest[0]!)).toContain(issue);
    expect(findToolPairViolations(rest)).toEqual([]);
    expect(result.report.repairs.filter((repair) => repair.kind === "merged_messages")).toEqual([]);
  });
});
