import { readFileSync } from "node:fs";
import type { TaskOwner } from "@unforget/tasks";

/**
 * True when an owner on this host is known to be gone: its pid is free or runs another process (a different
 * start time, from /proc on Linux). Anywhere else nothing is known, and only the lease decides.
 */
export function isLocalProcessGone(owner: TaskOwner): boolean {
  if (process.platform !== "linux") return false;
  let text: string;
  try {
    text = readFileSync(`/proc/${owner.pid}/stat`, "utf8");
  } catch {
    return true;
  }
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  return state === "Z" || state === "X" || fields[19] !== owner.startTime;
}
