import { readFile, rm } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { writeFileAtomic } from "@unforget/files";
import { isProcessAlive } from "@unforget/process";
import { describeError, TaskStoreError } from "../task/task-errors.ts";
import type { TaskOwner } from "../task/task-record.ts";
import type { TaskLeaseStore } from "./task-backend.ts";

/** The default lease: an owner that has not renewed for this long is presumed gone. */
export const DEFAULT_LEASE_MS = 30_000;

interface LeaseFile {
  managerId: string;
  renewedAt: number;
}

/**
 * Leases as one small file per owner (`<dir>/.leases/<managerId>.json`, replaced atomically on every
 * heartbeat), so a heartbeat costs one write whatever the number of tasks. On the owner's own host a dead
 * process ends its lease at once (pid and start time); elsewhere only the renewal time counts, so managers
 * on several machines can share a directory on a network file system (their clocks must agree to well
 * within the lease).
 */
export function createFileTaskLeases(dir: string, leaseMs = DEFAULT_LEASE_MS): TaskLeaseStore {
  const folder = join(dir, ".leases");
  const fileOf = (owner: TaskOwner) => join(folder, `${encodeURIComponent(owner.managerId)}.json`);
  return {
    leaseMs,
    // One file per owner: its tasks' leases are its own (the task list is not needed).
    async renew(owner) {
      const lease: LeaseFile = { managerId: owner.managerId, renewedAt: Date.now() };
      await writeFileAtomic(fileOf(owner), `${JSON.stringify(lease)}\n`).catch((error: unknown) => {
        throw new TaskStoreError(`Could not renew the lease in ${fileOf(owner)} (${describeError(error)}).`, {
          location: fileOf(owner),
          cause: error,
        });
      });
    },
    async holds(owner) {
      if (owner.hostname === hostname() && !isProcessAlive(owner)) return false;
      const file = fileOf(owner);
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch (error) {
        // Never renewed (an owner from before leases, or released): only a live process on this host holds.
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
        // Anything else says nothing about the owner: taking its tasks over could run them twice.
        throw new TaskStoreError(`Could not read the lease ${file} (${describeError(error)}).`, {
          location: file,
          cause: error,
        });
      }
      let lease: Partial<LeaseFile>;
      try {
        lease = JSON.parse(text) as Partial<LeaseFile>;
      } catch (error) {
        throw new TaskStoreError(
          `The lease ${file} is not a lease file (${describeError(error)}); leases are replaced whole, so something else wrote it. Delete it once no manager of ${owner.managerId} runs.`,
          { location: file, cause: error },
        );
      }
      return typeof lease?.renewedAt === "number" && lease.renewedAt + leaseMs > Date.now();
    },
    async release(owner) {
      await rm(fileOf(owner), { force: true });
    },
  };
}
