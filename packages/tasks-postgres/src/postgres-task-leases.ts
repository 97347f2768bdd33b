import { hostname } from "node:os";
import type { SqlClient } from "@unforget/postgres";
import type { TaskLeaseStore, TaskOwner } from "@unforget/tasks";
import { isLocalProcessGone } from "./local-process.ts";
import { MILLISECONDS } from "./task-tables.ts";

/** The default lease: renewed every 10 s, a worker that misses three beats loses its tasks. */
export const DEFAULT_LEASE_MS = 30_000;

/**
 * Leases on the server's clock: an owner's heartbeat row (`unforget_task_owner`), and `lease_until` on each
 * task it runs, renewed together. A task its worker no longer runs (given up after a pause) is not renewed,
 * and the reconciler fails the jobs of tasks whose `lease_until` has passed.
 */
export function createPostgresTaskLeases(client: SqlClient, leaseMs = DEFAULT_LEASE_MS): TaskLeaseStore {
  return {
    leaseMs,
    // One statement, so no transaction stays open across a pause of the owner: a worker stopped right after
    // its renewal has renewed (committed), and its tasks are free once that lease lapses.
    async renew(owner: TaskOwner, running: readonly string[]) {
      await client.query(
        `WITH heartbeat AS (
           INSERT INTO unforget_task_owner (id, hostname, pid, start_time, heartbeat_at)
           VALUES ($1, $4, $5, $6, now())
           ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()
         )
         UPDATE unforget_task SET lease_until = now() + $2 ${MILLISECONDS}
         WHERE worker_id = $1 AND status = 'running' AND id = ANY($3::text[])`,
        [owner.managerId, leaseMs, running, owner.hostname, owner.pid, owner.startTime],
      );
    },
    async holds(owner: TaskOwner) {
      if (owner.hostname === hostname() && isLocalProcessGone(owner)) return false;
      const result = await client.query<{ holds: boolean }>(
        `SELECT heartbeat_at + $2 ${MILLISECONDS} > now() AS holds FROM unforget_task_owner WHERE id = $1`,
        [owner.managerId, leaseMs],
      );
      return result.rows[0]?.holds === true;
    },
    async release(owner: TaskOwner) {
      // Its tasks are reconciled at once rather than after the lease.
      await client.query(
        `WITH gone AS (DELETE FROM unforget_task_owner WHERE id = $1)
         UPDATE unforget_task SET lease_until = now() WHERE worker_id = $1 AND status = 'running'`,
        [owner.managerId],
      );
    },
  };
}
