// The middleware's beforeModel per model call on requests of 60K tokens or more whose tool is one no list knows
// (`custom_Run`, nothing said about it) with a session folder: its old results are saved before the cheap layers
// clear them. Two clocks: a response a second before each call (the prompt cache warm), and an hour before each
// call (cold: the cheap layers may act on every call). `npx tsx bench/custom-tool-steps.ts` prints one JSON line
// per clock; bench/run.ts prints the table.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { syntheticToolOutput } from "@unforget/testing/arbitraries";
import { createContextMiddleware } from "../src/index.ts";
import { applyUpdate, hookOf } from "./before-model.ts";

const STEP_TOOL = "custom_Run";

function round(index: number, tokens: number, contextTokens: number): BaseMessage[] {
  return [
    new AIMessage({
      id: `ai_${index}`,
      content: "",
      tool_calls: [{ id: `call_${index}`, name: STEP_TOOL, args: { n: index }, type: "tool_call" }],
      usage_metadata: { input_tokens: contextTokens, output_tokens: 30, total_tokens: contextTokens + 30 },
    }),
    new ToolMessage({
      id: `tool_${index}`,
      content: syntheticToolOutput(index, tokens),
      tool_call_id: `call_${index}`,
    }),
  ];
}

/** Per-call wall times (ms) of the calls whose request held at least `minTokens`, and what the run saved. */
export async function measureCustomToolSteps(idleMs: number, calls = 200, minTokens = 60_000) {
  const sessionDir = await mkdtemp(join(tmpdir(), "unforget-langchain-steps-"));
  try {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const middleware = createContextMiddleware({
      model: "bench",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      sessionDir,
      clock: () => now,
    });
    const beforeModel = hookOf(middleware);
    let state: BaseMessage[] = [
      new HumanMessage({ id: "h0", content: "Run the checks and fix what fails." }),
    ];
    let index = 0;
    for (; index < 40; index++) state.push(...round(index, 1_500, 0));
    state = applyUpdate(state, await beforeModel({ messages: state }, {}));
    const times: number[] = [];
    for (let call = 0; call < calls; call++) {
      state = [...state, ...round(index++, 600, middleware.status().tokens)];
      now += idleMs;
      const started = performance.now();
      state = applyUpdate(state, await beforeModel({ messages: state }, {}));
      const elapsed = performance.now() - started;
      if (middleware.status().tokens >= minTokens) times.push(elapsed);
    }
    const saved = (await readdir(join(sessionDir, "tool-results")).catch(() => [])).length;
    return { times, saved, steps: calls };
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
