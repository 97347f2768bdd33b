import { diffLines } from "diff";

/** One line of a change: kept, removed or added, with its line number in the file when it is known. */
export interface DiffLine {
  kind: "context" | "removed" | "added";
  /** 1-based: the old file's line for a removed one, the new file's for the others. */
  line: number | undefined;
  text: string;
}

/** What an edit changed, as a small diff. */
export interface EditDiff {
  added: number;
  removed: number;
  /** How many places it changed (`replace_all`), when more than one. */
  occurrences: number | undefined;
  lines: DiffLine[];
}

/** The numbered lines a result quotes (`     12\tcode`, as Read and Edit print them), by number. */
function quotedLines(output: string): Map<number, string> {
  const lines = new Map<number, string>();
  for (const match of output.matchAll(/^ *(\d+)\t(.*)$/gm)) lines.set(Number(match[1]), match[2] ?? "");
  return lines;
}

/**
 * The whole lines the new text lies in, from the quoted ones: where they start and what they read. An edit's
 * strings may begin or end inside a line (`return 3;` of `  return 3;`): the diff shows the lines as they are.
 */
function locate(quoted: Map<number, string>, text: string): { start: number; lines: string } | undefined {
  const count = text.split("\n").length;
  for (const start of quoted.keys()) {
    const lines = Array.from({ length: count }, (_, offset) => quoted.get(start + offset));
    if (lines.some((line) => line === undefined)) continue;
    const joined = lines.join("\n");
    if (joined.includes(text)) return { start, lines: joined };
  }
  return undefined;
}

/**
 * The change an edit-shaped call made (`old_string` → `new_string`, the input of Claude Code's Edit and of any
 * tool that takes the same fields), as lines to draw: what was removed and added first, the unchanged lines of the
 * replaced text around them. When the result quotes the new text with line numbers (as Edit does), the lines are
 * whole and numbered; otherwise they are the strings as given, without numbers. Undefined for any other input.
 */
export function editDiff(input: Record<string, unknown>, output: string): EditDiff | undefined {
  const before = input.old_string;
  const after = input.new_string;
  if (typeof before !== "string" || typeof after !== "string" || before === after) return undefined;
  const replaced = /replaced (\d+) occurrences/.exec(output);
  const found = replaced || after === "" ? undefined : locate(quotedLines(output), after);
  const oldText = found ? found.lines.replace(after, () => before) : before;
  const newText = found ? found.lines : after;
  const lines: DiffLine[] = [];
  let oldLine = found?.start;
  let newLine = found?.start;
  let added = 0;
  let removed = 0;
  for (const part of diffLines(oldText, newText)) {
    const texts = part.value.replace(/\n$/, "").split("\n");
    for (const text of texts) {
      if (part.removed) {
        lines.push({ kind: "removed", line: oldLine, text });
        removed++;
        if (oldLine !== undefined) oldLine++;
      } else if (part.added) {
        lines.push({ kind: "added", line: newLine, text });
        added++;
        if (newLine !== undefined) newLine++;
      } else {
        lines.push({ kind: "context", line: newLine, text });
        if (oldLine !== undefined) oldLine++;
        if (newLine !== undefined) newLine++;
      }
    }
  }
  return { added, removed, occurrences: replaced ? Number(replaced[1]) : undefined, lines };
}

/** "1 line added, 2 removed", "3 lines added" (in 4 places). */
export function describeDiff(diff: EditDiff): string {
  const parts = [
    diff.added > 0 ? `${diff.added} line${diff.added === 1 ? "" : "s"} added` : "",
    diff.removed > 0
      ? `${diff.removed}${diff.added > 0 ? "" : ` line${diff.removed === 1 ? "" : "s"}`} removed`
      : "",
  ].filter((part) => part !== "");
  const where = diff.occurrences !== undefined ? ` in each of ${diff.occurrences} places` : "";
  return `${parts.join(", ") || "changed within a line"}${where}`;
}

/** The lines to show folded: the changed ones, with at most `context` unchanged lines around each run of them. */
export function foldDiff(diff: EditDiff, max: number, context = 1): { shown: DiffLine[]; more: number } {
  const near = diff.lines.map((_, index) =>
    diff.lines
      .slice(Math.max(0, index - context), index + context + 1)
      .some((other) => other.kind !== "context"),
  );
  const kept = diff.lines.filter((_, index) => near[index]);
  return { shown: kept.slice(0, max), more: Math.max(0, kept.length - max) };
}
