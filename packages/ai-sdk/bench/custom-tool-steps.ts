// prepareStep per step on requests of 60K tokens or more whose tool is one no list knows (`custom_Run`, nothing
// said about it) with a session folder: its old results are saved before the cheap layers clear them. Two clocks:
// a response a second before each step (the prompt cache warm), and an hour before each step (cold: the cheap
// layers may act on every step). `npx tsx bench/custom-tool-steps.ts` prints one JSON line per clock; bench/run.ts
// prints the table.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { syntheticToolOutput } from "@unforget/testing/arbitraries";
import type { ModelMessage } from "ai";
import { createAiSdkContext } from "../src/index.ts";

const STEP_TOOL = "custom_Run";

function round(index: number, tokens: number): ModelMessage[] {
  return [
    {
      role: "assistant",
      content: [{ type: "tool-call", toolCallId: `call_${index}`, toolName: STEP_TOOL, input: { n: index } }],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `call_${index}`,
          toolName: STEP_TOOL,
          output: { type: "text", value: syntheticToolOutput(index, tokens) },
        },
      ],
    },
  ];
}

/** Per-step wall times (ms) of the steps whose request held at least `minTokens`, and what the run saved. */
export async function measureCustomToolSteps(idleMs: number, steps = 200, minTokens = 60_000) {
  const sessionDir = await mkdtemp(join(tmpdir(), "unforget-ai-sdk-steps-"));
  try {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const context = createAiSdkContext({
      model: "bench",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      sessionDir,
      clock: () => now,
    });
    let messages: ModelMessage[] = [{ role: "user", content: "Run the checks and fix what fails." }];
    let index = 0;
    for (; index < 40; index++) messages.push(...round(index, 1_500));
    const stepList: { usage: unknown }[] = [];
    await context.prepareStep({ messages, steps: stepList });
    const times: number[] = [];
    for (let step = 0; step < steps; step++) {
      const tokens = context.status().tokens;
      stepList.push({
        usage: {
          inputTokens: tokens,
          inputTokenDetails: { noCacheTokens: tokens, cacheReadTokens: 0, cacheWriteTokens: 0 },
          outputTokens: 30,
        },
      });
      messages = [...messages, ...round(index++, 600)];
      now += idleMs;
      const started = performance.now();
      const result = await context.prepareStep({ messages, steps: stepList });
      const elapsed = performance.now() - started;
      messages = result.messages ?? messages;
      if (context.status().tokens >= minTokens) times.push(elapsed);
    }
    const saved = (await readdir(join(sessionDir, "tool-results")).catch(() => [])).length;
    return { times, saved, steps };
  } finally {
    await rm(sessionDir, { recursive: true, force: true, maxRetries: 5 });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [clock, idleMs] of [
    ["warm", 1_000],
    ["cold", 3_600_000],
  ] as const)
    console.log(JSON.stringify({ clock, ...(await measureCustomToolSteps(idleMs)) }));
}
