import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "@unforget/files";
import { describeError, TaskStoreError } from "../task/task-errors.ts";
import { createMailboxMessage, type Mailbox, type MailboxMessage } from "./mailbox.ts";

/** How often a waiting `receive` looks for messages another process sent. */
const POLL_MS = 100;

/** Waiters in this process, by folder: a send here wakes them at once; other processes are polled. */
const localWaiters = new Map<string, Set<() => void>>();
let sequence = 0;

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}

/**
 * A mailbox in `<dir>/.mailbox/<address>/`: one file per message, written atomically, named by time and
 * sequence so that a listing is oldest first. A receiver claims a message by renaming it out of the folder,
 * which only one receiver can do, so each message is returned once, whichever process asks.
 */
export function createFileMailbox(dir: string): Mailbox {
  const root = join(dir, ".mailbox");
  const claimed = join(root, ".claimed");
  const folderOf = (address: string) => join(root, encodeURIComponent(address));

  const take = async (address: string): Promise<MailboxMessage[]> => {
    const folder = folderOf(address);
    let names: string[];
    try {
      names = (await readdir(folder)).filter((name) => name.endsWith(".json")).sort();
    } catch (error) {
      if (isMissing(error)) return [];
      throw new TaskStoreError(`Could not list ${folder} (${describeError(error)}).`, {
        location: folder,
        cause: error,
      });
    }
    if (names.length === 0) return [];
    await mkdir(claimed, { recursive: true });
    const messages: MailboxMessage[] = [];
    for (const name of names) {
      const mine = join(claimed, `${randomUUID()}.json`);
      try {
        await rename(join(folder, name), mine);
      } catch (error) {
        if (isMissing(error)) continue; // another receiver took it
        throw error;
      }
      messages.push(JSON.parse(await readFile(mine, "utf8")) as MailboxMessage);
      await rm(mine, { force: true });
    }
    return messages;
  };

  return {
    async send(init) {
      const message = createMailboxMessage(init);
      sequence = (sequence + 1) % 1_000_000;
      const name = `${String(message.at).padStart(15, "0")}-${String(sequence).padStart(6, "0")}-${message.id}.json`;
      const folder = folderOf(message.to);
      await writeFileAtomic(join(folder, name), JSON.stringify(message), { tempDir: root });
      for (const wake of localWaiters.get(folder) ?? []) wake();
      return message;
    },

    async receive(address, options = {}) {
      const until = Date.now() + (options.waitMs ?? 0);
      const folder = folderOf(address);
      for (;;) {
        const messages = await take(address);
        if (messages.length > 0 || Date.now() >= until || options.signal?.aborted) return messages;
        await new Promise<void>((resolve) => {
          const waiters = localWaiters.get(folder) ?? new Set<() => void>();
          localWaiters.set(folder, waiters);
          const finish = () => {
            clearTimeout(timer);
            waiters.delete(finish);
            if (waiters.size === 0) localWaiters.delete(folder);
            options.signal?.removeEventListener("abort", finish);
            resolve();
          };
          const timer = setTimeout(finish, Math.min(POLL_MS, Math.max(0, until - Date.now())));
          waiters.add(finish);
          options.signal?.addEventListener("abort", finish, { once: true });
        });
      }
    },
  };
}
