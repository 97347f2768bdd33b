import { createHash } from "node:crypto";
import { homedir } from "node:os";
import { basename, join, resolve } from "node:path";

export interface MemoryRootOptions {
  /** The user's config home. Defaults to `UNFORGET_CONFIG_HOME`, else `$XDG_CONFIG_HOME/unforget`, else `~/.config/unforget`. */
  configHome?: string;
  /** Where environment fallbacks are read from. Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
}

/**
 * The default memory folder of a project: `<config home>/projects/<folder name>-<hash of the path>/memory`.
 * Keyed by the project's absolute path, so two checkouts with the same folder name do not share memories.
 */
export function defaultMemoryRoot(projectPath: string, options: MemoryRootOptions = {}): string {
  const env = options.env ?? process.env;
  const configHome =
    options.configHome ??
    env.UNFORGET_CONFIG_HOME ??
    join(env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "unforget");
  const absolute = resolve(projectPath);
  const label =
    basename(absolute)
      .replace(/[^A-Za-z0-9_-]+/g, "-")
      .slice(0, 40) || "root";
  const key = createHash("sha256").update(absolute).digest("hex").slice(0, 12);
  return join(configHome, "projects", `${label}-${key}`, "memory");
}
