import { createMailboxMessage, type Mailbox, type MailboxMessage } from "./mailbox.ts";

interface Waiter {
  wake(): void;
}

/** A mailbox for agents and teammates that run in this process: queues in memory, waits without polling. */
export function createInProcessMailbox(): Mailbox {
  const queues = new Map<string, MailboxMessage[]>();
  const waiters = new Map<string, Set<Waiter>>();

  const take = (address: string): MailboxMessage[] => {
    const queue = queues.get(address);
    if (queue === undefined || queue.length === 0) return [];
    queues.delete(address);
    return queue;
  };

  return {
    async send(init) {
      const message = createMailboxMessage(init);
      const queue = queues.get(message.to) ?? [];
      queue.push(message);
      queues.set(message.to, queue);
      for (const waiter of waiters.get(message.to) ?? []) waiter.wake();
      return message;
    },

    async receive(address, options = {}) {
      const ready = take(address);
      const waitMs = options.waitMs ?? 0;
      if (ready.length > 0 || waitMs <= 0 || options.signal?.aborted) return ready;
      await new Promise<void>((resolve) => {
        const set = waiters.get(address) ?? new Set<Waiter>();
        waiters.set(address, set);
        const finish = () => {
          clearTimeout(timer);
          set.delete(waiter);
          if (set.size === 0) waiters.delete(address);
          options.signal?.removeEventListener("abort", finish);
          resolve();
        };
        const waiter: Waiter = { wake: finish };
        const timer = setTimeout(finish, waitMs);
        set.add(waiter);
        options.signal?.addEventListener("abort", finish, { once: true });
      });
      return take(address);
    },
  };
}
