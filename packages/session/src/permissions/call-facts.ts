import type { Tool, ToolPermissionSubject } from "@unforget/core";
import { resolvePathForPermission } from "./permission-path.ts";
import { type ShellAnalyzer, type ShellCommand, shellAnalyzer } from "./shell/shell-analyzer.ts";

/** A file a shell command writes, as written and as reached through symlinks; no paths when only known at run time. */
export interface ShellWriteFacts {
  text: string;
  paths: string[] | undefined;
}

/** What a command subject runs and writes, as the shell will (see shell/shell-analyzer.ts). */
export interface ShellFacts {
  /** Reads a rule's words the way the command's are read. */
  analyze: ShellAnalyzer;
  commands: ShellCommand[];
  unresolved: string[];
  writes: ShellWriteFacts[];
}

/** What the gate knows about one call before it decides: the tool, what it touches, and (for commands) what runs. */
export interface CallFacts {
  tool: Tool;
  subject: ToolPermissionSubject | undefined;
  /** Command subjects only. */
  shell: ShellFacts | undefined;
  /** Path subjects: as written and as reached through symlinks. */
  paths: string[];
}

/** Reads a call's subject: a command's simple commands and the files it writes, a path in all its forms. */
export async function readCallFacts(
  tool: Tool,
  subject: ToolPermissionSubject | undefined,
  cwd: string,
  homeDir: string,
): Promise<CallFacts> {
  return {
    tool,
    subject,
    shell: subject?.kind === "command" ? await readShellFacts(subject.command, cwd, homeDir) : undefined,
    paths: subject?.kind === "path" ? await resolvePathForPermission(subject.path, cwd) : [],
  };
}

/** Reads a command subject: what it runs (every simple command) and the files it writes. */
async function readShellFacts(command: string, cwd: string, homeDir: string): Promise<ShellFacts> {
  const analyze = await shellAnalyzer();
  const analysis = analyze(command, { homeDir, cwd });
  const writes = await Promise.all(
    analysis.writes.map(async (write) => ({
      text: write.text,
      paths: write.path === undefined ? undefined : await resolvePathForPermission(write.path, cwd),
    })),
  );
  return { analyze, commands: analysis.commands, unresolved: analysis.unresolved, writes };
}
