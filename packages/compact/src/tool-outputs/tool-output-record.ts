import type { ToolUseBlock } from "@unforget/core";
import { clip, describeToolCall, oneLine } from "../conversation/conversation.ts";
import { ERROR_LINE_CHARS, FIRST_ERROR_LINE_CHARS, MAX_ERROR_LINES } from "../defaults.ts";

// The exit status as shells and agent harnesses print it: "Exit code 1" (Claude Code), "[The command completed
// with exit code 1.]" (OpenHands), "<returncode>1</returncode>" (mini-swe-agent), "exited with status 2", ….
const EXIT_STATUS = [
  /\bexit(?:ed with)? (?:code|status)[:=]?\s*`?(-?\d+)/gi,
  /<returncode>\s*(-?\d+)\s*<\/returncode>/gi,
  /\breturn ?code[:=]\s*(-?\d+)/gi,
];

// A line that says what went wrong. Anchored at the line's start (after indentation), so that source code
// that merely mentions an error (`raise ValueError(msg)`, `1466:  except OSError:`) is not taken for one.
const ERROR_LINE = [
  // Exceptions: "ValueError: invalid literal", "TypeError: x is not a function", "AssertionError", and
  // Node's coded ones: "AssertionError [ERR_ASSERTION]: …".
  /^[A-Z][\w.]*(?:Error|Exception|Failure|Interrupt)\b(?: \[[A-Z][A-Z0-9_]*\])?(?::|$)/,
  // Compilers and tools: "error: …", "error[E0308]: …", "fatal: …", "panic: …", "ERROR: …", "npm ERR! …".
  /^(?:error|fatal|panic)(?:\[[A-Z]*\d+\])?:/i,
  /^npm ERR!/,
  // Located diagnostics: "src/a.ts(3,5): error TS2345: …", "a.py:1:1: E999 IndentationError", "- E999 …".
  /^\S+?[(:]\d+[,:]\d+\)?:?\s+(?:error\b|[EF]\d{3}\b)/i,
  /^-\s+[EF]\d{3,4}\b/,
  // Failing tests: jest / vitest "FAIL src/a.test.ts", pytest "FAILED tests/x.py::test_y", go "--- FAIL: TestX",
  // TAP "not ok 3 - name", vitest / mocha "× name" / "✗ name", pytest's assertion detail "E   assert 1 == 2".
  /^(?:FAIL|FAILED)\b/,
  /^--- FAIL:/,
  /^not ok \d+/,
  /^[×✗✕✘]\s+\S/,
  /^E {2,}\S/,
  // Shell failures.
  /: (?:command not found|No such file or directory|Permission denied)$/,
  /^Segmentation fault\b/,
];

const PYTHON_FRAME = /^File ".+", line \d+/;

// An error code inside a line: TS2345, E0308, ENOENT, ERR_MODULE_NOT_FOUND.
const ERROR_CODE = /\b(?:TS\d{4}|E\d{3,4}|ERR_[A-Z_]+|E[A-Z]{4,})\b/;

/** The exit status a tool output reports (the last one it prints), when it reports one. */
export function findExitStatus(text: string): number | undefined {
  let found: number | undefined;
  let at = -1;
  for (const pattern of EXIT_STATUS) {
    for (const match of text.matchAll(pattern)) {
      if ((match.index ?? 0) >= at) {
        at = match.index ?? 0;
        found = Number(match[1]);
      }
    }
  }
  return found;
}

/**
 * The first lines of a tool output that say what went wrong, in order, each once: exceptions and compiler
 * errors with their codes (`error TS2345`, `error[E0308]`, `ENOENT`), the first frame of a stack trace after
 * them, failing test names (jest, vitest, pytest, go, TAP), and shell failures. The first is kept whole up to
 * 500 characters, the others are cut to 160.
 */
export function findErrorLines(text: string, max = MAX_ERROR_LINES): string[] {
  const found: string[] = [];
  const add = (line: string) => {
    const clipped = clip(oneLine(line), found.length === 0 ? FIRST_ERROR_LINE_CHARS : ERROR_LINE_CHARS);
    if (found.length < max && !found.includes(clipped)) found.push(clipped);
  };
  const lines = text.split(/\r?\n/);
  // The innermost frame of a Python traceback, printed before its exception line.
  let pythonFrame: string | undefined;
  for (let index = 0; index < lines.length && found.length < max; index++) {
    const line = lines[index]!.trim();
    if (PYTHON_FRAME.test(line)) pythonFrame = line;
    if (line.length === 0 || !isErrorLine(line)) continue;
    add(line);
    // The head of the stack trace: the frame after a JavaScript error line, the failing frame of a Python one.
    const next = lines[index + 1]?.trim();
    if (next?.startsWith("at ")) add(next);
    else if (pythonFrame !== undefined) add(pythonFrame);
    pythonFrame = undefined;
  }
  return found;
}

/** Whether one line (trimmed) says that something went wrong. */
export function isErrorLine(line: string): boolean {
  if (ERROR_LINE.some((pattern) => pattern.test(line))) return true;
  return ERROR_CODE.test(line) && /\b(?:error|ERR|fail(?:ed|ure)?)\b/i.test(line) && !/^\d+[:|]/.test(line);
}

/**
 * What a tool output came to, in one line: the exit status and the first error lines when it has them (so
 * errors survive clearing), else its first line; then its length in lines. `isError` marks a failed call
 * whose text names no exit status.
 */
export function describeOutcome(text: string, isError = false): string {
  const lineCount = text.split("\n").length;
  const size = lineCount > 1 ? ` (${lineCount.toLocaleString("en-US")} lines)` : "";
  const status = findExitStatus(text);
  const errors = findErrorLines(text);
  const head =
    status !== undefined && (status !== 0 || errors.length > 0)
      ? `exit ${status}`
      : isError
        ? "error"
        : undefined;
  if (errors.length > 0) return `${head ? `${head}: ` : ""}${errors.join(" | ")}${size}`;
  const first =
    text
      .split("\n")
      .find((line) => line.trim().length > 0)
      ?.trim() ?? "(empty)";
  return `${head ? `${head}: ` : ""}${clip(oneLine(first), 100)}${size}`;
}

const SAVED_AT = " — saved at ";

/**
 * The one-line record of a tool call and its output: `Bash(npm test) → exit 1: FAIL src/a.test.ts | … (340 lines)`;
 * with `savedPath`, where the whole output was saved follows (` — saved at /…/tool-results/toolu_1`).
 */
export function toolOutputRecord(
  call: Pick<ToolUseBlock, "name" | "input"> | undefined,
  text: string,
  isError = false,
  savedPath?: string,
): string {
  const outcome = withSavedPath(describeOutcome(text, isError), savedPath);
  return call ? `${describeToolCall(call)} → ${outcome}` : outcome;
}

/** A record (or its outcome) without the place its output was saved, and that place when it says one. */
export function splitSavedPath(record: string): { record: string; savedPath?: string } {
  const at = record.lastIndexOf(SAVED_AT);
  const savedPath = at < 0 ? "" : record.slice(at + SAVED_AT.length).trim();
  return savedPath.length === 0 ? { record } : { record: record.slice(0, at), savedPath };
}

/** A record with the place its output was saved (as `toolOutputRecord` writes it). */
export function withSavedPath(record: string, savedPath: string | undefined): string {
  return savedPath === undefined ? record : `${record}${SAVED_AT}${savedPath}`;
}

/**
 * An outcome cut after its first error line (which `findErrorLines` keeps whole up to 500 characters): the
 * exit status and that line survive, later error lines and the size may not.
 */
export function clipOutcome(outcome: string): string {
  const head = /^(?:exit -?\d+|error): /.exec(outcome)?.[0].length ?? 0;
  return clip(outcome, head + FIRST_ERROR_LINE_CHARS);
}
