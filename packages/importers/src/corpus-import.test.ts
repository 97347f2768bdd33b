import { findToolPairViolations, projectMessages } from "@unforget/core";
import type { CorpusSession } from "@unforget/testing";
import { listCorpusSessions, loadCorpusFile } from "@unforget/testing";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { importClaudeCodeTranscript } from "./import-claude-code-transcript.ts";
import { importMiniSweAgentTrajectory } from "./import-mini-swe-agent-trajectory.ts";
import { importOpenHandsEvaluationOutput, importOpenHandsTrajectory } from "./import-openhands-trajectory.ts";
import type { ImportResult } from "./import-result.ts";
import { importSweAgentTrajectory } from "./import-swe-agent-trajectory.ts";

/** Imports a corpus session with the importer for its format (one result per instance of an evaluation output). */
function importCorpusSession(session: CorpusSession): { label: string; result: ImportResult }[] {
  const text = loadCorpusFile(session.path);
  switch (session.format) {
    case "claude-code":
      return [{ label: session.relativePath, result: importClaudeCodeTranscript(text) }];
    case "swe-agent":
      return [{ label: session.relativePath, result: importSweAgentTrajectory(text) }];
    case "mini-swe-agent":
      return [{ label: session.relativePath, result: importMiniSweAgentTrajectory(text) }];
    case "openhands":
      return [{ label: session.relativePath, result: importOpenHandsTrajectory(text) }];
    case "openhands-evaluation":
      return importOpenHandsEvaluationOutput(text).map((instance) => ({
        label: `${session.relativePath}#${instance.line}`,
        result: instance.result,
      }));
  }
}

const sessions = listCorpusSessions();
const rows: Record<string, string | number>[] = [];
const shorten = (label: string) => (label.length <= 72 ? label : `${label.slice(0, 30)}…${label.slice(-41)}`);

afterAll(() => {
  console.table(rows);
});

describe("every corpus session imports with no remaining tool-pair violations", () => {
  it("finds the sessions of every format the corpus README lists", () => {
    const byFormat = (format: CorpusSession["format"]) =>
      sessions.filter((session) => session.format === format).length;
    expect(byFormat("swe-agent")).toBeGreaterThanOrEqual(22);
    expect(byFormat("mini-swe-agent")).toBeGreaterThanOrEqual(2);
    expect(byFormat("openhands")).toBeGreaterThanOrEqual(4);
    expect(byFormat("openhands-evaluation")).toBeGreaterThanOrEqual(2);
    expect(byFormat("claude-code")).toBeGreaterThanOrEqual(7);
  });

  it.each(sessions.map((session) => [session.relativePath, session] as const))("%s", (_name, session) => {
    const imports = importCorpusSession(session);
    expect(imports.length).toBeGreaterThan(0);
    for (const { label, result } of imports) {
      const { counts } = result.report;
      rows.push({
        file: shorten(label),
        format: session.format,
        messages: counts.messages,
        toolPairs: counts.toolPairs,
        repairs: counts.repairs,
        problems: result.report.problems.length,
        skipped: counts.sidechainSkipped + counts.offBranchSkipped + counts.invalid,
      });
      expect(result.messages.length, label).toBeGreaterThan(0);
      expect(findToolPairViolations(result.messages), label).toEqual([]);
      expect(result.report.remainingViolations, label).toEqual([]);
      expect(projectMessages(result.entries), label).toEqual(result.messages);
      expect(counts.repairs).toBe(result.report.repairs.length);
      // Every defect and every repair says where in the source it is.
      for (const item of [...result.report.violations, ...result.report.repairs, ...result.report.problems]) {
        expect(Object.keys(item.location).length, `${label}: ${item.description}`).toBeGreaterThan(0);
      }
    }
  });
});

describe("importing is deterministic: the same file gives the same output, whatever the clock says", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(sessions.map((session) => [session.relativePath, session] as const))("%s", (_name, session) => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2020-01-01T00:00:00.000Z"));
    const first = importCorpusSession(session);
    vi.setSystemTime(new Date("2031-06-15T12:34:56.789Z"));
    const second = importCorpusSession(session);
    // Byte-identical JSON: no generated id, timestamp or key order depends on the run.
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  });
});
