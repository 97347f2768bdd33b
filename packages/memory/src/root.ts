// `@unforget/memory/root`: where a project's memory lives, without the memory stack. An app that opens memory on
// first use still needs the folder first (its own data sits beside it).
export { defaultMemoryRoot, type MemoryRootOptions } from "./dir/memory-root.ts";
