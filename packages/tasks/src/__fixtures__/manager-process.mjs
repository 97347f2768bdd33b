// A task manager in its own process, so a test can kill it with SIGKILL or measure its memory alone. It runs
// the built package (the tests run after the build), which starts faster than TypeScript through a loader.
// argv: <dir> <mode: "hold" | "measure"> <command>. Prints one JSON line per event on stdout.
import { createTaskManager } from "@unforget/tasks";

const [dir, mode, command] = process.argv.slice(2);
const manager = await createTaskManager({ dir, stall: { intervalMs: 100, quietMs: 60_000 }, graceMs: 500 });
const say = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

const baseline = process.memoryUsage().rss;
const id = await manager.start({ type: "local_bash", command });
say({ id, pid: (await manager.get(id)).pid, managerPid: process.pid });

if (mode === "measure") {
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const info = await manager.wait(id);
  clearInterval(sampler);
  say({ status: info.status, outputBytes: info.outputBytes, baseline, peak });
  await manager.close();
} else {
  // Hold: keep the manager alive until the test kills this process.
  setInterval(() => undefined, 60_000);
}
