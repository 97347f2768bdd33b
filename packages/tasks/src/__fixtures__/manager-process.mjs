// A task manager in its own process, so a test can kill it with SIGKILL, pause it with SIGSTOP or measure its
// memory alone. It runs the built package (the tests run after the build), which starts faster than
// TypeScript through a loader.
// argv: <dir> <mode: "hold" | "measure" | "agent"> <command> [leaseMs]. Prints one JSON line per event on stdout.
// "agent" starts a local_agent that appends a line to its output every 20 ms until it is aborted.
import { setTimeout as sleep } from "node:timers/promises";
import { createTaskManager } from "@unforget/tasks";

const [dir, mode, command, leaseMs] = process.argv.slice(2);
const manager = await createTaskManager({
  dir,
  stall: { intervalMs: 100, quietMs: 60_000 },
  graceMs: 500,
  ...(leaseMs === undefined ? {} : { leaseMs: Number(leaseMs) }),
});
const say = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

const baseline = process.memoryUsage().rss;
const id =
  mode === "agent"
    ? await manager.start({
        type: "local_agent",
        description: "writes until aborted",
        async run({ output, signal }) {
          for (let line = 0; !signal.aborted; line++) {
            await output.line(`line ${line}`).catch(() => undefined);
            await sleep(20);
          }
        },
      })
    : await manager.start({ type: "local_bash", command });
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
