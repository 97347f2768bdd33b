export {
  type ConfinedPath,
  type ConfinePathOptions,
  canonicalPath,
  confinePath,
  isPathInside,
  UnsafePathError,
  type UnsafePathRule,
} from "./confine-path.ts";
export { FileLockedError, type FileLockOptions, withFileLock } from "./file-lock.ts";
export { type AnchoredFolder, anchorFolder, checkOpenedPath } from "./opened-path.ts";
export type { WriteFileAtomicOptions } from "./write-file-atomic.ts";
export { syncFolder, writeFileAtomic } from "./write-file-atomic.ts";
