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
