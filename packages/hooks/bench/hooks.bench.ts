// Cost of firing one event through the bus, compared in the same run with a plain array of async functions.
// Each task fires BATCH events in sequence so the harness's own per-iteration cost is spread thin.
import { cpus } from "node:os";
import { AsyncParallelHook } from "tapable";
import { Bench } from "tinybench";
import { applyPlugins, createSessionHooks, type HookPlugin, type PostCompactEvent } from "../src/index.ts";

const BATCH = 1000;
const PLUGINS = 10;

const postCompactEvent: PostCompactEvent = {
  sessionId: "bench",
  trigger: "auto",
  layer: "full",
  summary: "summary",
  tokensBefore: 170_000,
  tokensAfter: 20_000,
  messagesSummarized: 120,
};
const preCompactEvent = { sessionId: "bench", trigger: "auto", tokens: 170_000, threshold: 167_000 } as const;

let sink = 0;

function observerPlugins(): HookPlugin[] {
  return Array.from({ length: PLUGINS }, (_, index) => ({
    name: `observer-${index}`,
    apply(hooks) {
      hooks.postCompact.tapPromise(`observer-${index}`, async (event) => {
        sink += event.tokensAfter;
      });
    },
  }));
}

function instructionPlugins(): HookPlugin[] {
  return Array.from({ length: PLUGINS }, (_, index) => ({
    name: `instructions-${index}`,
    apply(hooks) {
      hooks.preCompact.tapPromise(`instructions-${index}`, async (result) => ({
        instructions: `${result.instructions}\n${index}`,
      }));
    },
  }));
}

const emptyArray: Array<(event: PostCompactEvent) => Promise<void>> = [];
const tenFunctions = Array.from({ length: PLUGINS }, () => async (event: PostCompactEvent) => {
  sink += event.tokensAfter;
});

const emptyBus = createSessionHooks({ onHookError: () => {} });
const observerBus = createSessionHooks({ onHookError: () => {} });
applyPlugins(observerBus, observerPlugins());
const instructionBus = createSessionHooks({ onHookError: () => {} });
applyPlugins(instructionBus, instructionPlugins());
const rawTapable = new AsyncParallelHook<[PostCompactEvent]>(["event"]);
for (const fn of tenFunctions) rawTapable.tapPromise("raw", fn);

const bench = new Bench({ time: 1000, warmup: true });
bench
  .add("baseline: empty array of async functions", async () => {
    for (let i = 0; i < BATCH; i++) for (const fn of emptyArray) await fn(postCompactEvent);
  })
  .add("baseline: 10 async functions in a loop", async () => {
    for (let i = 0; i < BATCH; i++) for (const fn of tenFunctions) await fn(postCompactEvent);
  })
  .add("empty bus: postCompact.promise", async () => {
    for (let i = 0; i < BATCH; i++) await emptyBus.postCompact.promise(postCompactEvent);
  })
  .add("empty bus: preCompact.promise (waterfall)", async () => {
    for (let i = 0; i < BATCH; i++) await emptyBus.preCompact.promise({ instructions: "" }, preCompactEvent);
  })
  .add("raw tapable, 10 taps, no guard: postCompact", async () => {
    for (let i = 0; i < BATCH; i++) await rawTapable.promise(postCompactEvent);
  })
  .add("bus, 10 observer plugins: postCompact", async () => {
    for (let i = 0; i < BATCH; i++) await observerBus.postCompact.promise(postCompactEvent);
  })
  .add("bus, 10 instruction plugins: preCompact", async () => {
    for (let i = 0; i < BATCH; i++)
      await instructionBus.preCompact.promise({ instructions: "" }, preCompactEvent);
  });

await bench.run();

const perEvent = (name: string): number => {
  const task = bench.getTask(name);
  const result = task?.result;
  if (result === undefined || !("latency" in result)) throw new Error(`benchmark "${name}" did not complete`);
  return (result.latency.mean * 1000) / BATCH;
};

const rows = bench.tasks.map((task) => [task.name, perEvent(task.name)] as const);
const baselineEmpty = perEvent("baseline: empty array of async functions");
const baselineTen = perEvent("baseline: 10 async functions in a loop");
console.log(
  `machine: ${cpus().length} CPUs visible, ${cpus()[0]?.model ?? "unknown CPU"}, node ${process.version}`,
);
console.log("| case | µs per event | vs. baseline |");
console.log("| --- | ---: | ---: |");
for (const [name, micros] of rows) {
  const baseline = name.includes("10") ? baselineTen : baselineEmpty;
  console.log(`| ${name} | ${micros.toFixed(3)} | ${(micros / baseline).toFixed(2)}× |`);
}
if (sink < 0) console.log(sink);
