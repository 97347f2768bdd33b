import type { ClaudeCodeSubagentImport } from "../claude-code/import-claude-code-session.ts";
import { importClaudeCodeTranscript } from "../claude-code/import-claude-code-transcript.ts";
import type { OpenHandsInstanceImport } from "../openhands/import-openhands-trajectory.ts";
import {
  importOpenHandsEvaluationOutput,
  importOpenHandsTrajectory,
} from "../openhands/import-openhands-trajectory.ts";
import type { ImportResult } from "../shared/import-result.ts";
import { UnrecognizedSessionError } from "../shared/session-errors.ts";
import { importMiniSweAgentTrajectory } from "../swe-agent/import-mini-swe-agent-trajectory.ts";
import { importSweAgentTrajectory } from "../swe-agent/import-swe-agent-trajectory.ts";
import { importUnforgetTranscript } from "../unforget/import-unforget-transcript.ts";
import type { SessionFormat } from "./detect-session-format.ts";
import { detectSessionFormat } from "./detect-session-format.ts";

/** A session imported by `importSessionFile` or `importSessionText`: the import, and what it was read as. */
export interface SessionImport extends ImportResult {
  /** The format the content was recognised as (or the one `options.format` named). */
  format: SessionFormat;
  /** The file that was read (the main `.jsonl` for a Claude Code session folder); absent for text. */
  path?: string;
  /** Claude Code: one import per subagent file beside the session; empty for other formats. */
  subagents: ClaudeCodeSubagentImport[];
  /** OpenHands evaluation output: every run in it (this result is the first one's); empty otherwise. */
  instances: OpenHandsInstanceImport[];
}

export interface ImportSessionOptions {
  /** Import as this format without detecting it; the format's importer reports what does not fit. */
  format?: SessionFormat;
}

/**
 * Imports a session given as text, recognising its format by content (see `importSessionFile`). Throws
 * `UnrecognizedSessionError`, listing every format tried and why it did not fit, when none does.
 */
export function importSessionText(text: string, options: ImportSessionOptions = {}): SessionImport {
  const content = text.startsWith("\uFEFF") ? text.slice(1) : text;
  if (options.format !== undefined) return importAs(options.format, content, undefined);
  const detected = detectSessionFormat(content);
  if (detected.format === undefined) throw new UnrecognizedSessionError(detected.attempts);
  return importAs(detected.format, content, detected.document);
}

/** Imports text as one format; `document` is the text already parsed as JSON, when it was. */
export function importAs(format: SessionFormat, text: string, document: unknown): SessionImport {
  const json = document === undefined ? text : document;
  const single = (result: ImportResult): SessionImport => ({
    ...result,
    format,
    subagents: [],
    instances: [],
  });
  switch (format) {
    case "claude-code":
      return single(importClaudeCodeTranscript(text));
    case "swe-agent":
      return single(importSweAgentTrajectory(json));
    case "mini-swe-agent":
      return single(importMiniSweAgentTrajectory(json));
    case "openhands":
      return single(importOpenHandsTrajectory(json));
    case "unforget":
      return single(importUnforgetTranscript(text));
    case "openhands-evaluation": {
      const instances = importOpenHandsEvaluationOutput(text);
      return { ...instances[0]!.result, format, subagents: [], instances };
    }
  }
}
