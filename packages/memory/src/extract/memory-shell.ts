import type { MemoryEntry } from "../store/memory-catalog.ts";
import { normalizeMemoryName } from "../store/memory-name.ts";
import type { MemoryStore } from "../store/memory-store.ts";

/** Commands the read-only shell understands; nothing else runs, and nothing is ever spawned. */
export const READ_ONLY_SHELL_COMMANDS = ["ls", "cat", "head", "tail", "wc", "stat", "find"] as const;

const FORBIDDEN = /[;|&<>`$\\\n\r(){}]/;

function tokenize(command: string): string[] | string {
  if (FORBIDDEN.test(command)) {
    return "Refused: pipes, redirections, substitutions, separators and backslashes are not allowed in this read-only shell.";
  }
  const tokens: string[] = [];
  for (const match of command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g))
    tokens.push(match[1] ?? match[2] ?? match[3] ?? "");
  return tokens;
}

function toName(path: string): string {
  const trimmed = path
    .replace(/^\/memories\/?/, "")
    .replace(/^\.\/?/, "")
    .replace(/\/$/, "");
  return trimmed === "" ? "" : normalizeMemoryName(trimmed, { allowFolder: true });
}

function under(folder: string, entries: MemoryEntry[]): MemoryEntry[] {
  return folder === ""
    ? entries
    : entries.filter((entry) => entry.name === folder || entry.name.startsWith(`${folder}/`));
}

function globToRegExp(pattern: string): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${escaped}$`);
}

/**
 * A read-only shell over a memory store, for the extraction agent: `ls`, `cat`, `head`, `tail`, `wc`, `stat`
 * and `find`, with paths under the memory root only. It is an interpreter on the store's API, not a process:
 * no command can write, delete, or read outside the store. Returns the output, or a line saying why not.
 */
export async function runReadOnlyShell(
  store: MemoryStore,
  command: string,
): Promise<{ output: string; isError: boolean }> {
  const tokens = tokenize(command.trim());
  if (typeof tokens === "string") return { output: tokens, isError: true };
  const [program, ...args] = tokens;
  if (!program || !(READ_ONLY_SHELL_COMMANDS as readonly string[]).includes(program)) {
    return {
      output: `Refused: "${program ?? ""}" is not available; this shell only runs ${READ_ONLY_SHELL_COMMANDS.join(", ")} (read-only).`,
      isError: true,
    };
  }
  try {
    const entries = await store.list();
    const flags = args.filter((arg) => arg.startsWith("-"));
    const operands = args.filter(
      (arg, index) => !arg.startsWith("-") && !/^-(n|name)$/.test(args[index - 1] ?? ""),
    );
    const flagValue = (flag: string) => args[args.indexOf(flag) + 1];
    switch (program) {
      case "ls": {
        const folder = toName(operands[0] ?? ".");
        const names = under(folder, entries).map((entry) => entry.name);
        const lines = flags.includes("-l")
          ? under(folder, entries).map((entry) => `${String(entry.size).padStart(8)} ${entry.name}`)
          : names;
        return { output: lines.join("\n"), isError: false };
      }
      case "find": {
        const folder = toName(operands[0] ?? ".");
        const pattern = flags.includes("-name") ? globToRegExp(flagValue("-name") ?? "*") : undefined;
        const found = under(folder, entries).filter(
          (entry) => !pattern || pattern.test(entry.name.split("/").at(-1) ?? ""),
        );
        return { output: found.map((entry) => entry.name).join("\n"), isError: false };
      }
      case "stat": {
        const entry = entries.find((candidate) => candidate.name === toName(operands[0] ?? ""));
        if (!entry) return { output: `stat: ${operands[0] ?? ""}: no such memory`, isError: true };
        return {
          output: `name: ${entry.name}\nsize: ${entry.size}\nmodified: ${new Date(entry.changedAtMs).toISOString()}\nsha256: ${entry.hash}`,
          isError: false,
        };
      }
      default: {
        const name = toName(operands[0] ?? "");
        if (name === "") return { output: `${program}: missing file operand`, isError: true };
        const { content } = await store.read(name);
        const lines = content.split("\n");
        const count = Number(flagValue("-n") ?? 10);
        if (program === "cat") return { output: content, isError: false };
        if (program === "head") return { output: lines.slice(0, count).join("\n"), isError: false };
        if (program === "tail") return { output: lines.slice(-count).join("\n"), isError: false };
        return {
          output: `${lines.length - 1} ${content.split(/\s+/).filter(Boolean).length} ${Buffer.byteLength(content)} ${name}`,
          isError: false,
        };
      }
    }
  } catch (error) {
    return { output: `${program}: ${error instanceof Error ? error.message : String(error)}`, isError: true };
  }
}
