import type { SessionMemorySource } from "@unforget/core";
import { describe, expect, it } from "vitest";

/** What a `SessionMemorySource` implementation hands the suite for one scenario. */
export interface SessionMemorySourceHarness {
  source: SessionMemorySource;
  /**
   * Makes the source hold these notes as if an extraction had written them, covering the conversation up
   * to `lastMessageId`.
   */
  setNotes(markdown: string, lastMessageId: string): Promise<void>;
  /**
   * Starts an extraction that stays in flight for at least `minimumMs` and then succeeds or fails as asked;
   * resolves once it is in flight, with a promise that settles (never rejects) when it has ended.
   */
  startExtraction(outcome: "success" | "failure", minimumMs: number): Promise<{ finished: Promise<void> }>;
  /** The empty template the source starts from, when it has one. */
  template?: string;
  cleanup(): Promise<void>;
}

export interface SessionMemorySourceContractOptions {
  /** Shown in the suite's title. */
  name: string;
  /** Called before every scenario: a source with no notes yet. */
  create(): Promise<SessionMemorySourceHarness>;
  /** A section the implementation cuts for compaction when it is longer than this many characters. */
  compactSectionChars?: number;
}

const TIMEOUT = 30_000;

const NOTES = `# Session Title
Parser rewrite

# Current State
Switching the tokenizer to a table-driven loop; next: run the benchmark.

# Errors & Corrections
The user said: no regular expressions in the hot loop.
`;

/**
 * The conformance suite for `SessionMemorySource` (the contract between session memory and a
 * session-memory compaction): no notes means `undefined`, notes come back with their headers and coverage,
 * a runaway section is cut for compaction with its header kept, waiting for an extraction resolves when it
 * ends or fails and gives up at its timeout or signal, and nothing ever rejects or throws.
 */
export function describeSessionMemorySourceContract(options: SessionMemorySourceContractOptions): void {
  const scenario = (run: (harness: SessionMemorySourceHarness) => Promise<void>) => async () => {
    const harness = await options.create();
    try {
      await run(harness);
    } finally {
      await harness.cleanup();
    }
  };

  describe(`SessionMemorySource contract: ${options.name}`, () => {
    it(
      "has no notes before any extraction, also when it holds only the empty template",
      scenario(async (harness) => {
        expect(await harness.source.readNotes()).toBeUndefined();
        if (harness.template !== undefined) {
          await harness.setNotes(harness.template, "m0");
          expect(await harness.source.readNotes()).toBeUndefined();
        }
      }),
      TIMEOUT,
    );

    it(
      "returns the notes with every header, the last message they cover and an ISO time",
      scenario(async (harness) => {
        await harness.setNotes(NOTES, "msg_42");
        const notes = await harness.source.readNotes();
        expect(notes).toBeDefined();
        for (const header of ["# Session Title", "# Current State", "# Errors & Corrections"]) {
          expect(notes?.text).toContain(header);
        }
        expect(notes?.text).toContain("no regular expressions in the hot loop");
        expect(notes?.lastSummarizedMessageId).toBe("msg_42");
        if (notes?.updatedAt !== undefined) expect(Number.isNaN(Date.parse(notes.updatedAt))).toBe(false);
      }),
      TIMEOUT,
    );

    it(
      "cuts a runaway section for compaction, keeping its header and marking the cut",
      scenario(async (harness) => {
        const limit = options.compactSectionChars ?? 8_000;
        const runaway = Array.from(
          { length: Math.ceil((limit * 2) / 40) },
          (_, i) => `- step ${i} ${"x".repeat(30)}`,
        );
        await harness.setNotes(`${NOTES}\n# Worklog\n${runaway.join("\n")}\n`, "msg_7");
        const notes = await harness.source.readNotes();
        const worklog = notes?.text.split("# Worklog")[1] ?? "";
        expect(notes?.text).toContain("# Worklog");
        expect(worklog.length).toBeLessThan(limit + 200);
        expect(worklog.length).toBeLessThan(runaway.join("\n").length);
        expect(notes?.text).toContain("Switching the tokenizer");
      }),
      TIMEOUT,
    );

    it(
      "waitForPendingExtraction resolves at once when nothing is in flight",
      scenario(async (harness) => {
        await expect(harness.source.waitForPendingExtraction({ timeoutMs: 5_000 })).resolves.toBeUndefined();
      }),
      TIMEOUT,
    );

    it(
      "waitForPendingExtraction waits for an extraction in flight, and resolves when it fails",
      scenario(async (harness) => {
        const first = await harness.startExtraction("success", 1_000);
        let settled = false;
        const waiting = harness.source.waitForPendingExtraction({ timeoutMs: 20_000 }).then(() => {
          settled = true;
        });
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(settled).toBe(false);
        await first.finished;
        await waiting;
        expect(settled).toBe(true);
        const second = await harness.startExtraction("failure", 300);
        await expect(harness.source.waitForPendingExtraction({ timeoutMs: 20_000 })).resolves.toBeUndefined();
        await second.finished;
      }),
      TIMEOUT,
    );

    it(
      "waitForPendingExtraction gives up at its timeout and at its signal, without rejecting",
      scenario(async (harness) => {
        const slow = await harness.startExtraction("success", 1_500);
        await expect(harness.source.waitForPendingExtraction({ timeoutMs: 30 })).resolves.toBeUndefined();
        const controller = new AbortController();
        const waiting = harness.source.waitForPendingExtraction({
          timeoutMs: 20_000,
          signal: controller.signal,
        });
        controller.abort();
        await expect(waiting).resolves.toBeUndefined();
        const aborted = new AbortController();
        aborted.abort();
        await expect(
          harness.source.waitForPendingExtraction({ timeoutMs: 20_000, signal: aborted.signal }),
        ).resolves.toBeUndefined();
        await slow.finished;
      }),
      TIMEOUT,
    );

    it(
      "requestUpdate returns at once and never throws; readNotes never rejects",
      scenario(async (harness) => {
        expect(() => harness.source.requestUpdate?.("early-mark")).not.toThrow();
        expect(() => harness.source.requestUpdate?.("before-compaction")).not.toThrow();
        await harness.source.waitForPendingExtraction({ timeoutMs: 5_000 });
        const notes = await harness.source.readNotes();
        expect(notes === undefined || typeof notes.text === "string").toBe(true);
      }),
      TIMEOUT,
    );
  });
}
