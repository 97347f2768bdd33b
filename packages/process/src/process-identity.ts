import { readFileSync } from "node:fs";

/**
 * A process as it can be recognised again later: a pid alone is not enough, because the kernel reuses pids.
 * `startTime` is the kernel's start time of that pid (clock ticks since boot on Linux), so a recycled pid
 * never passes for the process that was recorded.
 */
export interface ProcessIdentity {
  pid: number;
  startTime: string;
}

interface ProcessStat {
  /** One-letter kernel state; "Z" (zombie) and "X" (dead) mean the process has ended. */
  state: string;
  startTime: string;
  /** The process group (Linux only). */
  pgrp?: number;
}

/** Parses /proc/<pid>/stat. The command name (field 2) may hold spaces and parentheses: read after the last ")". */
export function readLinuxStat(pid: number | string): ProcessStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // Fields after the name start at field 3 (state); field 22 (starttime) is therefore index 19.
  const state = fields[0];
  const startTime = fields[19];
  return state === undefined || startTime === undefined
    ? undefined
    : { state, startTime, pgrp: Number(fields[2]) };
}

/** Elsewhere (macOS, the BSDs) `ps` reports the state and the wall-clock start time. */
function readPsStat(pid: number): ProcessStat | undefined {
  try {
    // child_process loads on first use (with `ps`), not with the package (start-up).
    const line = process
      .getBuiltinModule("node:child_process")
      .execFileSync("ps", ["-o", "stat=,lstart=", "-p", String(pid)], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      })
      .trim();
    const match = /^(\S+)\s+(.+)$/.exec(line);
    return match ? { state: match[1]!.charAt(0), startTime: match[2]! } : undefined;
  } catch {
    return undefined;
  }
}

const readStat = process.platform === "linux" ? readLinuxStat : readPsStat;

/** The identity of a running process, or undefined when no live process has this pid. */
export function readProcessIdentity(pid: number): ProcessIdentity | undefined {
  const stat = readStat(pid);
  if (stat === undefined || stat.state === "Z" || stat.state === "X") return undefined;
  return { pid, startTime: stat.startTime };
}

/** The start time of a pid, even a zombie's: what a manager records right after spawning a child. */
export function readProcessStartTime(pid: number): string | undefined {
  return readStat(pid)?.startTime;
}

/** True while the very process that was recorded still runs (not a zombie, not a recycled pid). */
export function isProcessAlive(identity: ProcessIdentity): boolean {
  return readProcessIdentity(identity.pid)?.startTime === identity.startTime;
}

let ownIdentity: ProcessIdentity | undefined;

/** This process's identity (read once). */
export function currentProcessIdentity(): ProcessIdentity {
  ownIdentity ??= readProcessIdentity(process.pid) ?? { pid: process.pid, startTime: "unknown" };
  return ownIdentity;
}
