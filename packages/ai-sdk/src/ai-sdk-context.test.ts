import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createExtractiveSummarizer, type HostEvent, type LayerReport } from "@unforget/compact";
import { findToolPairViolations } from "@unforget/core";
import {
  applyPlugins,
  createSessionHooks,
  type PostCompactEvent,
  type PreCompactEvent,
} from "@unforget/hooks";
import { syntheticToolOutput } from "@unforget/testing/arbitraries";
import type { ModelMessage } from "ai";
import * as ai7 from "ai";
import { MockLanguageModelV4 } from "ai/test";
import * as ai6 from "ai-v6";
import { MockLanguageModelV3 } from "ai-v6/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createScriptedModel, type ScriptedCall } from "./__fixtures__/scripted-model.ts";
import { createAiSdkContext } from "./ai-sdk-context.ts";
import { fromModelMessages } from "./convert-model-messages.ts";

const WINDOW = 32_000;
const TURNS = 12;
const STEPS_PER_TURN = 25;

/** The functions the loop uses, typed loosely: the two majors' overloads do not unify. */
interface LoopApi {
  generateText(options: unknown): Promise<unknown>;
  streamText(options: unknown): unknown;
  stepCountIs(count: number): unknown;
  tool(options: unknown): unknown;
  jsonSchema(schema: Record<string, unknown>): unknown;
}

const majors = [
  { name: "AI SDK 7", api: ai7, Mock: MockLanguageModelV4 },
  { name: "AI SDK 6", api: ai6, Mock: MockLanguageModelV3 },
] as const;

/** The messages a finished call added, whichever major ran it (7 keeps them per step, 6 accumulates). */
function responseMessages(
  steps: ReadonlyArray<{ response: { messages: unknown[] } }>,
  major: string,
): ModelMessage[] {
  if (major === "AI SDK 6") return (steps[steps.length - 1]?.response.messages ?? []) as ModelMessage[];
  return steps.flatMap((step) => step.response.messages) as ModelMessage[];
}

interface LoopResult {
  context: ReturnType<typeof createAiSdkContext>;
  calls: ScriptedCall[];
  users: string[];
  layers: LayerReport[];
  events: HostEvent[];
}

/**
 * Twelve user turns of 25 tool steps each (300 model calls), every tool output about 600 tokens (180K in all),
 * through `generateText` or `streamText` with `stopWhen`, the context managed by `prepareStep`.
 */
async function runLoop(
  major: (typeof majors)[number],
  mode: "generateText" | "streamText",
  extra: { hooks?: ReturnType<typeof createSessionHooks>; tool?: string } = {},
): Promise<LoopResult> {
  const api = major.api as unknown as LoopApi;
  const toolName = extra.tool ?? "Read";
  const { model, calls } = createScriptedModel(major.Mock as never, (_prompt, call) => ({
    tool: toolName,
    input: { path: `src/file${call}.ts` },
  }));
  const layers: LayerReport[] = [];
  const events: HostEvent[] = [];
  const context = createAiSdkContext({
    model: model as ai7.LanguageModel,
    limits: { contextWindow: WINDOW, maxOutputTokens: 4_000 },
    summarizer: createExtractiveSummarizer(),
    ...(extra.hooks ? { hooks: extra.hooks, sessionId: "ai-sdk-loop" } : {}),
    onEvent: (event) => {
      if (event.type === "layer") layers.push(event);
      if (event.type === "unknown-shape" || event.type === "conversation-reset") events.push(event);
    },
  });
  let outputs = 0;
  const tools = {
    [toolName]: api.tool({
      description: "Reads a file",
      inputSchema: api.jsonSchema({ type: "object", properties: { path: { type: "string" } } }),
      execute: async () => syntheticToolOutput(++outputs, 600),
    } as never),
  };
  let history: ModelMessage[] = [];
  const users: string[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    const request = `Request ${turn}: read the next ${STEPS_PER_TURN} files and note every parse call (turn ${turn}).`;
    users.push(request);
    history = [...history, { role: "user", content: request }];
    const options = {
      model,
      system: "You are a careful code reader.",
      tools,
      messages: history,
      stopWhen: api.stepCountIs(STEPS_PER_TURN),
      prepareStep: context.prepareStep,
    } as never;
    let steps: ReadonlyArray<{ response: { messages: unknown[] } }>;
    if (mode === "generateText") {
      steps = ((await api.generateText(options)) as { steps: typeof steps }).steps;
    } else {
      const result = api.streamText(options) as unknown as {
        consumeStream(): Promise<void>;
        steps: Promise<typeof steps>;
      };
      await result.consumeStream();
      steps = await result.steps;
    }
    history = [...history, ...responseMessages(steps, major.name)];
  }
  return { context, calls, users, layers, events };
}

