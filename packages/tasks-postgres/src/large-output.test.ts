import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createSqlClient } from "@unforget/postgres";
import { createTaskManager } from "@unforget/tasks";
import { afterAll, describe, expect, it } from "vitest";
import { killChildren, startChild } from "./__fixtures__/child-processes.ts";
import { openServerDatabase } from "./__fixtures__/databases.ts";
import { createPostgresTaskBackend } from "./postgres-task-backend.ts";

const PRINT_LINES = fileURLToPath(new URL("../../tasks/src/__fixtures__/print-lines.mjs", import.meta.url));
const line = (index: number) =>
  `${String(index).padStart(10, "0")} héllo wörld ✓ 🙂 ${"x".repeat(index % 37)}\n`;
const server = await openServerDatabase();

describe.skipIf(server === undefined)("200 MB through a worker", () => {
  afterAll(async () => {
    killChildren();
    await server?.drop();
  });

  it("tailed from another process with exact offsets, while the worker's memory stays flat", async () => {
    const folder = await mkdtemp(join(tmpdir(), "tasks-large-"));
    const worker = startChild("./worker-process.mjs", [server!.url!, folder, "30000", "1"], {
      UNFORGET_REPORT_RSS: "1",
    });
    await worker.next<{ ready: boolean }>((line) => "ready" in line);
    const baseline = (await worker.next<{ rss: number }>((line) => "rss" in line)).rss;
    const client = await createSqlClient({ url: server!.url! });
    const backend = await createPostgresTaskBackend({ client });
    const manager = await createTaskManager({ backend, sessionId: "reader" });
    const size = 200_000_000;
    const id = await manager.start({ type: "local_bash", command: `node ${PRINT_LINES} ${size}` });

    // Follows the output while it is written, checking every line without holding the text.
    let carry = "";
    let next = 0;
    let offset = 0;
    for (;;) {
      const chunk = await manager.readOutput(id, offset);
      expect(Buffer.byteLength(chunk.data)).toBe(chunk.nextOffset - offset);
      const lines = (carry + chunk.data).split("\n");
      carry = lines.pop() ?? "";
      for (const text of lines) {
        if (`${text}\n` !== line(next)) throw new Error(`line ${next} is ${JSON.stringify(text)}`);
        next += 1;
      }
      offset = chunk.nextOffset;
      if (chunk.done) break;
      if (chunk.data === "") await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(carry).toBe("");
    expect(offset).toBeGreaterThanOrEqual(size);
    expect(await manager.get(id)).toMatchObject({ status: "completed", outputBytes: offset });
    const { peak } = await worker.next<{ peak: number }>((line) => "peak" in line);
    // The worker shipped 200 MB in 256 KiB chunks from its file: it never held the output.
    expect(peak - baseline).toBeLessThan(64 * 1024 * 1024);
    await manager.close();
    await backend.close();
    await client.close();
    await rm(folder, { recursive: true, force: true });
  }, 300_000);
});
