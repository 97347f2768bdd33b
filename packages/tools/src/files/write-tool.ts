import type { Tool, ToolContext } from "@unforget/core";
import { defineBuiltinTool } from "../define-builtin-tool.ts";
import { filePathProperty, pathSubject } from "../paths/file-access.ts";
import { requiredString } from "../tool-input.ts";
import { BUILTIN_TOOL_NAMES } from "../tool-names.ts";
import { withLineEnding } from "./file-format.ts";
import {
  changeSettings,
  changeTarget,
  rewriteForTool,
  type WriteToolOptions,
  writeForTool,
} from "./write-file-for-tool.ts";

export type { WriteToolOptions };

const DESCRIPTION = `Writes a file to the local filesystem, replacing it if it exists.
- file_path is an absolute path, or a path relative to the working directory; missing folders are created.
- An existing file must have been read with Read in this session, and not changed since: read it first.
- An existing file keeps its line endings (CRLF stays CRLF), its encoding and byte order mark, and its permissions.
- Prefer Edit for changes to an existing file: it sends only the part that changes.`;

function countLines(text: string): number {
  if (text.length === 0) return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

/** Creates the Write tool: whole-file writes, atomic, only over a file read in this session and unchanged since. */
export function createWriteTool(options: WriteToolOptions = {}): Tool {
  const { now } = changeSettings(options);
  const name = BUILTIN_TOOL_NAMES.write;

  async function run(input: Record<string, unknown>, context: ToolContext): Promise<string> {
    const content = requiredString(name, input, "content");
    const { path, shown, existing } = await changeTarget(name, input, context, options, "write");
    if (existing === undefined) {
      await writeForTool(context.sessionState, path, Buffer.from(content, "utf8"), undefined, now());
      return `Created ${shown} (${countLines(content)} lines).`;
    }
    const text = withLineEnding(content, existing.format.lineEnding);
    await rewriteForTool(context.sessionState, { path, shown, existing }, text, now());
    return `Wrote ${shown} (${countLines(content)} lines; it had ${countLines(existing.text)}).`;
  }

  return defineBuiltinTool({
    name,
    description: DESCRIPTION,
    inputSchema: {
      type: "object",
      properties: {
        file_path: filePathProperty("write"),
        content: { type: "string", description: "The whole new content of the file." },
      },
      required: ["file_path", "content"],
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
