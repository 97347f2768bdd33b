// Its typings name Node's types (buffers, environments), from the @types/node peer dependency.
/// <reference types="node" preserve="true" />
export {
  type BashBackgroundCommand,
  type BashBackgroundTasks,
  type BashToolOptions,
  createBashTool,
} from "./bash/bash-tool.ts";
export { CREDENTIAL_VARIABLES } from "./bash/shell-environment.ts";
export { type BuiltinToolsOptions, createBuiltinTools } from "./builtin-tools.ts";
export { createEditTool, type EditToolOptions } from "./files/edit-tool.ts";
export {
  type FileReadRecord,
  forgetReadContents,
  readFilesOf,
  readStateChanges,
  restoreReadState,
} from "./files/read-state.ts";
export { createReadTool, type ReadToolOptions } from "./files/read-tool.ts";
export { createWriteTool, type WriteToolOptions } from "./files/write-tool.ts";
export type { FileAccessOptions } from "./paths/file-access.ts";
export { allowDirectories } from "./paths/session-directories.ts";
export { compileGitignore, type GitignoreRules } from "./search/glob-pattern.ts";
export { createGlobTool, type SearchToolOptions } from "./search/glob-tool.ts";
export { createGrepTool, type GrepToolOptions } from "./search/grep-tool.ts";
export { type TodoItem, todosOf } from "./todo/todo-state.ts";
export { createTodoWriteTool } from "./todo/todo-write-tool.ts";
export { ToolsConfigurationError } from "./tool-errors.ts";
export { BUILTIN_TOOL_NAMES } from "./tool-names.ts";
