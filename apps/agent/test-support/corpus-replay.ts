import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importSessionFile } from "@unforget/importers";
import type { Corpus } from "@unforget/testing/corpus";
import { afterAll, describe, expect, it } from "vitest";
import { checkRequestBody, countRequestTokens } from "./check-request.ts";
import { runInProcess } from "./run-cli.ts";

/**
 * How far above the window a real tokenizer (o200k) may count a dumped request: not at all. The replay
 * compacts by its calibrated estimate, which keeps a request under the threshold (window minus room for the
 * answer); on this corpus o200k counts between 0.86 and 1.02 times that estimate, and at most 66 % of a
 * 16K window, so a request that o200k finds over the window would be a real failure.
 */
export const TOKENIZER_MARGIN = 1;

/** Every session of `corpus`, one entry per run of a multi-run file (`file#line`). */
export async function corpusArguments(corpus: Corpus): Promise<CorpusArgument[]> {
  const found: CorpusArgument[] = [];
  for (const session of corpus.sessions) {
    if (session.format !== "openhands-evaluation") {
      found.push({ label: session.relativePath, argument: session.path });
      continue;
    }
    for (const run of (await importSessionFile(session.path)).instances) {
      found.push({ label: `${session.relativePath}#${run.line}`, argument: `${session.path}#${run.line}` });
    }
  }
  return found;
}

export interface CorpusArgument {
  /** Shown in test names. */
  label: string;
  /** What `unforget replay` is given. */
  argument: string;
}

/**
 * `replay --json --dump-requests` on every corpus session at one window: no overflow, no violation, the
 * peak within the window, one dumped body per call, each valid by an independent check and within the
 * window by a real tokenizer. `minimum` is how many sessions the corpus must hold.
 */
export function describeCorpusReplay(
  window: string,
  windowTokens: number,
  sessions: readonly CorpusArgument[],
  minimum: number,
): void {
  const scratch = mkdtempSync(join(tmpdir(), "unforget-corpus-replay-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  describe(`replay --json on every corpus session at ${window}`, () => {
    it("finds the corpus", () => {
      expect(sessions.length).toBeGreaterThanOrEqual(minimum);
    });
    let run = 0;
    for (const { label, argument } of sessions) {
      it(`${label}: no overflow, no violation, valid requests`, async () => {
        const dump = join(scratch, `dump-${++run}`);
        const result = await runInProcess([
          "replay",
          argument,
          "--window",
          window,
          "--json",
          "--dump-requests",
          dump,
        ]);
        expect(result.stderr).not.toMatch(/unforget: /);
        expect(result.code).toBe(0);
        const stats = JSON.parse(result.stdout) as {
          calls: number;
          peakTokens: number;
          window: number;
          overflows: number;
          violations: string[];
        };
        expect(stats.window).toBe(windowTokens);
        expect(stats.overflows).toBe(0);
        expect(stats.violations).toEqual([]);
        expect(stats.peakTokens).toBeLessThanOrEqual(windowTokens);
        const files = readdirSync(dump)
          .filter((name) => name.endsWith(".json"))
          .sort();
        expect(files.length).toBe(stats.calls);
        expect(files[0]).toBe("000001.json");
        for (const file of files) {
          const body = JSON.parse(readFileSync(join(dump, file), "utf8"));
          expect(checkRequestBody(body), file).toEqual([]);
          // The moving breakpoint: the last message's last block is marked, so the next call reads it back.
          expect(JSON.stringify(body.messages.at(-1).content.at(-1)), file).toContain('"cache_control"');
          expect(countRequestTokens(body), `${file} by o200k`).toBeLessThanOrEqual(
            windowTokens * TOKENIZER_MARGIN,
          );
        }
      });
    }
  });
}
