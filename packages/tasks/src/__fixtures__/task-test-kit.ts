import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { TaskManager } from "../manager/task-manager.ts";
import type { TaskNotification } from "../task/task-notification.ts";

/** A fresh directory, removed by the returned cleanup. */
export async function temporaryDirectory(
  prefix = "tasks-",
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  // A manager killed just before (SIGKILL is delivered, not awaited) may still write a lease while the folder is
  // removed: rm retries on ENOTEMPTY instead of failing the test that ran fine.
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }) };
}

/** Reads a task's output from the start until `done`, checking on every chunk that offsets count bytes. */
export async function readAllOutput(manager: TaskManager, id: string, maxBytes?: number): Promise<string> {
  const pieces: string[] = [];
  let offset = 0;
  for (;;) {
    const chunk = await manager.readOutput(id, offset, maxBytes === undefined ? {} : { maxBytes });
    if (Buffer.byteLength(chunk.data) !== chunk.nextOffset - offset) throw new Error("offset mismatch");
    pieces.push(chunk.data);
    offset = chunk.nextOffset;
    if (chunk.done) return pieces.join("");
    if (chunk.data === "") await sleep(20);
  }
}

/** Collects notifications until one matches; the others taken on the way are returned too. */
export async function waitForNotification(
  manager: TaskManager,
  matches: (notification: TaskNotification) => boolean,
  timeoutMs = 45_000,
): Promise<{ match: TaskNotification; all: TaskNotification[] }> {
  const all: TaskNotification[] = [];
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    all.push(...(await manager.takeNotifications()));
    const match = all.find(matches);
    if (match !== undefined) return { match, all };
    await sleep(25);
  }
  throw new Error(`no matching notification within ${timeoutMs} ms; got ${JSON.stringify(all)}`);
}

/** Polls until `check` holds. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 45_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("condition not reached in time");
    await sleep(25);
  }
}
