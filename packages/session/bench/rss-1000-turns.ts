// Memory over a long session: 1,000 turns (one tool call and one answer each, ~2 KB of tool output) in a
// 32,000-token window, so the ladder compacts all along, with the extractive summariser (offline). RSS and heap
// after a full GC, after 20 turns of warm-up and after the 1,000; the transcript's size on disk is the same-run
// reference for what the session keeps (it holds every message in memory too, for memory extraction and resume).
// Run with `node --expose-gc --import tsx bench/rss-1000-turns.ts`.
import { mkdtemp, rm, stat } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createExtractiveSummarizer } from "@unforget/compact";
import type { Tool } from "@unforget/core";
import { createAgentSession } from "../src/index.ts";
import { createInstantProvider } from "./instant-provider.ts";

const TURNS = 1_000;
const WARMUP = 20;

const report: Tool = {
  name: "report",
  description: "Prints a status report.",
  inputSchema: { type: "object", properties: { part: { type: "number" } }, required: ["part"] },
  readOnly: true,
  concurrencySafe: true,
  async execute(input) {
    const lines = Array.from(
      { length: 40 },
      (_, line) => `part ${String(input.part)}, check ${line}: passed`,
    );
    return { content: lines.join("\n"), isError: false };
  },
};

let part = 0;
const provider = createInstantProvider((request) => {
  const last = request.messages.at(-1);
  const answered =
    typeof last?.content !== "string" && last?.content.some((block) => block.type === "tool_result");
  return answered
    ? { text: `Part ${part} is fine.` }
    : { toolCall: { name: "report", input: { part: ++part } } };
});

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error("Run with node --expose-gc.");
  collect();
  collect();
}

const megabytes = (bytes: number) => (bytes / 1_048_576).toFixed(1);

const dir = await mkdtemp(join(tmpdir(), "unforget-session-rss-"));
try {
  const session = await createAgentSession({
    provider,
    model: "claude-sonnet-4-6",
    system: "You are a careful agent.",
    tools: [report],
    sessionsDir: dir,
    context: {
      limits: { contextWindow: 32_000, maxOutputTokens: 4_000 },
      summarizer: createExtractiveSummarizer(),
    },
  });
  let compactions = 0;
  const turn = async (index: number) => {
    for await (const event of session.send(`Check part ${index}.`)) {
      if (event.type === "context" && event.event.type === "layer") compactions++;
    }
  };
  for (let index = 0; index < WARMUP; index++) await turn(index);
  gc();
  const before = process.memoryUsage();
  const started = performance.now();
  for (let index = WARMUP; index < WARMUP + TURNS; index++) await turn(index);
  const seconds = (performance.now() - started) / 1000;
  gc();
  const after = process.memoryUsage();
  const transcript = (await stat(session.transcriptPath)).size;
  const status = session.status();
  await session.close();
  console.log(
    `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, load average ${loadavg()[0]?.toFixed(1)}; ${TURNS} turns in ${seconds.toFixed(1)} s`,
  );
  console.log("| measure | after warm-up | after 1,000 turns | growth |");
  console.log("| --- | ---: | ---: | ---: |");
  console.log(
    `| RSS | ${megabytes(before.rss)} MB | ${megabytes(after.rss)} MB | **${megabytes(after.rss - before.rss)} MB** |`,
  );
  console.log(
    `| heap used | ${megabytes(before.heapUsed)} MB | ${megabytes(after.heapUsed)} MB | ${megabytes(after.heapUsed - before.heapUsed)} MB |`,
  );
  console.log(`| transcript on disk (reference) | | ${megabytes(transcript)} MB | |`);
  console.log(
    `Layers that acted: ${compactions}; boundary compactions: ${status.compactions}; context at the end: ${status.tokens} of a ${status.threshold}-token threshold.`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
