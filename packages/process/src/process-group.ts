import { setTimeout as sleep } from "node:timers/promises";

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

/** True while any process of the group exists. */
export function groupExists(pgid: number): boolean {
  return signalGroup(pgid, 0);
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
  if (!signalGroup(pgid, "SIGTERM")) return "gone";
  if (await waitForGroupEnd(pgid, graceMs, pollMs)) return "terminated";
  signalGroup(pgid, "SIGKILL");
  await waitForGroupEnd(pgid, 2_000, pollMs);
  return "killed";
}
