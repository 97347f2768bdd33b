import type { Message } from "@unforget/core";
import { findToolPairViolations, repairToolPairs } from "@unforget/core";
import type { TranscriptEntry } from "@unforget/transcript";
import { parseTranscript, projectMessages, TranscriptCorruptError } from "@unforget/transcript";
import { guardImport } from "../shared/guard-import.ts";
import type { ImportLocation, ImportProblem, ImportResult } from "../shared/import-result.ts";
import { ImportError } from "../shared/session-errors.ts";
import { parseSourceTimestamp } from "../shared/source-timestamp.ts";

/**
 * Imports our own JSONL transcript text. `entries` are the valid entries exactly as written (an append-only
 * transcript is never restructured); `messages` is the projection after the last compact boundary, repaired
 * with `repairToolPairs`. Invalid and torn lines (a line nested too deep to write back is one) and
 * entries from a newer version are reported with their line numbers as problems. The session id, working
 * directory and model come from the entries (`sessionId`, the last `metadata` entry's `data.workingDirectory`
 * and `data.model`, or the last assistant message's `model`).
 */
export function importUnforgetTranscript(text: string): ImportResult {
  return guardImport("unforget", () => importTranscript(text));
}

function importTranscript(text: string): ImportResult {
  let parsed: ReturnType<typeof parseTranscript>;
  try {
    parsed = parseTranscript(text);
  } catch (error) {
    if (error instanceof TranscriptCorruptError) {
      throw new ImportError(
        `${error.message} Expected an Unforget transcript (JSONL entries with v, type, id).`,
        {
          format: "unforget",
          cause: error,
        },
      );
    }
    throw error;
  }
  const problems: ImportProblem[] = parsed.problems.map((problem) => ({
    kind: problem.kind,
    location: { line: problem.line },
    description: problem.reason,
  }));
  // Lines nested too deep to write back are already invalid entries (the reader checks them).
  const entries = parsed.entries;
  const lineOf = new Map<string, number>();
  linesOfEntries(text, parsed).forEach((line, index) => {
    const entry = entries[index]!;
    if (line !== undefined && entry.type === "message") lineOf.set(entry.message.id, line);
  });
  const locate = (messageId: string): ImportLocation => {
    const at = lineOf.get(messageId);
    return at === undefined ? {} : { line: at };
  };

  const projected: Message[] = projectMessages(entries);
  const violations = findToolPairViolations(projected).map((violation) => ({
    ...violation,
    location: locate(violation.messageId),
  }));
  const repaired = repairToolPairs(projected);
  const repairs = repaired.repairs.map((repair) => ({ ...repair, location: locate(repair.messageId) }));
  const facts = countEntries(entries);
  const result: ImportResult = {
    messages: repaired.messages,
    entries,
    report: {
      format: "unforget",
      counts: {
        sourceItems: parsed.entries.length + parsed.problems.length,
        messages: facts.messages,
        liveMessages: repaired.messages.length,
        toolPairs: facts.toolPairs,
        boundaries: entries.filter((entry) => entry.type === "compact_boundary").length,
        summaries: entries.filter((entry) => entry.type === "summary").length,
        metaMessages: facts.metaMessages,
        sidechainSkipped: 0,
        offBranchSkipped: 0,
        mergedSourceItems: 0,
        skippedByType: parsed.unknownEntries.length > 0 ? { unknown: parsed.unknownEntries.length } : {},
        invalid: problems.filter((problem) => problem.kind !== "unknown_entry").length,
        repairs: repairs.length,
      },
      problems: problems.sort((a, b) => (a.location.line ?? 0) - (b.location.line ?? 0)),
      violations,
      repairs,
      remainingViolations: repaired.remaining,
    },
  };
  const sessionId = entries.find((entry) => entry.sessionId !== undefined)?.sessionId;
  if (sessionId !== undefined) result.sessionId = sessionId;
  if (facts.workingDirectory !== undefined) result.workingDirectory = facts.workingDirectory;
  if (facts.model !== undefined) result.model = facts.model;
  const startedAt = entries
    .map((entry) => parseSourceTimestamp(entry.timestamp))
    .find((time) => time !== undefined);
  if (startedAt !== undefined) result.startedAt = startedAt;
  return result;
}

/** Message counts, and the working directory and model the entries record (the last ones win). */
function countEntries(entries: TranscriptEntry[]) {
  const facts = {
    messages: 0,
    toolPairs: 0,
    metaMessages: 0,
    model: undefined as string | undefined,
    workingDirectory: undefined as string | undefined,
  };
  for (const entry of entries) {
    if (entry.type === "metadata") {
      if (typeof entry.data?.workingDirectory === "string")
        facts.workingDirectory = entry.data.workingDirectory;
      if (typeof entry.data?.model === "string") facts.model = entry.data.model;
    }
    if (entry.type !== "message") continue;
    facts.messages++;
    if (entry.message.isMeta) facts.metaMessages++;
    for (const block of entry.message.content) if (block.type === "tool_use") facts.toolPairs++;
    if (entry.message.role === "assistant" && typeof entry.message.model === "string")
      facts.model = entry.message.model;
  }
  return facts;
}

/** The 1-based line of each parsed entry: entries keep file order, so problem lines are skipped. */
function linesOfEntries(text: string, parsed: ReturnType<typeof parseTranscript>): (number | undefined)[] {
  const problemLines = new Set(parsed.problems.map((problem) => problem.line));
  const lines: number[] = [];
  let line = 0;
  let start = 0;
  while (start <= text.length) {
    const end = text.indexOf("\n", start);
    const stop = end === -1 ? text.length : end;
    line++;
    if (text.slice(start, stop).trim().length > 0 && !problemLines.has(line)) lines.push(line);
    if (end === -1) break;
    start = end + 1;
  }
  return parsed.entries.map((_, index) => lines[index]);
}
