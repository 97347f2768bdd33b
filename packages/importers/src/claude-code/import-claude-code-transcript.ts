import { finishImport } from "../shared/finish-import.ts";
import { guardImport } from "../shared/guard-import.ts";
import type { ImportResult } from "../shared/import-result.ts";
import { createImportDraft } from "../shared/import-result.ts";
import { ImportError } from "../shared/session-errors.ts";
import { readSourceLines, selectActiveBranch, sortLines } from "./claude-code-source-lines.ts";
import { convertLines } from "./convert-claude-code-lines.ts";

const EXPECTED =
  "Claude Code session JSONL (one JSON object per line with type, uuid, parentUuid, message), or a JSON object with a `loglines` array";

/**
 * Imports a Claude Code session (`~/.claude/projects/<project>/<session>.jsonl`). Assistant lines split from
 * one response are merged by `message.id`; tool results come from user lines; `isMeta` lines become meta
 * messages; `system/compact_boundary` lines become boundaries and the `isCompactSummary` user line after
 * one becomes the summary message; `summary` lines become title summaries; sidechain (subagent) lines are
 * skipped and counted. When parent links are complete and a `/rewind` left several branches, the active
 * branch (ending at the newest leaf) is imported and the other lines are counted as off-branch. Unreadable
 * lines are reported with their line numbers; tool-pair defects are repaired and reported.
 */
export function importClaudeCodeTranscript(text: string): ImportResult {
  return guardImport("claude-code", () => importClaudeCodeLines(text, { subagentFile: false }));
}

export interface ClaudeCodeLinesOptions {
  /**
   * True for a subagent's own file (`subagents/agent-<id>.jsonl`): its lines carry `isSidechain: true` and are
   * the conversation, so they are imported instead of skipped.
   */
  subagentFile: boolean;
}

/** Imports Claude Code lines; `importClaudeCodeTranscript` and `importClaudeCodeSession` share it. */
export function importClaudeCodeLines(text: string, options: ClaudeCodeLinesOptions): ImportResult {
  if (typeof text !== "string") {
    throw new ImportError(`importClaudeCodeTranscript expects the file's text; expected ${EXPECTED}.`, {
      format: "claude-code",
    });
  }
  const draft = createImportDraft("claude-code");
  const lines = readSourceLines(text, draft);
  if (lines.length === 0) {
    throw new ImportError(
      `The input has no Claude Code line (no JSON object among ${draft.counts.sourceItems} item(s)); expected ${EXPECTED}.`,
      { format: "claude-code" },
    );
  }
  const conversational = sortLines(lines, draft, options);
  const active = selectActiveBranch(conversational, lines, draft, options.subagentFile);
  convertLines(active, draft);
  return finishImport(draft);
}
