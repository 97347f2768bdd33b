import { access } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { importClaudeCodeSession } from "../claude-code/import-claude-code-session.ts";
import { readClaudeCodeSessionDir } from "../claude-code/read-claude-code-session-dir.ts";
import { SessionFileError, UnrecognizedSessionError } from "../shared/session-errors.ts";
import type { SessionFormat } from "./detect-session-format.ts";
import { detectSessionFormat } from "./detect-session-format.ts";
import type { ImportSessionOptions, SessionImport } from "./import-session-text.ts";
import { importAs } from "./import-session-text.ts";
import { checkMaxBytes, readSessionText, statSource } from "./read-session-bytes.ts";

export interface ImportSessionFileOptions extends ImportSessionOptions {
  /**
   * The largest file read, in bytes (default 256 MiB, at most the longest string Node holds, about 512 MiB).
   * A larger file is refused before it is read, with a `SessionFileError` of kind `too_large`.
   */
  maxBytes?: number;
}

/**
 * Imports a session from a path, recognising its format by content (the file name is not trusted): a Claude
 * Code session file — with its subagents when the session folder lies beside it — or the session folder
 * itself, a SWE-agent `.traj`, a mini-swe-agent run, an OpenHands event stream or evaluation output, or an
 * Unforget transcript. The result says what it read (`format`, `path`) and holds the import (`messages`,
 * `entries`, `report` with every problem and repair, the session facts). The source is only read, never
 * written.
 *
 * Throws `SessionFileError` (with `kind`) for a path that is missing, not a file, unreadable, empty, binary
 * or larger than `maxBytes`; `UnrecognizedSessionError` (with `attempts`) when no format fits; `ImportError`
 * when the chosen format's importer cannot read the content at all. Defects inside a readable session — a
 * line cut off at the end, invalid lines, values of the wrong type — are reported in `report.problems`.
 */
export async function importSessionFile(
  path: string,
  options: ImportSessionFileOptions = {},
): Promise<SessionImport> {
  const maxBytes = checkMaxBytes(options.maxBytes);
  const info = await statSource(path);
  if (info.isDirectory()) return importClaudeCodeFolder(path, maxBytes, options.format);
  const raw = await readSessionText(path, maxBytes);
  const text = raw.startsWith("\uFEFF") ? raw.slice(1) : raw;
  let format: SessionFormat;
  let document: unknown;
  if (options.format === undefined) {
    const detected = detectSessionFormat(text);
    if (detected.format === undefined) throw new UnrecognizedSessionError(detected.attempts, path);
    ({ format, document } = detected);
  } else {
    format = options.format;
  }
  const folder = path.replace(/\.jsonl$/, "");
  if (format === "claude-code" && folder !== path && (await exists(join(folder, "subagents")))) {
    // The session folder beside the file holds its subagents: import them linked to their Task calls.
    const source = await readClaudeCodeSessionDir(path, { maxBytes });
    const session = importClaudeCodeSession({ ...source, main: text });
    return { ...session.main, format, path, subagents: session.subagents, instances: [] };
  }
  return { ...importAs(format, text, document), path };
}

/** A Claude Code session folder (`<project>/<sessionId>/`): its main file lies beside it as `<sessionId>.jsonl`. */
async function importClaudeCodeFolder(
  path: string,
  maxBytes: number,
  format: SessionFormat | undefined,
): Promise<SessionImport> {
  const folder = path.replace(/[\\/]+$/, "");
  const mainPath = join(dirname(folder), `${basename(folder)}.jsonl`);
  if ((format !== undefined && format !== "claude-code") || !(await exists(mainPath))) {
    throw new SessionFileError(
      `${path} is a folder, and no ${basename(mainPath)} lies beside it as a Claude Code session folder has; pass a session file instead.`,
      { path, kind: "not_a_file" },
    );
  }
  return importSessionFile(mainPath, { maxBytes, format: "claude-code" });
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
