import type { Message } from "@unforget/core";
import {
  findToolPairViolations,
  ImportError,
  parseTranscript,
  projectMessages,
  repairToolPairs,
  TranscriptCorruptError,
} from "@unforget/core";
import type { ImportLocation, ImportResult } from "./import-result.ts";

/**
 * Imports our own JSONL transcript text. `entries` are the valid entries exactly as written (an append-only
 * transcript is never restructured); `messages` is the projection after the last compact boundary, repaired
 * with `repairToolPairs`. Invalid and torn lines and entries from a newer version are reported with their line
 * numbers as problems.
 */
export function importUnforgetTranscript(text: string): ImportResult {
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
  const lineOf = new Map<string, number>();
  let line = 0;
  const lines = text.split("\n");
  const entryLines: number[] = [];
  for (const raw of lines) {
    line++;
    if (raw.trim().length > 0) entryLines.push(line);
  }
  // Entries keep file order, so the n-th entry's line is found by skipping problem lines.
  const problemLines = new Set(parsed.problems.map((problem) => problem.line));
  const validLines = entryLines.filter((candidate) => !problemLines.has(candidate));
  parsed.entries.forEach((entry, index) => {
    const at = validLines[index];
    if (at !== undefined && entry.type === "message") lineOf.set(entry.message.id, at);
  });
  const locate = (messageId: string): ImportLocation => {
    const at = lineOf.get(messageId);
    return at === undefined ? {} : { line: at };
  };

  const projected: Message[] = projectMessages(parsed.entries);
  const violations = findToolPairViolations(projected).map((violation) => ({
    ...violation,
    location: locate(violation.messageId),
  }));
  const repaired = repairToolPairs(projected);
  const repairs = repaired.repairs.map((repair) => ({ ...repair, location: locate(repair.messageId) }));
  const messageEntries = parsed.entries.filter((entry) => entry.type === "message");
  const problems = parsed.problems.map((problem) => ({
    kind: problem.kind,
    location: { line: problem.line },
    description: problem.reason,
  }));
  return {
    messages: repaired.messages,
    entries: parsed.entries,
    report: {
      format: "unforget",
      counts: {
        sourceItems: parsed.entries.length + parsed.problems.length,
        messages: messageEntries.length,
        liveMessages: repaired.messages.length,
        toolPairs: messageEntries.reduce(
          (sum, entry) => sum + entry.message.content.filter((block) => block.type === "tool_use").length,
          0,
        ),
        boundaries: parsed.entries.filter((entry) => entry.type === "compact_boundary").length,
        summaries: parsed.entries.filter((entry) => entry.type === "summary").length,
        metaMessages: messageEntries.filter((entry) => entry.message.isMeta).length,
        sidechainSkipped: 0,
        offBranchSkipped: 0,
        mergedSourceItems: 0,
        skippedByType: parsed.unknownEntries.length > 0 ? { unknown: parsed.unknownEntries.length } : {},
        invalid: parsed.problems.filter((problem) => problem.kind !== "unknown_entry").length,
        repairs: repairs.length,
      },
      problems,
      violations,
      repairs,
      remainingViolations: repaired.remaining,
    },
  };
}
