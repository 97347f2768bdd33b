// The hostile-input test calls the built-in tools through this module in a hang-guarded worker
// (`@unforget/testing/guard`): the synchronous work a hostile pattern or size sets off (matching a glob against
// long names, scanning a large file) holds the worker's thread, never the test's, so a hang fails the test.
import type { Tool } from "@unforget/core";
import { createEditTool } from "../files/edit-tool.ts";
import { createReadTool } from "../files/read-tool.ts";
import { createWriteTool } from "../files/write-tool.ts";
import { createGlobTool } from "../search/glob-tool.ts";
import { createGrepTool } from "../search/grep-tool.ts";
import { createTodoWriteTool } from "../todo/todo-write-tool.ts";
import { createToolHarness, type ToolHarness } from "./tool-harness.ts";

const TOOLS = {
  Read: createReadTool(),
  Write: createWriteTool(),
  Edit: createEditTool(),
  Glob: createGlobTool(),
  Grep: createGrepTool(),
  TodoWrite: createTodoWriteTool(),
} satisfies Record<string, Tool>;

export type HostileToolName = keyof typeof TOOLS;

/** One session per working folder, so what a Read records is there for the Edit after it. */
const harnesses = new Map<string, Promise<ToolHarness>>();

/** Calls a tool in `cwd` as a session would; the result's text and whether it is an error. */
export async function callTool(
  name: HostileToolName,
  cwd: string,
  input: Record<string, unknown>,
): Promise<{ text: string; isError: boolean }> {
  let harness = harnesses.get(cwd);
  if (harness === undefined) {
    harness = createToolHarness("unforget-hostile-", cwd);
    harnesses.set(cwd, harness);
  }
  const session = await harness;
  const output = await session.call(TOOLS[name], input);
  return { text: session.text(output), isError: output.isError };
}
