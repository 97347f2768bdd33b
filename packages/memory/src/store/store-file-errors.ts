import { MemoryStoreError } from "./memory-errors.ts";

/** The errno code of a filesystem error (`ENOENT`, `EISDIR`, …), if it has one. */
export function errnoCode(error: unknown): string | undefined {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

/** Whether `error` says the file is not there: the one failure a store may read as "absent". */
export function isAbsent(error: unknown): boolean {
  return errnoCode(error) === "ENOENT";
}

/**
 * A memory that is not there: no file (ENOENT), or a plain file where a folder of its name would be (ENOTDIR:
 * `notes/a.md` when `notes` is a file). A folder where the file belongs (EISDIR) is not absent: it is an error.
 */
export function isMissing(error: unknown): boolean {
  return isAbsent(error) || errnoCode(error) === "ENOTDIR";
}

const WHY: Readonly<Record<string, string>> = {
  EISDIR: "it is a folder where a file belongs",
  ENOTDIR: "a file stands where a folder belongs on its path",
  ELOOP: "its path is a symlink loop",
  EACCES: "permission is denied",
  EPERM: "the operation is not permitted",
  EMFILE: "the process has too many files open",
};

/** `error` met on one of the store's own files, as the typed error that says what and why. */
export function storeFileError(what: string, path: string, error: unknown): MemoryStoreError {
  const code = errnoCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  const why = code === undefined ? detail : `${WHY[code] ?? detail} (${code})`;
  return new MemoryStoreError(
    `${what} ${path} could not be read: ${why}. Move it away or restore it; nothing was changed.`,
    { storePath: path, cause: error },
  );
}
