import { appendFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTaskManager } from "../manager/task-manager.ts";
import { outputFile, taskDirectory } from "../task/task-paths.ts";
import { describeTaskBackendContract, describeTaskManagerContract } from "../testing/index.ts";
import { createFileTaskBackend } from "./file-task-backend.ts";

describeTaskBackendContract({
  name: "file backend",
  async setup({ leaseMs }) {
    const dir = await mkdtemp(join(tmpdir(), "tasks-backend-"));
    return {
      backend: createFileTaskBackend({ dir, leaseMs }),
      openPeer: async () => createFileTaskBackend({ dir, leaseMs }),
      async appendOutput(id, text) {
        await mkdir(taskDirectory(dir, id), { recursive: true });
        await appendFile(outputFile(taskDirectory(dir, id)), text);
      },
      teardown: () => rm(dir, { recursive: true, force: true }),
    };
  },
});

describeTaskManagerContract({
  name: "file backend, two managers on one directory",
  async setup() {
    const dir = await mkdtemp(join(tmpdir(), "tasks-managers-"));
    const open = () =>
      createTaskManager({ dir, graceMs: 300, pollMs: 50, stall: { intervalMs: 50, quietMs: 300 } });
    const [manager, peer] = [await open(), await open()];
    return {
      manager,
      peer,
      async teardown() {
        await manager.close();
        await peer.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
});
