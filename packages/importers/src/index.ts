export type {
  ClaudeCodeSessionImport,
  ClaudeCodeSessionSource,
  ClaudeCodeSubagentImport,
  ClaudeCodeSubagentSource,
} from "./claude-code/import-claude-code-session.ts";
export { importClaudeCodeSession } from "./claude-code/import-claude-code-session.ts";
export { importClaudeCodeTranscript } from "./claude-code/import-claude-code-transcript.ts";
export type { ReadClaudeCodeSessionDirOptions } from "./claude-code/read-claude-code-session-dir.ts";
export { readClaudeCodeSessionDir } from "./claude-code/read-claude-code-session-dir.ts";
export type { OpenHandsInstanceImport } from "./openhands/import-openhands-trajectory.ts";
export {
  importOpenHandsEvaluationOutput,
  importOpenHandsTrajectory,
} from "./openhands/import-openhands-trajectory.ts";
export type { SessionFormat, SessionFormatAttempt } from "./session/detect-session-format.ts";
export type { ImportSessionFileOptions } from "./session/import-session-file.ts";
export { importSessionFile } from "./session/import-session-file.ts";
export type { ImportSessionOptions, SessionImport } from "./session/import-session-text.ts";
export { importSessionText } from "./session/import-session-text.ts";
export type {
  ImportCounts,
  ImportFormat,
  ImportLocation,
  ImportProblem,
  ImportRepair,
  ImportReport,
  ImportResult,
  ImportViolation,
} from "./shared/import-result.ts";
export type { SessionFileErrorKind } from "./shared/session-errors.ts";
export { ImportError, SessionFileError, UnrecognizedSessionError } from "./shared/session-errors.ts";
export { importMiniSweAgentTrajectory } from "./swe-agent/import-mini-swe-agent-trajectory.ts";
export { importSweAgentTrajectory } from "./swe-agent/import-swe-agent-trajectory.ts";
export { importUnforgetTranscript } from "./unforget/import-unforget-transcript.ts";
