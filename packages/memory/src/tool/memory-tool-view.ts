import {
  fail,
  humanSize,
  isFolder,
  isFolderOf,
  numbered,
  ok,
  readToolFile,
  resolveToolPath,
  splitLines,
  stringField,
  type TextOutput,
  type ToolContext,
} from "./memory-tool-paths.ts";

/** Characters of a file `view` returns before it cuts and points at `view_range`. */
export const MEMORY_TOOL_VIEW_MAX_CHARS = 16_000;
/** Files with more lines than this cannot be viewed. */
export const MEMORY_TOOL_MAX_LINES = 999_999;

/** `view`: a folder two levels deep, or a file with line numbers (optionally a range). */
export async function viewCommand(context: ToolContext, input: Record<string, unknown>): Promise<TextOutput> {
  const path = stringField(input, "path");
  const target = resolveToolPath(path);
  const folder = target.kind === "root" ? "" : target.name;
  if (target.kind === "root" || (await isFolder(context, folder))) {
    if (input.view_range !== undefined)
      return fail("Error: `view_range` is not allowed when `path` is a directory.");
    return ok(await listFolder(context, path.replace(/\/$/, ""), folder));
  }
  const file = target.folderOnly ? undefined : await readToolFile(context, folder);
  if (!file) return fail(`The path ${path} does not exist. Please provide a valid path.`);
  const lines = splitLines(file.content);
  if (lines.length > MEMORY_TOOL_MAX_LINES) {
    return fail(
      `File ${path} exceeds maximum line limit of ${MEMORY_TOOL_MAX_LINES.toLocaleString("en-US")} lines.`,
    );
  }
  let first = 1;
  let last = lines.length;
  if (input.view_range !== undefined) {
    const range = input.view_range;
    if (!Array.isArray(range) || range.length !== 2 || !range.every((n) => Number.isInteger(n))) {
      return fail(
        "Error: `view_range` must be two integers [start_line, end_line] (end_line -1 for the end).",
      );
    }
    const [start, end] = range as [number, number];
    const stop = end === -1 ? lines.length : end;
    if (start < 1 || start > Math.max(1, lines.length) || stop < start || stop > lines.length) {
      return fail(
        `Error: Invalid \`view_range\`: [${start}, ${end}]. Lines run from 1 to ${lines.length}; use [start_line, end_line] with start_line <= end_line, or end_line -1 for the end of the file.`,
      );
    }
    first = start;
    last = stop;
  }
  const header = `Here's the content of ${path} with line numbers:\n`;
  let body = numbered(lines.slice(first - 1, last), first);
  if (body.length > MEMORY_TOOL_VIEW_MAX_CHARS) {
    const cut = body.lastIndexOf("\n", MEMORY_TOOL_VIEW_MAX_CHARS);
    const shown = body.slice(0, cut > 0 ? cut : MEMORY_TOOL_VIEW_MAX_CHARS);
    const shownLines = shown.split("\n").length;
    body = `${shown}\n[Output cut at ${MEMORY_TOOL_VIEW_MAX_CHARS} characters after line ${first + shownLines - 1}; view the rest with view_range [${first + shownLines}, ${last}].]`;
  }
  return ok(header + body);
}

async function listFolder(context: ToolContext, path: string, folder: string): Promise<string> {
  const entries = (await context.store.list()).filter((entry) => isFolderOf(folder, entry));
  const index = await readToolFile(context, "MEMORY.md");
  const sizes = new Map<string, number>();
  const depthOf = (name: string) => (folder === "" ? name : name.slice(folder.length + 1)).split("/");
  const all =
    index && folder === ""
      ? [{ name: "MEMORY.md", size: Buffer.byteLength(index.content) }, ...entries]
      : entries;
  let total = 0;
  for (const entry of all) {
    total += entry.size;
    const parts = depthOf(entry.name);
    for (let depth = 1; depth <= Math.min(2, parts.length); depth++) {
      const key = parts.slice(0, depth).join("/");
      sizes.set(key, (sizes.get(key) ?? 0) + entry.size);
    }
  }
  const lines = [`${humanSize(total)}\t${path}`];
  for (const key of [...sizes.keys()].sort()) lines.push(`${humanSize(sizes.get(key) ?? 0)}\t${path}/${key}`);
  return `Here're the files and directories up to 2 levels deep in ${path}, excluding hidden items and node_modules:\n${lines.join("\n")}`;
}
