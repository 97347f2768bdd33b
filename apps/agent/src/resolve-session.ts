import { existsSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { appPath } from "./app-path.ts";
import { SessionInputError } from "./replay/replay-errors.ts";

/** Where the session to replay came from. */
export interface ResolvedSession {
  path: string;
  /** "argument": the user named it; "claude-code": the newest Claude Code session; "demo": the shipped demo. */
  source: "argument" | "claude-code" | "demo";
}

/** The demo session shipped with the app (generated at build time by `build-demo-session`). */
export function demoSessionPath(): string {
  return appPath("dist", "demo", "demo-session.jsonl");
}

/**
 * The session to replay: the one named, else the newest Claude Code session under `$HOME/.claude/projects`,
 * else the demo session; `{ demo: true }` asks for the demo whatever else there is.
 */
export async function resolveSession(
  argument: string | undefined | { demo: true },
  env: Record<string, string | undefined> = process.env,
): Promise<ResolvedSession> {
  if (typeof argument === "string" && argument.length > 0) return { path: argument, source: "argument" };
  if (typeof argument !== "object") {
    const newest = await newestClaudeCodeSession(env.HOME || homedir());
    if (newest) return { path: newest, source: "claude-code" };
  }
  const demo = demoSessionPath();
  if (!existsSync(demo)) {
    throw new SessionInputError(
      `The demo session ${demo} is missing: it is generated when the app is built. Run the build (npx -y pnpm@10.34.9 build), or pass a session file.`,
      { path: demo, kind: "not_found" },
    );
  }
  return { path: demo, source: "demo" };
}

/**
 * The most recently modified main session file (`<project>/<session>.jsonl`, never a subagent's) under
 * `<home>/.claude/projects`, or undefined when there is none. Ties go to the path that sorts first.
 */
export async function newestClaudeCodeSession(home: string): Promise<string | undefined> {
  const projects = join(home, ".claude", "projects");
  let best: { path: string; time: number } | undefined;
  for (const project of await listFolder(projects)) {
    const folder = join(projects, project);
    for (const name of await listFolder(folder)) {
      if (!name.endsWith(".jsonl")) continue;
      const path = join(folder, name);
      try {
        const info = await stat(path);
        if (!info.isFile() || info.size === 0) continue;
        const time = info.mtimeMs;
        if (!best || time > best.time || (time === best.time && path < best.path)) best = { path, time };
      } catch {
        // A file removed while we looked is simply not a candidate.
      }
    }
  }
  return best?.path;
}

async function listFolder(path: string): Promise<string[]> {
  try {
    return (await readdir(path)).sort();
  } catch {
    return [];
  }
}
