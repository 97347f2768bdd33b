import type { Tool, ToolContext } from "@unforget/core";
import { defineBuiltinTool } from "../define-builtin-tool.ts";
import { formatSize } from "../format-size.ts";
import { filePathProperty, pathSubject } from "../paths/file-access.ts";
import { ToolCallError } from "../tool-errors.ts";
import { optionalBoolean, requiredString } from "../tool-input.ts";
import { BUILTIN_TOOL_NAMES } from "../tool-names.ts";
import { displayLines } from "./file-format.ts";
import {
  changeSettings,
  changeTarget,
  rewriteForTool,
  type WriteToolOptions,
  writeForTool,
} from "./write-file-for-tool.ts";

export type EditToolOptions = WriteToolOptions;

const DESCRIPTION = `Replaces text in a file: old_string becomes new_string.
- Read the file first, in this session; the edit fails if the file changed on disk since.
- old_string must match the file exactly, indentation included, without the line-number prefix Read shows.
- old_string must occur exactly once: add surrounding lines to make it unique, or set replace_all to change every occurrence (e.g. to rename a variable).
- An empty old_string creates a file that does not exist yet, with new_string as its content.
- The file keeps its line endings, encoding and permissions.`;

/** Lines around a change that the result shows. */
const SNIPPET_CONTEXT_LINES = 3;
const SNIPPET_MAX_LINES = 20;
/**
 * Read's `cat -n` prefix, which models sometimes copy into old_string. Spaces and tabs only: `\s*` would also
 * run over line breaks from every line start, quadratic in an old_string of many blank lines.
 */
const LINE_NUMBER_PREFIX = /^[ \t]*\d+\t/m;

function occurrences(text: string, search: string): number[] {
  const found: number[] = [];
  for (let index = text.indexOf(search); index !== -1; index = text.indexOf(search, index + search.length)) {
    found.push(index);
  }
  return found;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf("\n"); at !== -1 && at < index; at = text.indexOf("\n", at + 1)) line++;
  return line;
}

/** The changed lines with a few lines around them, numbered as Read numbers them. */
function snippet(text: string, start: number, length: number): string {
  const lines = displayLines(text);
  const firstChanged = lineOf(text, start);
  const lastChanged = lineOf(text, start + Math.max(0, length - 1));
  const from = Math.max(1, firstChanged - SNIPPET_CONTEXT_LINES);
  const to = Math.min(lines.length, lastChanged + SNIPPET_CONTEXT_LINES, from + SNIPPET_MAX_LINES - 1);
  const shown = lines
    .slice(from - 1, to)
    .map((line, index) => `${String(from + index).padStart(6)}\t${line}`);
  return shown.join("\n");
}

/** Creates the Edit tool: exact string replacement, unique unless `replace_all`, atomic, format kept. */
export function createEditTool(options: EditToolOptions = {}): Tool {
  const { now, maxEditBytes } = changeSettings(options);
  const name = BUILTIN_TOOL_NAMES.edit;

  async function run(input: Record<string, unknown>, context: ToolContext): Promise<string> {
    const oldString = requiredString(name, input, "old_string");
    const newString = requiredString(name, input, "new_string");
    const replaceAll = optionalBoolean(name, input, "replace_all") ?? false;
    if (oldString === newString) {
      throw new ToolCallError("old_string and new_string are the same: there is nothing to change.");
    }
    const { path, shown, existing } = await changeTarget(name, input, context, options, "edit");
    if (existing === undefined) {
      if (oldString !== "") {
        throw new ToolCallError(
          `${shown} does not exist (the working directory is ${context.cwd}). To create it, call Edit with an empty old_string, or use Write.`,
        );
      }
      await writeForTool(context.sessionState, path, Buffer.from(newString, "utf8"), undefined, now());
      return `Created ${shown}.`;
    }
    if (oldString === "") {
      if (existing.text.length > 0) {
        throw new ToolCallError(
          `old_string is empty but ${shown} already has content. Give the text to replace (to insert, include a neighbouring line in old_string and new_string), or use Write to replace the whole file.`,
        );
      }
      await rewriteForTool(context.sessionState, { path, shown, existing }, newString, now());
      return `Wrote ${shown}, which was empty.`;
    }

    let search = oldString;
    let replacement = newString;
    let found = occurrences(existing.text, search);
    // A CRLF file: the model writes "\n"; match and replace with the file's own line ending.
    if (found.length === 0 && existing.format.lineEnding === "\r\n" && !oldString.includes("\r")) {
      search = oldString.replace(/\n/g, "\r\n");
      replacement = newString.replace(/\r?\n/g, "\r\n");
      found = occurrences(existing.text, search);
    }
    if (found.length === 0) {
      const hint = LINE_NUMBER_PREFIX.test(oldString)
        ? " It looks like it includes the line-number prefixes Read shows: leave them out."
        : " Read the file again to see its current content, and copy the text exactly, whitespace and indentation included.";
      throw new ToolCallError(`old_string was not found in ${shown}.${hint}`);
    }
    if (found.length > 1 && !replaceAll) {
      const lines = found.slice(0, 10).map((index) => lineOf(existing.text, index));
      throw new ToolCallError(
        `old_string occurs ${found.length} times in ${shown} (at lines ${lines.join(", ")}${found.length > 10 ? ", …" : ""}). Include more surrounding lines so that it matches only once, or set replace_all to true to change every occurrence.`,
      );
    }
    const first = found[0] ?? 0;
    const growth = (replacement.length - search.length) * (replaceAll ? found.length : 1);
    // Characters, a lower bound of the bytes: enough to refuse an edit that would build a file past the limit.
    if (existing.text.length + growth > maxEditBytes) {
      throw new ToolCallError(
        `The edit would make ${shown} about ${formatSize(existing.text.length + growth)}, more than the ${formatSize(maxEditBytes)} the tools write. Replace fewer occurrences, or change the file with Bash.`,
      );
    }
    const updated = replaceAll
      ? existing.text.split(search).join(replacement)
      : existing.text.slice(0, first) + replacement + existing.text.slice(first + search.length);
    await rewriteForTool(context.sessionState, { path, shown, existing }, updated, now());
    if (replaceAll && found.length > 1) return `Edited ${shown}: replaced ${found.length} occurrences.`;
    return `Edited ${shown}. The changed lines now read:\n${snippet(updated, first, replacement.length)}`;
  }

  return defineBuiltinTool({
    name,
    description: DESCRIPTION,
    inputSchema: {
      type: "object",
      properties: {
        file_path: filePathProperty("change"),
        old_string: { type: "string", description: "The exact text to replace." },
        new_string: {
          type: "string",
          description: "The text to put in its place (different from old_string).",
        },
        replace_all: {
          type: "boolean",
          default: false,
          description: "Replace every occurrence of old_string (default false: it must occur once).",
        },
      },
      required: ["file_path", "old_string", "new_string"],
      additionalProperties: false,
    },
    readOnly: false,
    // What it reports is the file on disk, which Read shows again.
    resultRetention: "reproducible",
    concurrencySafe: false,
    permissionSubject: (input, context) => pathSubject(input.file_path, context, "write"),
    run,
  });
}
