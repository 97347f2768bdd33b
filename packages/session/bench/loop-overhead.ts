// Loop overhead per model call, without the model: an in-process provider answers at once with a tool call, so
// each iteration is the loop's own work — prepare (with the layers' checks), the stream plumbing, appending and
// writing the assistant message, PostSampling, checking and running the tool (schema, PreToolUse, permission,
// execute, PostToolUse), appending and writing the results. Measured between consecutive `model-request` events,
// at about 1K and 100K tokens of context; the baseline in the same run is a hand-written loop that only streams,
// runs the tool and appends JSON lines to a file.
import { appendFile, mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage, type Message, type Tool } from "@unforget/core";
import { toRequestMessages } from "@unforget/transcript";
import { createAgentSession } from "../src/index.ts";
import { createInstantProvider } from "./instant-provider.ts";

const MODEL = "claude-sonnet-4-6";
const ITERATIONS = 200;
const WARMUP = 10;

const echo: Tool = {
  name: "echo",
  description: "Repeats the text.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  readOnly: true,
  concurrencySafe: true,
  async execute(input) {
    return { content: `echo: ${String(input.text)}`, isError: false };
  },
};

/**
 * Text of about `tokens` tokens as the provider reports them (a quarter of the characters; the manager's count
 * anchors on that usage): distinct words, like a pasted document.
 */
function filler(tokens: number): string {
  const lines: string[] = [];
  for (let length = 0, index = 0; length < tokens * 4; index++) {
    const line = Array.from({ length: 12 }, (_, word) => `w${((index * 12 + word) * 7919) % 100_003}`).join(
      " ",
    );
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join("\n");
}

const provider = createInstantProvider(() => ({ toolCall: { name: "echo", input: { text: "ping" } } }));

async function sessionIterations(
  contextTokens: number,
): Promise<{ times: number[]; first: number; last: number }> {
  const dir = await mkdtemp(join(tmpdir(), "unforget-session-bench-"));
  try {
    const session = await createAgentSession({
      provider,
      model: MODEL,
      system: "You are a careful agent.",
      tools: [echo],
      sessionsDir: dir,
      maxTurns: ITERATIONS + WARMUP + 1,
    });
    const times: number[] = [];
    const tokens: number[] = [];
    let last: number | undefined;
    for await (const event of session.send(filler(contextTokens))) {
      if (event.type !== "model-request") continue;
      const now = performance.now();
      if (last !== undefined) times.push(now - last);
      last = now;
      tokens.push(event.tokens);
    }
    await session.close();
    return { times: times.slice(WARMUP), first: tokens[WARMUP] ?? 0, last: tokens.at(-1) ?? 0 };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function baselineIterations(contextTokens: number): Promise<number[]> {
  const dir = await mkdtemp(join(tmpdir(), "unforget-session-bench-"));
  const path = join(dir, "baseline.jsonl");
  try {
    const messages: Message[] = [createMessage("user", filler(contextTokens))];
    const context = {
      signal: new AbortController().signal,
      sessionId: "b",
      toolUseId: "",
      cwd: dir,
      sessionState: new Map(),
    };
    const times: number[] = [];
    for (let index = 0; index < ITERATIONS + WARMUP; index++) {
      const started = performance.now();
      const response = await provider
        .streamMessage({ model: MODEL, messages: toRequestMessages(messages), maxTokens: 32_000 })
        .finalResponse();
      const assistant = createMessage("assistant", response.content, { usage: response.usage });
      messages.push(assistant);
      await appendFile(path, `${JSON.stringify(assistant)}\n`);
      const use = response.content[0];
      if (use?.type !== "tool_use") throw new Error("expected a tool call");
      const output = await echo.execute(use.input as Record<string, unknown>, {
        ...context,
        toolUseId: use.id,
      });
      const results = createMessage("user", [
        { type: "tool_result", tool_use_id: use.id, content: String(output.content) },
      ]);
      messages.push(results);
      await appendFile(path, `${JSON.stringify(results)}\n`);
      if (index >= WARMUP) times.push(performance.now() - started);
    }
    return times;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

// Rounds alternate the baseline and the session, so that a burst of load on a shared machine falls on both; the
// row shows the median of the rounds' medians and the spread of the rounds' ratios.
const ROUNDS = 3;
const rows: string[] = [];
for (const context of [1_000, 100_000]) {
  const sessionMedians: number[] = [];
  const sessionP95s: number[] = [];
  const baseMedians: number[] = [];
  const ratios: number[] = [];
  let measured = { first: 0, last: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    const baseline = await baselineIterations(context);
    const session = await sessionIterations(context);
    measured = session;
    const median = quantile(session.times, 0.5);
    const baseMedian = quantile(baseline, 0.5);
    sessionMedians.push(median);
    sessionP95s.push(quantile(session.times, 0.95));
    baseMedians.push(baseMedian);
    ratios.push(median / baseMedian);
  }
  const median = quantile(sessionMedians, 0.5);
  const baseMedian = quantile(baseMedians, 0.5);
  rows.push(
    `| ${measured.first.toLocaleString("en-US")} → ${measured.last.toLocaleString("en-US")} | ${median.toFixed(3)} ms | ${quantile(sessionP95s, 0.5).toFixed(3)} ms | ${baseMedian.toFixed(3)} ms | ${(median / baseMedian).toFixed(2)}× | ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}× |`,
  );
}
console.log(
  `Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, load average ${loadavg()[0]?.toFixed(1)}; ${ROUNDS} rounds of ${ITERATIONS} model calls per row after ${WARMUP} of warm-up`,
);
console.log(
  "| context (tokens, first → last measured call) | session: median per model call | p95 | hand-written loop: median | ratio | ratio by round |",
);
console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
for (const row of rows) console.log(row);
