// A very long session through the real loop: `createAgentSession` with the instant provider, run until 1,000
// compactions. The shape is the history bench's (a 16,000-token window, a tool result of about 1,200 tokens and a
// note of about 200 per model call, results kept so that only summaries free room, the extractive summariser),
// but a user turn every 24 model calls rather than six (see CALLS_PER_TURN). At compaction 10, 100 and 1,000:
// time per model call since the previous row, heap after a full GC, the transcript's size, the messages the
// session holds (`session.messages`) and their JSON size. At the end, what the transcript holds by kind (in
// memory, the manager keeps only the entries the context is projected from, the session only their messages).
// Run with `node --expose-gc --import tsx bench/thousand-compactions.ts [compactions]` (default 1,000; rows at
// 10, 100, 1,000). `BENCH_RETAIN=all` runs the baseline that holds everything in memory, as the session did
// before (`context.retainEntries: "all"`: every entry in the manager, every message in `session.messages`).
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createAgentSession } from "../src/index.ts";
import {
  createInstantProvider,
  inspectingTurns,
  keptInspectTool,
  longSessionOptions,
} from "./instant-provider.ts";

const TARGET = Number(process.argv[2] ?? 1_000);
const MARKS = [10, 100, 1_000, 10_000].filter((mark) => mark <= TARGET);
// Model calls per user turn. Every user message is carried beside each summary, the oldest folded into one range of
// history ids once over their budget (decision 0044): at six calls a turn (the history bench's pace, more prompts)
// the 16,000-token window used to overflow near compaction 554 (BENCHMARKS.md). `BENCH_CALLS_PER_TURN=6` shows it.
const CALLS_PER_TURN = Number(process.env.BENCH_CALLS_PER_TURN ?? 24);
const RETAIN = process.env.BENCH_RETAIN === "all" ? "all" : "context";
const WORDS = ["parse", "token", "cache", "module", "error", "config", "build", "result", "index", "stream"];

/** A deterministic pseudo-random stream (no Math.random: the same run every time). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state;
  };
}

/** Code-like filler of about `tokens` tokens (ten a line). */
function filler(next: () => number, tokens: number): string {
  const lines: string[] = [];
  for (let line = 0; line * 10 < tokens; line++) {
    const value = next();
    lines.push(
      `  ${WORDS[value % 10]}_${line}(${WORDS[(value >> 4) % 10]}); // ${WORDS[(value >> 8) % 10]} ${value % 97}`,
    );
  }
  return lines.join("\n");
}

const next = random(11);
const inspect = keptInspectTool((part) => `part ${part}\n${filler(next, 1_200)}`);
/** Model calls that called the tool, the rows' "model calls". */
let calls = 0;
const provider = createInstantProvider(
  inspectingTurns(CALLS_PER_TURN, (call) => {
    calls = call;
    return `Step ${call}. ${filler(next, 200)}`;
  }),
);

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error("Run with node --expose-gc.");
  collect();
  collect();
}

const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;

/** The summaries the transcript holds so far: how many, and their average size in characters. */
async function summaries(path: string): Promise<string> {
  let count = 0;
  let chars = 0;
  for (const line of (await readFile(path, "utf8")).split("\n")) {
    if (!line.includes('"type":"summary"')) continue;
    const entry = JSON.parse(line) as { type: string; text?: string };
    if (entry.type !== "summary" || typeof entry.text !== "string") continue;
    count++;
    chars += entry.text.length;
  }
  return count === 0 ? "none" : `${(chars / count / 1_000).toFixed(1)} KB`;
}

const dir = await mkdtemp(join(tmpdir(), "unforget-session-long-"));
try {
  const session = await createAgentSession({
    ...longSessionOptions(provider, [inspect], dir, { retainEntries: RETAIN }),
    system: "You are a careful agent.",
  });
  const loads: number[] = [];
  const rows: string[] = [];
  let turns = 0;
  let since = { calls: 0, time: performance.now() };
  let mark = 0;
  while (mark < MARKS.length) {
    try {
      for await (const _event of session.send(`Next step ${++turns}.`)) {
        // Drained: the loop runs the turn as an application would.
      }
    } catch (error) {
      const status = session.status();
      console.log(
        `Stopped at compaction ${status.compactions}, model call ${calls}, user turn ${turns}: ${(error as Error).message.split(".")[0]}.`,
      );
      break;
    }
    const reached = session.status().compactions;
    if (process.env.BENCH_PROGRESS && reached % 50 === 0)
      console.error(`progress: ${reached} compactions, ${calls} calls, ${session.status().tokens} tokens`);
    if (reached < MARKS[mark]!) continue;
    const perCall = (performance.now() - since.time) / (calls - since.calls);
    gc();
    const heap = process.memoryUsage().heapUsed;
    const transcript = (await stat(session.transcriptPath)).size;
    const held = session.messages;
    const status = session.status();
    const averageSummary = await summaries(session.transcriptPath);
    loads.push(loadavg()[0] ?? 0);
    rows.push(
      `| ${status.compactions.toLocaleString("en")} | ${calls.toLocaleString("en")} | ${perCall.toFixed(2)} ms | ${mb(heap)} | ${mb(transcript)} | ${held.length.toLocaleString("en")} (${mb(JSON.stringify(held).length)}) | ${status.tokens.toLocaleString("en")} | ${averageSummary} |`,
    );
    console.error(rows.at(-1));
    mark++;
    since = { calls, time: performance.now() };
  }
  await session.close();
  const byKind = new Map<string, { entries: number; bytes: number }>();
  for (const line of (await readFile(session.transcriptPath, "utf8")).split("\n")) {
    if (line === "") continue;
    const entry = JSON.parse(line) as {
      type: string;
      message?: { role: string; content: { type: string }[] };
    };
    const kind =
      entry.type === "message"
        ? `${entry.message!.role} message${entry.message!.content.some((block) => block.type === "tool_result") ? " (tool results)" : ""}`
        : entry.type;
    const known = byKind.get(kind) ?? { entries: 0, bytes: 0 };
    known.entries++;
    known.bytes += line.length + 1;
    byKind.set(kind, known);
  }
  console.log("| transcript entries | count | size |");
  console.log("| --- | --- | --- |");
  for (const [kind, { entries, bytes }] of [...byKind].sort((a, b) => b[1].bytes - a[1].bytes))
    console.log(`| ${kind} | ${entries.toLocaleString("en")} | ${mb(bytes)} |`);
  console.log(
    `retainEntries: ${RETAIN}; Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, load average ${loads.map((load) => load.toFixed(1)).join(" / ")} at the rows`,
  );
  console.log(
    "| compactions | model calls | time per call | heap used | transcript | messages held (JSON) | context tokens | summary (average) |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const row of rows) console.log(row);
} finally {
  await rm(dir, { recursive: true, force: true });
}
