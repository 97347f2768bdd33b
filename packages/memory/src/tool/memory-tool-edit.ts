import type { MemoryEntry } from "../store/memory-catalog.ts";
import { MemoryConflictError } from "../store/memory-errors.ts";
import {
  fail,
  fileName,
  isFolder,
  MEMORY_TOOL_ROOT,
  numbered,
  ok,
  type Resolved,
  readToolFile,
  resolveToolPath,
  splitLines,
  stringField,
  type TextOutput,
  type ToolContext,
} from "./memory-tool-paths.ts";

/** The file a `str_replace` or `insert` edits: its name and what it holds now, or undefined when there is none. */
async function readExistingFile(context: ToolContext, path: string) {
  const name = fileName(resolveToolPath(path), path);
  const file = name === undefined ? undefined : await readToolFile(context, name);
  return file === undefined || name === undefined ? undefined : { name, file };
}

/** The refusal of a file name that is not markdown (`create`, a rename's destination); undefined when it is. */
function refuseNonMarkdown(
  target: Extract<Resolved, { kind: "name" }>,
  path: string,
): TextOutput | undefined {
  fileName(target, path);
  if (target.name.endsWith(".md")) return undefined;
  return fail(
    `Error: The path ${path} is not allowed: memory files are markdown and their names end in .md.`,
  );
}

/** `create`: a new file only (the reference behaviour), compare-and-swap on "does not exist". */
export async function createCommand(
  context: ToolContext,
  input: Record<string, unknown>,
): Promise<TextOutput> {
  const path = stringField(input, "path");
  const text = stringField(input, "file_text");
  const target = resolveToolPath(path);
  if (target.kind === "root" || (await isFolder(context, target.name)))
    return fail(`Error: File ${path} already exists`);
  const refused = refuseNonMarkdown(target, path);
  if (refused) return refused;
  try {
    await context.store.write(target.name, text, { expectedHash: null, author: context.author });
  } catch (error) {
    if (error instanceof MemoryConflictError) return fail(`Error: File ${path} already exists`);
    throw error;
  }
  return ok(`File created successfully at: ${path}`);
}

/** `str_replace`: one unique occurrence, written back conditioned on the hash it read. */
export async function strReplaceCommand(
  context: ToolContext,
  input: Record<string, unknown>,
): Promise<TextOutput> {
  const path = stringField(input, "path");
  const oldText = stringField(input, "old_str");
  const newText = input.new_str === undefined ? "" : stringField(input, "new_str");
  const existing = await readExistingFile(context, path);
  if (!existing) return fail(`Error: The path ${path} does not exist. Please provide a valid path.`);
  const { name, file } = existing;
  const occurrences: number[] = [];
  for (
    let at = file.content.indexOf(oldText);
    at !== -1 && oldText !== "";
    at = file.content.indexOf(oldText, at + 1)
  ) {
    occurrences.push(file.content.slice(0, at).split("\n").length);
  }
  if (occurrences.length === 0) {
    return fail(`No replacement was performed, old_str \`${oldText}\` did not appear verbatim in ${path}.`);
  }
  if (occurrences.length > 1) {
    return fail(
      `No replacement was performed. Multiple occurrences of old_str \`${oldText}\` in lines: ${occurrences.join(", ")}. Please ensure it is unique`,
    );
  }
  const at = file.content.indexOf(oldText);
  const next = file.content.slice(0, at) + newText + file.content.slice(at + oldText.length);
  const written = await writeBack(context, name, path, next, file.hash);
  if (written) return written;
  const editedLine = occurrences[0] ?? 1;
  const lines = splitLines(next);
  const from = Math.max(1, editedLine - 4);
  const to = Math.min(lines.length, editedLine + newText.split("\n").length + 3);
  return ok(`The memory file has been edited.\n${numbered(lines.slice(from - 1, to), from)}`);
}

