import { findToolPairViolations } from "@unforget/core";
import type { Corpus, CorpusFormat, CorpusSession } from "@unforget/testing/corpus";
import { loadCorpusFile } from "@unforget/testing/corpus";
import { projectMessages } from "@unforget/transcript";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { SessionFormat } from "../session/detect-session-format.ts";
import { importSessionFile } from "../session/import-session-file.ts";
import type { ImportResult } from "../shared/import-result.ts";
import { importMiniSweAgentTrajectory } from "../swe-agent/import-mini-swe-agent-trajectory.ts";
import { importSweAgentTrajectory } from "../swe-agent/import-swe-agent-trajectory.ts";

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

const shorten = (label: string) => (label.length <= 72 ? label : `${label.slice(0, 30)}…${label.slice(-41)}`);

/**
 * Every session of `corpus` imports with no remaining tool-pair violation, every defect says where it is, and
 * importing is deterministic; `minimum` is how many sessions of each format the corpus must hold.
 */
export function describeCorpusImport(corpus: Corpus, minimum: Record<CorpusFormat, number>): void {
  const { sessions } = corpus;
  const rows: Record<string, string | number>[] = [];

  afterAll(() => {
    console.table(rows);
  });

  describe("every corpus session imports with no remaining tool-pair violations", () => {
    it("finds the sessions of every format", () => {
      const byFormat = (format: CorpusSession["format"]) =>
        sessions.filter((session) => session.format === format).length;
      for (const [format, count] of Object.entries(minimum)) {
        expect(byFormat(format as CorpusFormat), format).toBeGreaterThanOrEqual(count);
      }
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
}

/** `importSessionFile` recognises every session of `corpus` by its content, as the format its folder says. */
export function describeFormatRecognition(corpus: Corpus): void {
  const expected: Record<CorpusFormat, SessionFormat> = {
    "claude-code": "claude-code",
    "swe-agent": "swe-agent",
    "mini-swe-agent": "mini-swe-agent",
    openhands: "openhands",
    "openhands-evaluation": "openhands-evaluation",
  };

  describe("importSessionFile recognises every corpus session by content", () => {
    it.each(corpus.sessions.map((session) => [session.relativePath, session] as const))(
      "%s",
      async (_name, session) => {
        const imported = await importSessionFile(session.path);
        expect(imported.format).toBe(expected[session.format]);
        expect(imported.path).toBe(session.path);
        expect(imported.messages.length).toBeGreaterThan(0);
        expect(imported.report.remainingViolations).toEqual([]);
        if (imported.format === "openhands-evaluation") {
          expect(imported.instances.length).toBeGreaterThan(0);
          expect(imported.messages).toEqual(imported.instances[0]?.result.messages);
        }
      },
    );
  });
}

/** SWE-agent and mini-swe-agent environment output in `corpus` is marked as observations, never the task. */
export function describeObservationsAsUserText(corpus: Corpus): void {
  describe("observations sent as user text", () => {
    it("marks SWE-agent and mini-swe-agent environment output as observations, never the task", () => {
      const sessions = corpus.sessions.filter(
        (entry) => entry.format === "swe-agent" || entry.format === "mini-swe-agent",
      );
      expect(sessions.length).toBeGreaterThan(0);
      for (const session of sessions) {
        const text = loadCorpusFile(session.path);
        const { messages } =
          session.format === "swe-agent"
            ? importSweAgentTrajectory(text)
            : importMiniSweAgentTrajectory(text);
        const firstAssistant = messages.findIndex((message) => message.role === "assistant");
        const task = messages
          .slice(0, firstAssistant)
          .filter((message) => message.role === "user" && !message.isMeta);
        expect(task.length, session.relativePath).toBeGreaterThan(0);
        expect(
          task.every((message) => message.isObservation !== true),
          session.relativePath,
        ).toBe(true);
        for (const [index, message] of messages.entries()) {
          if (message.role !== "user" || index < firstAssistant) continue;
          const textOnly = !message.content.some((block) => block.type === "tool_result");
          expect(message.isObservation === true, `${session.relativePath} ${message.id}`).toBe(
            textOnly && !message.isMeta,
          );
        }
      }
    });
  });
}
