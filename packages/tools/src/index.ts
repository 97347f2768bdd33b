// Its typings name Node's types (buffers, environments), from the @types/node peer dependency.
/// <reference types="node" preserve="true" />
export {
  type BashBackgroundCommand,
  type BashBackgroundTasks,
  type BashToolOptions,
  createBashTool,
} from "./bash-tool.ts";
export { type BuiltinToolsOptions, createBuiltinTools } from "./builtin-tools.ts";
export { createEditTool, type EditToolOptions } from "./edit-tool.ts";
export type { FileAccessOptions } from "./file-access.ts";
export { compileGitignore, type GitignoreRules } from "./glob-pattern.ts";
export { createGlobTool, type SearchToolOptions } from "./glob-tool.ts";
export { createGrepTool, type GrepToolOptions } from "./grep-tool.ts";
export {
  type FileReadRecord,
  forgetReadContents,
  readFilesOf,
  readStateChanges,
  restoreReadState,
} from "./read-state.ts";
export { createReadTool, type ReadToolOptions } from "./read-tool.ts";
export { allowDirectories } from "./session-directories.ts";
export { CREDENTIAL_VARIABLES } from "./shell-environment.ts";
export { type TodoItem, todosOf } from "./todo-state.ts";
export { createTodoWriteTool } from "./todo-write-tool.ts";
export { ToolsConfigurationError } from "./tool-errors.ts";
export { BUILTIN_TOOL_NAMES } from "./tool-names.ts";
export { createWriteTool, type WriteToolOptions } from "./write-tool.ts";
