import { appendFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFileTaskBackend } from "./file-task-backend.ts";
import { outputFile, taskDirectory } from "./task-paths.ts";
import { describeTaskBackendContract } from "./testing/index.ts";

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
