export type { SessionFormat, SessionFormatAttempt } from "./detect-session-format.ts";
export type {
  ClaudeCodeSessionImport,
  ClaudeCodeSessionSource,
  ClaudeCodeSubagentImport,
  ClaudeCodeSubagentSource,
} from "./import-claude-code-session.ts";
export { importClaudeCodeSession } from "./import-claude-code-session.ts";
export { importClaudeCodeTranscript } from "./import-claude-code-transcript.ts";
export { importMiniSweAgentTrajectory } from "./import-mini-swe-agent-trajectory.ts";
export type { OpenHandsInstanceImport } from "./import-openhands-trajectory.ts";
export {
  importOpenHandsEvaluationOutput,
  importOpenHandsTrajectory,
} from "./import-openhands-trajectory.ts";
export type {
  ImportCounts,
  ImportFormat,
  ImportLocation,
  ImportProblem,
  ImportRepair,
  ImportReport,
  ImportResult,
  ImportViolation,
} from "./import-result.ts";
export type { ImportSessionFileOptions } from "./import-session-file.ts";
export { importSessionFile } from "./import-session-file.ts";
export type { ImportSessionOptions, SessionImport } from "./import-session-text.ts";
export { importSessionText } from "./import-session-text.ts";
export { importSweAgentTrajectory } from "./import-swe-agent-trajectory.ts";
export { importUnforgetTranscript } from "./import-unforget-transcript.ts";
export type { ReadClaudeCodeSessionDirOptions } from "./read-claude-code-session-dir.ts";
export { readClaudeCodeSessionDir } from "./read-claude-code-session-dir.ts";
export type { SessionFileErrorKind } from "./session-errors.ts";
export { ImportError, SessionFileError, UnrecognizedSessionError } from "./session-errors.ts";
