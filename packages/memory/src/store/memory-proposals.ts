import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "@unforget/files";
import { MemoryConflictError, MemoryNotFoundError } from "./memory-errors.ts";
import { normalizeMemoryName } from "./memory-name.ts";
import type { MemoryStore } from "./memory-store.ts";
import { isAbsent, storeFileError } from "./store-file-errors.ts";

/** One change a proposal would make; `baseHash` is what the memory was when the change was computed. */
export type ProposedChange =
  | { kind: "write"; name: string; content: string; baseHash: string | null; reason?: string }
  | { kind: "delete"; name: string; baseHash: string; reason?: string };

/** A reviewable set of memory changes, waiting for the user. */
export interface MemoryProposal {
  id: string;
  createdAt: string;
  /** Who proposed it ("extraction:session:<id>", "dream"). */
  author: string;
  /** One line for the review list. */
  summary: string;
  changes: ProposedChange[];
}

/** What approving a proposal did, change by change. */
export interface ProposalOutcome {
  applied: string[];
  /** Changes not applied because the memory changed since the proposal was made (nothing was overwritten). */
  conflicts: string[];
}

export interface ProposalQueue {
  /** Stores a proposal for review and returns it. */
  propose(proposal: Omit<MemoryProposal, "id" | "createdAt">): Promise<MemoryProposal>;
  /** Pending proposals, oldest first. */
  list(): Promise<MemoryProposal[]>;
  /** Throws `MemoryNotFoundError` for an unknown id. */
  get(id: string): Promise<MemoryProposal>;
  /**
   * Applies a proposal with compare-and-swap on each change's base hash: a memory changed since is left
   * alone and reported as a conflict. The proposal leaves the queue (kept under `approved/`).
   */
  approve(id: string, store: MemoryStore, options?: { author?: string }): Promise<ProposalOutcome>;
  /** Drops a proposal from the queue (kept under `rejected/`). */
  reject(id: string): Promise<void>;
}

const ID = /^[0-9TZ-]+-[0-9a-f]{8}$/;

/** Whether `id` has the shape of a proposal id (checked before any I/O). */
export function isProposalId(id: unknown): id is string {
  return typeof id === "string" && ID.test(id);
}

/** A new proposal's id and time: sortable by time, unique by a random suffix. */
export function newProposalId(): { id: string; createdAt: string } {
  const createdAt = new Date().toISOString();
  return { id: `${createdAt.replace(/[:.]/g, "-")}-${randomUUID().slice(0, 8)}`, createdAt };
}

/**
 * Applies a proposal's changes to `store`, each conditioned on its base hash: a memory changed since is left
 * alone and reported as a conflict. Each change carries a write id derived from the proposal, so approving
 * again after a lost reply applies nothing twice. Every queue's `approve` does this.
 */
export async function applyProposal(
  proposal: MemoryProposal,
  store: MemoryStore,
  options: { author?: string } = {},
): Promise<ProposalOutcome> {
  const outcome: ProposalOutcome = { applied: [], conflicts: [] };
  const author = options.author ?? "user";
  for (const [index, change] of proposal.changes.entries()) {
    const reason = change.reason ?? proposal.summary;
    const writeId = `proposal:${proposal.id}:${index}`;
    try {
      if (change.kind === "write") {
        await store.write(change.name, change.content, {
          expectedHash: change.baseHash,
          author,
          reason,
          writeId,
        });
      } else {
        await store.delete(change.name, { expectedHash: change.baseHash, author, reason, writeId });
      }
      outcome.applied.push(change.name);
    } catch (error) {
      if (!(error instanceof MemoryConflictError || error instanceof MemoryNotFoundError)) throw error;
      outcome.conflicts.push(change.name);
    }
  }
  return outcome;
}

/** A queue of proposals in a folder (for a memory dir: `<root>/.unforget/proposals`). */
/** One proposal file; a missing one rejects with the raw ENOENT error, an unreadable one with `MemoryStoreError`. */
async function readProposal(path: string): Promise<MemoryProposal> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as MemoryProposal;
  } catch (error) {
    if (isAbsent(error)) throw error;
    throw storeFileError("The proposal", path, error);
  }
}

export function createProposalQueue(folder: string): ProposalQueue {
  const pathOf = (id: string) => {
    if (!isProposalId(id)) {
      throw new MemoryNotFoundError(`There is no proposal "${id}"; list them to see the pending ones.`, {
        memoryName: id,
      });
    }
    return join(folder, `${id}.json`);
  };
  const move = async (id: string, to: "approved" | "rejected") => {
    await mkdir(join(folder, to), { recursive: true });
    await rename(pathOf(id), join(folder, to, `${id}.json`));
  };
  const queue: ProposalQueue = {
    async propose(input) {
      const { id, createdAt } = newProposalId();
      const proposal: MemoryProposal = {
        ...input,
        changes: input.changes.map((change) => ({ ...change, name: normalizeMemoryName(change.name) })),
        id,
        createdAt,
      };
      await writeFileAtomic(pathOf(id), JSON.stringify(proposal, null, 2), { tempDir: join(folder, ".tmp") });
      return proposal;
    },
    async list() {
      let files: string[];
      try {
        files = (await readdir(folder)).filter((file) => file.endsWith(".json")).sort();
      } catch (error) {
        if (isAbsent(error)) return [];
        throw storeFileError("The proposals folder", folder, error);
      }
      return Promise.all(files.map((file) => readProposal(join(folder, file))));
    },
    async get(id) {
      const path = pathOf(id);
      try {
        return await readProposal(path);
      } catch (error) {
        if (!isAbsent(error)) throw error;
        throw new MemoryNotFoundError(`There is no pending proposal "${id}".`, {
          memoryName: id,
          cause: error,
        });
      }
    },
    async approve(id, store, options = {}) {
      const outcome = await applyProposal(await queue.get(id), store, options);
      await move(id, "approved");
      return outcome;
    },
    async reject(id) {
      await queue.get(id);
      await move(id, "rejected");
    },
  };
  return queue;
}