function checkLoop({ context, calls, users, layers, events }: LoopResult): void {
  expect(calls).toHaveLength(TURNS * STEPS_PER_TURN);
  // Every step's usage reached the manager on its assistant message (the last step's ends the loop unseen).
  const reported = context.messages.flatMap((message) => (message.usage ? [message.usage.inputTokens] : []));
  expect(reported.length).toBeGreaterThanOrEqual(calls.length - TURNS);
  let next = 0;
  for (const tokens of reported) {
    while (next < calls.length && calls[next]!.tokens !== tokens) next++;
    expect(next, `usage ${tokens} matches no call in order`).toBeLessThan(calls.length);
    next++;
  }
  expect(events).toEqual([]);
  // The conversation grew to about 180K tokens; every request stayed under the 32K window.
  expect(Math.max(...calls.map((call) => call.tokens))).toBeLessThan(WINDOW);
  expect(layers.length).toBeGreaterThan(0);
  for (const [index, call] of calls.entries()) {
    // Neighbours of one role (a tool message, then a user message) are merged by every provider: not a defect.
    const violations = findToolPairViolations(fromModelMessages(call.prompt)).filter(
      (violation) => violation.kind !== "consecutive_same_role",
    );
    expect(violations, `call ${index + 1}`).toEqual([]);
    // Every user message sent so far is in the request, verbatim or quoted by a summary.
    const text = JSON.stringify(call.prompt);
    const sent = users.slice(0, Math.floor(index / STEPS_PER_TURN) + 1);
    for (const user of sent) expect(text.includes(user), `call ${index + 1} lost "${user}"`).toBe(true);
  }
}

/** A 300-step loop takes a few seconds on an idle machine and several times that on a loaded one. */
const LOOP_TIMEOUT = 120_000;

describe.each(majors)("createAiSdkContext on the $name", (major) => {
  it.each(["generateText", "streamText"] as const)(
    "%s: a 300-step tool loop across a 32K window stays under the window and keeps every user message",
    async (mode) => {
      checkLoop(await runLoop(major, mode));
    },
    LOOP_TIMEOUT,
  );

  it(
    "fires a PreCompact plugin on the hook bus inside the AI SDK's loop",
    async () => {
      const hooks = createSessionHooks({ sessionId: "ai-sdk-loop" });
      const fired: PreCompactEvent[] = [];
      const compacted: PostCompactEvent[] = [];
      applyPlugins(hooks, [
        {
          name: "keep-the-requests",
          apply(bus) {
            bus.preCompact.tapPromise("keep-the-requests", async (result, event) => {
              fired.push(event);
              return { ...result, instructions: `${result.instructions}\nKeep every numbered request.` };
            });
            bus.postCompact.tapPromise("keep-the-requests", async (event) => {
              compacted.push(event);
            });
          },
        },
      ]);
      // Results of a tool the cheap layers may not clear: only a summary makes room.
      const loop = await runLoop(major, "generateText", { hooks, tool: "Task" });
      checkLoop(loop);
      expect(fired.length).toBeGreaterThan(0);
      expect(fired[0]).toMatchObject({ sessionId: "ai-sdk-loop", trigger: "auto" });
      expect(compacted.some((event) => event.layer === "summary")).toBe(true);
    },
    LOOP_TIMEOUT,
  );
});

describe("createAiSdkContext with shapes it does not know", () => {
  it("passes an unknown part through untouched, step after step, and reports it once", async () => {
    const events: HostEvent[] = [];
    const context = createAiSdkContext({
      model: "claude-sonnet-4-5",
      limits: { contextWindow: 32_000, maxOutputTokens: 4_000 },
      onEvent: (event) => {
        if (event.type === "unknown-shape") events.push(event);
      },
    });
    const mystery = { type: "mystery", payload: { kept: true } };
    let messages = [
      { role: "user", content: [{ type: "text", text: "hi" }, mystery] },
    ] as unknown as ModelMessage[];
    for (let step = 0; step < 3; step++) {
      const result = await context.prepareStep({ messages, steps: [] });
      messages = [
        ...(result.messages ?? messages),
        { role: "assistant", content: [{ type: "text", text: `answer ${step}` }, { ...mystery }] },
        { role: "user", content: `next ${step}` },
      ] as unknown as ModelMessage[];
      expect((messages[0]!.content as unknown[])[1]).toBe(mystery);
    }
    expect(events).toEqual([
      expect.objectContaining({ type: "unknown-shape", shape: "user part mystery" }),
      expect.objectContaining({ type: "unknown-shape", shape: "assistant part mystery" }),
    ]);
  });
});

