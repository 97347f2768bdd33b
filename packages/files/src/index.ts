export type { WriteFileAtomicOptions } from "./write-file-atomic.ts";
export { syncFolder, writeFileAtomic } from "./write-file-atomic.ts";
