import { SessionPackageMissingError } from "../loop/session-errors.ts";

/**
 * Loads a package the session needs only for one option (an optional peer), the first time that option is
 * used: a session without the option never loads it, and one whose package is missing fails with
 * `SessionPackageMissingError` naming the package, not with Node's resolution error.
 */
export async function loadOptionalPackage<T>(
  packageName: string,
  option: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isModuleNotFound(error)) throw new SessionPackageMissingError(packageName, option, { cause: error });
    throw error;
  }
}

/** Node's code for an import it cannot resolve (ES modules), and CommonJS's. */
function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND";
}
