import { afterEach, beforeEach, expect, it } from "vitest";
import { killChildManagers, PRINT_LINES, startChildManager } from "../__fixtures__/child-manager.ts";
import { createLineChecker } from "../__fixtures__/numbered-lines.ts";
import { temporaryDirectory } from "../__fixtures__/task-test-kit.ts";
import { createTaskManager, type TaskManager } from "../manager/task-manager.ts";

let dir: string;
let cleanup: () => Promise<void>;
let reader: TaskManager;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory("tasks-large-"));
  reader = await createTaskManager({ dir, pollMs: 20 });
});
afterEach(async () => {
  killChildManagers();
  await reader.close();
  await cleanup();
});

/** Reads the whole output with offsets, checking every line as it streams by; resolves the byte count. */
async function readChecked(id: string): Promise<{ bytes: number; lines: number }> {
  const checker = createLineChecker();
  let offset = 0;
  for (;;) {
    const chunk = await reader.readOutput(id, offset);
    expect(Buffer.byteLength(chunk.data)).toBe(chunk.nextOffset - offset);
    checker.push(chunk.data);
    offset = chunk.nextOffset;
    if (chunk.done) return { bytes: offset, lines: checker.finish() };
    if (chunk.data === "") await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

it("200 MB of output: the running manager's memory stays flat, offsets are exact, a late reader gets everything", async () => {
  const size = 200_000_000;
  const child = startChildManager(dir, "measure", `node ${PRINT_LINES} ${size}`);
  const { id } = await child.next<{ id: string }>();
  // One reader follows the task while it writes…
  const following = readChecked(id);
  const result = await child.next<{ status: string; outputBytes: number; baseline: number; peak: number }>();
  expect(result.status).toBe("completed");
  expect(result.outputBytes).toBeGreaterThanOrEqual(size);
  // The task wrote straight to its file: the manager that ran it never held the output.
  expect(result.peak - result.baseline).toBeLessThan(64 * 1024 * 1024);
  // …and one joins after the end.
  const [early, late] = await Promise.all([following, readChecked(id)]);
  expect(early.bytes).toBe(result.outputBytes);
  expect(late).toEqual(early);
  expect(late.lines).toBeGreaterThan(3_000_000);
  await child.exited;
  // A bound on the run, not its speed: 200 MB written and read back twice, line by line, beside other work.
}, 600_000);