/**
 * The same scripted run for any tool name: 81 steps of one call, each answered with ~600 tokens, at a 16K
 * window, through `generateText` and `prepareStep`. Returns the summaries the context made.
 */
/** Contexts of the runs, flushed before their folder is removed: their outputs are saved after each step. */
const running = new Set<{ flush(): Promise<void> }>();

async function scriptedRun(
  major: (typeof majors)[number],
  tool: { name: string; metadata?: Record<string, unknown> },
  options: Partial<Parameters<typeof createAiSdkContext>[0]> = {},
): Promise<number> {
  const api = major.api as unknown as LoopApi;
  const { model } = createScriptedModel(major.Mock as never, (_prompt, call) => ({
    tool: tool.name,
    input: { id: `rec-${call}` },
  }));
  let outputs = 0;
  const tools = {
    [tool.name]: api.tool({
      description: "Looks a record up",
      inputSchema: api.jsonSchema({ type: "object", properties: { id: { type: "string" } } }),
      ...(tool.metadata ? { metadata: tool.metadata } : {}),
      execute: async () => syntheticToolOutput(++outputs, 600),
    } as never),
  };
  const context = createAiSdkContext({
    model: "claude-sonnet-4-5",
    limits: { contextWindow: 16_000, maxOutputTokens: 4_000 },
    tools: tools as ai7.ToolSet,
    ...options,
  });
  running.add(context);
  await api.generateText({
    model,
    tools,
    messages: [{ role: "user", content: "Request 0: check eighty records." }],
    stopWhen: api.stepCountIs(81),
    prepareStep: context.prepareStep,
  } as never);
  return context.status().compactions;
}

describe.each(majors)("tool results of any tool on the $name", (major) => {
  it(
    "take as many summaries with a custom tool name as with read, when its definition says it is reproducible",
    async () => {
      const read = await scriptedRun(major, { name: "read" });
      const declared = await scriptedRun(major, {
        name: "get_record",
        metadata: { resultRetention: "reproducible" },
      });
      expect(declared).toBe(read);
      // Saying nothing, without a folder to save its results in: they are kept, and summaries make the room.
      expect(await scriptedRun(major, { name: "get_record" })).toBeGreaterThan(read);
    },
    LOOP_TIMEOUT,
  );
});

describe("tool results of any tool", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "unforget-ai-sdk-"));
  });
  afterEach(async () => {
    for (const context of running) await context.flush();
    running.clear();
    await rm(dir, { recursive: true, force: true });
  });

  it("cut a large new result in the middle without a folder, and save it whole with one", async () => {
    const big = `${"line of the build log\n".repeat(1_000)}FAIL at the very end`;
    const messages: ModelMessage[] = [
      { role: "user", content: "Build it." },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "bash", input: {} }] },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c1", toolName: "bash", output: { type: "text", value: big } },
        ],
      },
    ];
    const limits = { contextWindow: 16_000, maxOutputTokens: 4_000 };
    const sent = async (extra: { sessionDir?: string }) => {
      const context = createAiSdkContext({ model: "claude-sonnet-4-5", limits, ...extra });
      return JSON.stringify((await context.prepareStep({ messages, steps: [] })).messages);
    };
    const cut = await sent({});
    expect(cut).toContain("cut from the middle");
    const saved = await sent({ sessionDir: dir });
    expect(saved).toContain("<persisted-output");
    expect(await readFile(join(dir, "tool-results", "c1"), "utf8")).toBe(big);
  });

  it(
    "take as many summaries when the tool is named in resultRetention or compactableTools, or its results can be saved",
    async () => {
      const major = majors[0];
      const read = await scriptedRun(major, { name: "read" });
      const tool = { name: "get_record" };
      expect(await scriptedRun(major, tool, { resultRetention: { get_record: "reproducible" } })).toBe(read);
      const listed = ["get_record"];
      expect(
        await scriptedRun(major, tool, {
          config: { microcompact: { compactableTools: listed }, collapse: { compactableTools: listed } },
        }),
      ).toBe(read);
      expect(await scriptedRun(major, tool, { sessionDir: dir })).toBe(read);
      for (const context of running) await context.flush();
      // Flushed, every output is saved whole: no write is left half done.
      const saved = await readdir(join(dir, "tool-results"));
      expect(saved.length).toBeGreaterThan(0);
      expect(saved.filter((name) => name.endsWith(".tmp"))).toEqual([]);
    },
    LOOP_TIMEOUT,
  );
});
