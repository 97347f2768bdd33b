import { readdirSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { readLinuxStat } from "./process-identity.ts";

/** Sends `signal` to every process of the group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    // A negative pid addresses the whole process group that the detached leader created.
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    // EPERM: the group exists but holds a process we may not signal; it still exists.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * True while any process of the group is alive. A member that has exited but not been reaped (a zombie, which
 * `kill(-pgid, 0)` still finds) does not count: where the machine's first process is slow to reap orphans, as
 * in many containers, a terminated group would otherwise look alive until its zombies are collected. Linux
 * tells from /proc; elsewhere a zombie still counts.
 */
export function groupExists(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  return groupHasLiveMember(pgid) ?? true;
}

/** Whether /proc lists a member of the group that is not a zombie; undefined where /proc cannot be read. */
function groupHasLiveMember(pgid: number): boolean | undefined {
  if (process.platform !== "linux") return undefined;
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return undefined;
  }
  let seen = false;
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    const stat = readLinuxStat(name); // undefined: the process ended while we looked
    if (stat === undefined) continue;
    seen = true;
    if (stat.pgrp === pgid && stat.state !== "Z" && stat.state !== "X") return true;
  }
  return seen ? false : undefined;
}

async function waitForGroupEnd(pgid: number, timeoutMs: number, pollMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (groupExists(pgid)) {
    if (Date.now() >= until) return false;
    await sleep(pollMs);
  }
  return true;
}

/** How a group was ended: it was already gone, it left after SIGTERM, or it needed SIGKILL. */
export type GroupTermination = "gone" | "terminated" | "killed";

/**
 * Ends a whole process group: SIGTERM, then SIGKILL to whatever is left after `graceMs`. Resolves once the
 * group is gone (or, for processes stuck in the kernel, a short while after SIGKILL).
 */
export async function terminateGroup(pgid: number, graceMs: number, pollMs = 25): Promise<GroupTermination> {
  // A group of zombies only is gone already: signalling it would succeed, yet end nothing.
  if (!groupExists(pgid) || !signalGroup(pgid, "SIGTERM")) return "gone";
  if (await waitForGroupEnd(pgid, graceMs, pollMs)) return "terminated";
  signalGroup(pgid, "SIGKILL");
  await waitForGroupEnd(pgid, 2_000, pollMs);
  return "killed";
}
