import type { AgentSession, CompactReport } from "@unforget/session";
import { parseWindow } from "../parse-window.ts";

/** Most compactions one `/compact --target` runs: each summarises the last summary and what came after it. */
const MAX_ROUNDS = 3;

/** `/compact`'s arguments: `--preview`, a target size (`--target 20K`), and the instructions for the summary. */
export interface CompactArguments {
  preview: boolean;
  /** Compact until the context is at or under this many tokens. */
  target?: number;
  instructions: string;
}

/** Reads `[--preview] [--target SIZE] [instructions]` (a bad size throws, saying how to write one). */
export function parseCompactArguments(args: string): CompactArguments {
  let rest = args.trim();
  let preview = false;
  let target: number | undefined;
  for (;;) {
    const flag = /^--preview(?:\s+|$)/.exec(rest);
    if (flag) {
      preview = true;
      rest = rest.slice(flag[0].length);
      continue;
    }
    const sized = /^--target(?:\s+|=)(\S+)(?:\s+|$)/.exec(rest);
    if (sized) {
      target = parseWindow(sized[1]!);
      rest = rest.slice(sized[0].length);
      continue;
    }
    break;
  }
  return { preview, ...(target !== undefined ? { target } : {}), instructions: rest.trim() };
}

/** What `compactToTarget` did: each compaction's report, the size it ended at, and whether that met the target. */
export interface TargetOutcome {
  reports: CompactReport[];
  tokensBefore: number;
  tokensAfter: number;
  reached: boolean;
  /** Why it stopped above the target, in words (empty when it reached it). */
  reason: string;
}

/**
 * Compacts until the context is at or under `target` tokens: a compaction, then another while the context is
 * still over it and the last one made it smaller (at most three). A compaction never makes the context larger,
 * so this ends at or under where it started.
 */
export async function compactToTarget(
  session: Pick<AgentSession, "compact" | "status">,
  target: number,
  instructions: string | undefined,
): Promise<TargetOutcome> {
  const tokensBefore = session.status().tokens;
  const reports: CompactReport[] = [];
  let tokens = tokensBefore;
  let reason = "";
  while (tokens > target) {
    if (reports.length === MAX_ROUNDS) {
      reason = `${MAX_ROUNDS} compactions in a row did not get there; what is left is the summary, the recent messages kept verbatim and what every request carries (system prompt, tools).`;
      break;
    }
    const report = await session.compact(instructions);
    reports.push(report);
    if (report.actions.length === 0 || report.tokensAfter >= tokens) {
      const declined = report.declined.map((entry) => entry.reason).join(" ");
      reason =
        reports.length > 1
          ? `Nothing more can be summarised${declined ? ` (${declined.replace(/\.$/, "")})` : ""}: what is left is the summary, the recent messages kept verbatim and what every request carries (system prompt, tools).`
          : declined ||
            "A compaction would not make it smaller: what is left is the recent messages kept verbatim and what every request carries (system prompt, tools).";
      tokens = Math.min(tokens, report.tokensAfter);
      break;
    }
    tokens = report.tokensAfter;
  }
  return { reports, tokensBefore, tokensAfter: tokens, reached: tokens <= target, reason };
}
