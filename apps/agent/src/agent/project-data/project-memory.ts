import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { MemoryStore, ProposalQueue } from "@unforget/memory";

/** The project's long-term memory: its memory dir and the queue of proposed changes. */
export interface ProjectMemory {
  store: MemoryStore;
  proposals: ProposalQueue;
}

/** Opens the project's memory (loading `@unforget/memory`) on the first call; later calls get the same one. */
export function projectMemoryOnUse(root: string): () => Promise<ProjectMemory> {
  let opened: Promise<ProjectMemory> | undefined;
  return () => {
    opened ??= openProjectMemory(root);
    return opened;
  };
}

async function openProjectMemory(root: string): Promise<ProjectMemory> {
  const { createMemoryDir, createProposalQueue } = await import("@unforget/memory");
  const store = await createMemoryDir({ root });
  return { store, proposals: createProposalQueue(join(root, ".unforget", "proposals")) };
}

/** What decides whether a session's memory has anything to do. */
export interface MemoryUse {
  interactive: boolean;
  consent: "propose" | "auto" | "off";
  sessionNotes: boolean;
}

/**
 * Whether a session gets memory. It always does in the REPL, and whenever it may write (extraction, unless its
 * consent is "off") or keeps session notes. Otherwise memory only reads — the MEMORY.md index at session start and
 * the memories recalled for each prompt — and a memory dir that holds neither gives nothing to read: `unforget -p`
 * in a project with no memories then opens its session without memory, and loads none of it.
 */
export async function sessionNeedsMemory(root: string, use: MemoryUse): Promise<boolean> {
  if (use.interactive || use.consent !== "off" || use.sessionNotes) return true;
  return holdsMemory(root);
}

/** Memories and MEMORY.md are the folder's files; what it derives from them is kept in `.unforget/`. */
async function holdsMemory(root: string): Promise<boolean> {
  try {
    return (await readdir(root)).some((name) => !name.startsWith("."));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
}