/** `insert`: after line `insert_line` (0 is the top), written back conditioned on the hash it read. */
export async function insertCommand(
  context: ToolContext,
  input: Record<string, unknown>,
): Promise<TextOutput> {
  const path = stringField(input, "path");
  const text = stringField(input, "insert_text");
  const line = input.insert_line;
  const existing = await readExistingFile(context, path);
  if (!existing) return fail(`Error: The path ${path} does not exist`);
  const { name, file } = existing;
  const lines = splitLines(file.content);
  const lineCount = file.content === "" ? 0 : lines.length;
  if (typeof line !== "number" || !Number.isInteger(line) || line < 0 || line > lineCount) {
    return fail(
      `Error: Invalid \`insert_line\` parameter: ${String(line)}. It should be within the range of lines of the file: [0, ${lineCount}]`,
    );
  }
  const kept = file.content === "" ? [] : lines;
  const inserted = text.replace(/\n$/, "").split("\n");
  const next = `${[...kept.slice(0, line), ...inserted, ...kept.slice(line)].join("\n")}\n`;
  const written = await writeBack(context, name, path, next, file.hash);
  return written ?? ok(`The file ${path} has been edited.`);
}

async function writeBack(context: ToolContext, name: string, path: string, next: string, hash: string) {
  try {
    await context.store.write(name, next, { expectedHash: hash, author: context.author });
    return undefined;
  } catch (error) {
    if (error instanceof MemoryConflictError) {
      return fail(`Error: ${path} was changed by someone else while this edit ran; view it again and retry.`);
    }
    throw error;
  }
}

async function filesUnder(context: ToolContext, folder: string): Promise<MemoryEntry[]> {
  return (await context.store.list()).filter((entry) => entry.name.startsWith(`${folder}/`));
}

/** `delete`: a file, or a folder file by file; every file keeps its last version. */
export async function deleteCommand(
  context: ToolContext,
  input: Record<string, unknown>,
): Promise<TextOutput> {
  const path = stringField(input, "path");
  const target = resolveToolPath(path);
  if (target.kind === "root")
    return fail(`Error: The ${MEMORY_TOOL_ROOT} directory itself cannot be deleted.`);
  if (await isFolder(context, target.name)) {
    for (const entry of await filesUnder(context, target.name))
      await context.store.delete(entry.name, { expectedHash: entry.hash, author: context.author });
    return ok(`Successfully deleted ${path}`);
  }
  if (target.folderOnly || !(await readToolFile(context, target.name)))
    return fail(`Error: The path ${path} does not exist`);
  await context.store.delete(target.name, { author: context.author });
  return ok(`Successfully deleted ${path}`);
}

/** `rename`: a file, or a folder file by file; never over an existing destination. */
export async function renameCommand(
  context: ToolContext,
  input: Record<string, unknown>,
): Promise<TextOutput> {
  const oldPath = stringField(input, "old_path");
  const newPath = stringField(input, "new_path");
  const source = resolveToolPath(oldPath);
  const target = resolveToolPath(newPath);
  if (source.kind === "root")
    return fail(`Error: The ${MEMORY_TOOL_ROOT} directory itself cannot be renamed.`);
  if (
    target.kind === "root" ||
    (await isFolder(context, target.name)) ||
    (await readToolFile(context, target.name))
  ) {
    return fail(`Error: The destination ${newPath} already exists`);
  }
  if (await isFolder(context, source.name)) {
    for (const entry of await filesUnder(context, source.name)) {
      await context.store.rename(entry.name, `${target.name}${entry.name.slice(source.name.length)}`, {
        expectedHash: entry.hash,
        author: context.author,
      });
    }
    return ok(`Successfully renamed ${oldPath} to ${newPath}`);
  }
  if (source.folderOnly || !(await readToolFile(context, source.name)))
    return fail(`Error: The path ${oldPath} does not exist`);
  const refused = refuseNonMarkdown(target, newPath);
  if (refused) return refused;
  try {
    await context.store.rename(source.name, target.name, { author: context.author });
  } catch (error) {
    if (error instanceof MemoryConflictError) return fail(`Error: The destination ${newPath} already exists`);
    throw error;
  }
  return ok(`Successfully renamed ${oldPath} to ${newPath}`);
}
