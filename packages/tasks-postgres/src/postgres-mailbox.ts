import type { SqlClient } from "@unforget/postgres";
import { createMailboxMessage, type Mailbox, type MailboxMessage } from "@unforget/tasks";
import { CHANNELS, type TransactionBound } from "./task-tables.ts";

/** A waiting receive looks again at least this often (NOTIFY is a hint and may be lost on a reconnect). */
const POLL_MS = 250;

/** Wakes the receivers waiting for an address in this process. */
export interface MailWakeups {
  wait(address: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<void>;
  wake(address: string): void;
}

export function createMailWakeups(): MailWakeups {
  const waiters = new Map<string, Set<() => void>>();
  return {
    wake(address) {
      for (const wake of waiters.get(address) ?? []) wake();
    },
    wait(address, timeoutMs, signal) {
      return new Promise<void>((resolve) => {
        const set = waiters.get(address) ?? new Set<() => void>();
        waiters.set(address, set);
        const finish = () => {
          clearTimeout(timer);
          set.delete(finish);
          if (set.size === 0) waiters.delete(address);
          signal?.removeEventListener("abort", finish);
          resolve();
        };
        const timer = setTimeout(finish, timeoutMs);
        set.add(finish);
        signal?.addEventListener("abort", finish, { once: true });
      });
    },
  };
}

/**
 * The durable mailbox in `unforget_task_message`: a receiver deletes the rows it takes (SKIP LOCKED), so each
 * message goes to one receiver once, on any machine. A send NOTIFYs the address; waiters also poll.
 */
export function createPostgresMailbox(
  client: SqlClient,
  wakeups: MailWakeups,
  bound: TransactionBound,
): Mailbox {
  const take = async (address: string): Promise<MailboxMessage[]> => {
    const result = await client.query<{ seq: string | number; message: MailboxMessage }>(
      `DELETE FROM unforget_task_message WHERE seq IN (
         SELECT seq FROM unforget_task_message WHERE address = $1 ORDER BY seq FOR UPDATE SKIP LOCKED)
       RETURNING seq, message`,
      [address],
    );
    return result.rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map((row) => row.message);
  };
  return {
    async send(init) {
      const message = createMailboxMessage(init);
      await client.transaction(async (transaction) => {
        await transaction.query(
          "INSERT INTO unforget_task_message (id, address, message) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
          [message.id, message.to, JSON.stringify(message)],
        );
        await transaction.query("SELECT pg_notify($1, $2)", [CHANNELS.mail, message.to]);
      }, bound);
      wakeups.wake(message.to);
      return message;
    },
    async receive(address, options = {}) {
      const until = Date.now() + (options.waitMs ?? 0);
      for (;;) {
        const messages = await take(address);
        if (messages.length > 0 || Date.now() >= until || options.signal?.aborted) return messages;
        await wakeups.wait(address, Math.min(POLL_MS, Math.max(0, until - Date.now())), options.signal);
      }
    },
  };
}
