import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createTeamMemory } from "../team/team-memory.ts";
import { describeMemoryStoreContract } from "../testing/memory-store-contract.ts";
import { createMemoryDir, type MemoryDir } from "./memory-dir.ts";

async function temporaryRoot(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), "memory-contract-")), "memory");
}

const cleanup = async (store: MemoryDir) => rm(dirname(store.root), { recursive: true, force: true });

describeMemoryStoreContract({
  name: "memory dir",
  createStore: async () => createMemoryDir({ root: await temporaryRoot() }),
  openSecondClient: (store) => createMemoryDir({ root: store.root }),
  cleanup,
});

describeMemoryStoreContract({
  name: "team memory",
  createStore: async () => createTeamMemory({ root: await temporaryRoot() }),
  openSecondClient: (store) => createTeamMemory({ root: store.root }),
  cleanup,
  propertyRuns: 8,
});

// A store the application gives, with secret scanning put in front of it: every member must reach the store.
const roots = new WeakMap<object, string>();
describeMemoryStoreContract({
  name: "team memory over a given store",
  createStore: async () => {
    const root = await temporaryRoot();
    const store = await createTeamMemory({ store: await createMemoryDir({ root }) });
    roots.set(store, root);
    return store;
  },
  openSecondClient: async (store) => {
    const second = await createTeamMemory({ store: await createMemoryDir({ root: roots.get(store)! }) });
    roots.set(second, roots.get(store)!);
    return second;
  },
  cleanup: async (store) => rm(dirname(roots.get(store)!), { recursive: true, force: true }),
  propertyRuns: 8,
});
