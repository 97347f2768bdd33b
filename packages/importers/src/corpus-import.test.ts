import { findToolPairViolations } from "@unforget/core";
import type { CorpusSession } from "@unforget/testing/corpus";
import { listCorpusSessions } from "@unforget/testing/corpus";
import { projectMessages } from "@unforget/transcript";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { ImportResult } from "./import-result.ts";
import { importSessionFile } from "./import-session-file.ts";

/** Imports a corpus session by content (one result per run of an evaluation output). */
async function importCorpusSession(
  session: CorpusSession,
): Promise<{ label: string; result: ImportResult }[]> {
  const imported = await importSessionFile(session.path);
  if (imported.instances.length === 0) return [{ label: session.relativePath, result: imported }];
  return imported.instances.map((instance) => ({
    label: `${session.relativePath}#${instance.line}`,
    result: instance.result,
  }));
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

  it.each(sessions.map((session) => [session.relativePath, session] as const))(
    "%s",
    async (_name, session) => {
      const imports = await importCorpusSession(session);
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
        for (const item of [
          ...result.report.violations,
          ...result.report.repairs,
          ...result.report.problems,
        ]) {
          expect(Object.keys(item.location).length, `${label}: ${item.description}`).toBeGreaterThan(0);
        }
      }
    },
  );
});

describe("importing is deterministic: the same file gives the same output, whatever the clock says", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(sessions.map((session) => [session.relativePath, session] as const))(
    "%s",
    async (_name, session) => {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(new Date("2020-01-01T00:00:00.000Z"));
      const first = await importCorpusSession(session);
      vi.setSystemTime(new Date("2031-06-15T12:34:56.789Z"));
      const second = await importCorpusSession(session);
      // Byte-identical JSON: no generated id, timestamp or key order depends on the run.
      expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    },
  );
});
