import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { REMOVE_ALL_MESSAGES as LANGGRAPH_REMOVE_ALL } from "@langchain/langgraph";
import { createExtractiveSummarizer, type HostEvent, type LayerReport } from "@unforget/compact";
import { findToolPairViolations } from "@unforget/core";
import {
  applyPlugins,
  createSessionHooks,
  type PostCompactEvent,
  type PreCompactEvent,
} from "@unforget/hooks";
import { syntheticToolOutput } from "@unforget/testing/arbitraries";
import { createAgent, tool } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createScriptedChatModel,
  messagesTokens,
  type ScriptedCall,
} from "./__fixtures__/scripted-chat-model.ts";
import { createContextMiddleware, REMOVE_ALL_MESSAGES } from "./context-middleware.ts";
import { createContextTrimmer } from "./context-trimmer.ts";
import { fromLangChainMessages } from "./decode-langchain-message.ts";

const WINDOW = 32_000;
const TURNS = 12;
const CALLS_PER_TURN = 25;

interface LoopResult {
  calls: ScriptedCall[];
  users: string[];
  layers: LayerReport[];
  events: HostEvent[];
  state: BaseMessage[];
  middleware: ReturnType<typeof createContextMiddleware>;
}

/**
 * Twelve user turns through `createAgent`, each 24 tool calls and a final answer (300 model calls), every tool
 * output about 600 tokens (170K in all), the context managed by the middleware.
 */
async function runAgent(
  options: { mode?: "state" | "request"; hooks?: ReturnType<typeof createSessionHooks>; tool?: string } = {},
): Promise<LoopResult> {
  const toolName = options.tool ?? "Read";
  const { model, calls } = createScriptedChatModel((_messages, call) =>
    call % CALLS_PER_TURN === 0
      ? { text: `Done with turn ${call / CALLS_PER_TURN}.` }
      : { tool: toolName, args: { path: `src/file${call}.ts` } },
  );
  const layers: LayerReport[] = [];
  const events: HostEvent[] = [];
  const middleware = createContextMiddleware({
    model: "claude-sonnet-4-5",
    limits: { contextWindow: WINDOW, maxOutputTokens: 4_000 },
    summarizer: createExtractiveSummarizer(),
    ...(options.mode ? { mode: options.mode } : {}),
    ...(options.hooks ? { hooks: options.hooks, sessionId: "langchain-agent" } : {}),
    onEvent: (event) => {
      if (event.type === "layer") layers.push(event);
      if (event.type === "unknown-shape" || event.type === "conversation-reset") events.push(event);
    },
  });
  let outputs = 0;
  const readTool = tool(async () => syntheticToolOutput(++outputs, 600), {
    name: toolName,
    description: "Reads a file",
    schema: z.object({ path: z.string() }),
  });
  const agent = createAgent({
    model,
    tools: [readTool],
    middleware: [middleware],
    systemPrompt: "You read code carefully.",
  });
  let state: BaseMessage[] = [];
  const users: string[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    const request = `Request ${turn}: read the next files and note every parse call (turn ${turn}).`;
    users.push(request);
    const result = await agent.invoke(
      { messages: [...state, new HumanMessage(request)] },
      { recursionLimit: 500 },
    );
    state = result.messages;
  }
  return { calls, users, layers, events, state, middleware };
}

function checkLoop({ calls, users, layers, events }: LoopResult): void {
  expect(calls).toHaveLength(TURNS * CALLS_PER_TURN);
  expect(events).toEqual([]);
  expect(layers.length).toBeGreaterThan(0);
  // The conversation grew to about 170K tokens; every call stayed under the 32K window.
  expect(Math.max(...calls.map((call) => call.tokens))).toBeLessThan(WINDOW);
  for (const [index, call] of calls.entries()) {
    // A tool message then a user message are neighbours of one role for Unforget; every provider merges them.
    const violations = findToolPairViolations(fromLangChainMessages(call.messages.slice(1))).filter(
      (violation) => violation.kind !== "consecutive_same_role",
    );
    expect(violations, `call ${index + 1}`).toEqual([]);
    expect(call.messages[0]?.getType(), "the system prompt stays first").toBe("system");
    const text = JSON.stringify(call.messages.map((message) => message.content));
    const sent = users.slice(0, Math.floor(index / CALLS_PER_TURN) + 1);
    for (const user of sent) expect(text.includes(user), `call ${index + 1} lost "${user}"`).toBe(true);
  }
}

describe("createContextMiddleware in createAgent", () => {
  it("is LangGraph's own remove-all id", () => {
    expect(REMOVE_ALL_MESSAGES).toBe(LANGGRAPH_REMOVE_ALL);
  });

  // A 300-call loop is 900 LangGraph node runs: about 10 s on an idle machine, several times that on a loaded one.
  const LOOP_TIMEOUT = 180_000;

  it(
    "keeps a 300-call agent loop under a 32K window and every user message, with small state, firing PreCompact plugins (state mode)",
    async () => {
      const hooks = createSessionHooks({ sessionId: "langchain-agent" });
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
      // Results of a tool the cheap layers may not clear: summaries must make room, inside the agent's loop.
      const loop = await runAgent({ hooks, tool: "Task" });
      checkLoop(loop);
      expect(fired.length).toBeGreaterThan(0);
      expect(fired[0]).toMatchObject({ sessionId: "langchain-agent", trigger: "auto" });
      expect(compacted.some((event) => event.layer === "summary")).toBe(true);
      // The agent's state holds the projection, not the 170K-token history; the manager holds all of it.
      expect(messagesTokens(loop.state)).toBeLessThan(WINDOW);
      expect(loop.middleware.messages.length).toBeGreaterThan(loop.state.length);
      // Each AIMessage's usage reached the manager, where the count anchors (the last answer ends the loop unseen).
      expect(loop.middleware.messages.filter((message) => message.usage).length).toBe(
        TURNS * CALLS_PER_TURN - 1,
      );
    },
    LOOP_TIMEOUT,
  );

  it(
    "keeps the loop under the window, the cheap layers doing the work, and the whole history in state (request mode)",
    async () => {
      const loop = await runAgent({ mode: "request" });
      checkLoop(loop);
      expect(loop.layers.some((layer) => layer.layer === "microcompact" || layer.layer === "collapse")).toBe(
        true,
      );
      expect(messagesTokens(loop.state)).toBeGreaterThan(150_000);
    },
    LOOP_TIMEOUT,
  );

  it("compacts and retries once when the model refuses the messages as too long", async () => {
    // The model takes 8K (the window was declared larger): the working-set policy keeps this loop under 12K on
    // its own, so only a limit below that makes the model refuse.
    let refusals = 0;
    const { model, calls } = createScriptedChatModel((messages, call) => {
      const tokens = messagesTokens(messages);
      if (tokens > 8_000) {
        refusals++;
        return new Error(`prompt is too long: ${tokens} tokens > 8000 maximum`);
      }
      return call >= 60 ? { text: "Done." } : { tool: "Read", args: { path: `f${call}` } };
    });
    const layers: LayerReport[] = [];
    const middleware = createContextMiddleware({
      model: "claude-sonnet-4-5",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      summarizer: createExtractiveSummarizer(),
      onEvent: (event) => {
        if (event.type === "layer") layers.push(event);
      },
    });
    let outputs = 0;
    const readTool = tool(async () => syntheticToolOutput(++outputs, 600), {
      name: "Read",
      description: "Reads a file",
      schema: z.object({ path: z.string() }),
    });
    const agent = createAgent({ model, tools: [readTool], middleware: [middleware] });
    const result = await agent.invoke(
      { messages: [new HumanMessage("Request 0: read sixty files.")] },
      { recursionLimit: 500 },
    );
    expect(result.messages[result.messages.length - 1]?.content).toBe("Done.");
    expect(refusals).toBeGreaterThan(0);
    expect(layers.filter((layer) => layer.trigger === "reactive").length).toBeGreaterThanOrEqual(refusals);
    for (const [index, call] of calls.entries()) {
      if (call.tokens > 8_000) expect(calls[index + 1]!.tokens).toBeLessThanOrEqual(8_000);
      else expect(JSON.stringify(call.messages.map((message) => message.content))).toContain("Request 0");
    }
  });
});

describe("createContextTrimmer (LCEL)", () => {
  it("keeps a chain's conversation under the window: trimmer.pipe(model), 150 turns", async () => {
    const { model, calls } = createScriptedChatModel((_messages, call) => ({
      text: `Answer ${call}: ${syntheticToolOutput(call, 300)}`,
    }));
    const trimmer = createContextTrimmer({
      model: "claude-sonnet-4-5",
      limits: { contextWindow: WINDOW, maxOutputTokens: 4_000 },
      summarizer: createExtractiveSummarizer(),
    });
    const chain = trimmer.pipe(model);
    const history: BaseMessage[] = [];
    for (let turn = 0; turn < 150; turn++) {
      history.push(new HumanMessage(`Question ${turn}: what does part ${turn} do?`));
      history.push(await chain.invoke(history));
    }
    expect(calls).toHaveLength(150);
    expect(Math.max(...calls.map((call) => call.tokens))).toBeLessThan(WINDOW);
    const last = JSON.stringify(calls[calls.length - 1]!.messages.map((message) => message.content));
    // Every question is in the last request verbatim, but the oldest, which a summary folded into one range of
    // history ids once even their shortest form no longer fitted the carried block's budget (decision 0044).
    const folded = Number(/<user-messages-folded count=\\"(\d+)\\"/.exec(last)?.[1] ?? 0);
    const missing = Array.from({ length: 150 }, (_, turn) => turn).filter(
      (turn) => !last.includes(`Question ${turn}: what does part ${turn} do?`),
    );
    expect(folded).toBeGreaterThan(0);
    expect(missing.filter((turn) => turn >= folded)).toEqual([]);
    expect(trimmer.status().compactions + (trimmer.lastResult?.actions.length ?? 0)).toBeGreaterThanOrEqual(
      0,
    );
  });
});

describe("createContextMiddleware: the window a refusal states", () => {
  it("is learned from the refusal (the middleware compacts to it and retries)", async () => {
    let refused = 0;
    const { model, calls } = createScriptedChatModel((messages, call) => {
      const tokens = messagesTokens(messages);
      if (tokens > 3_000) {
        refused++;
        return new Error(`prompt is too long: ${tokens * 8} tokens > 20000 maximum`);
      }
      return call >= 40 ? { text: "Done." } : { tool: "Read", args: { path: `f${call}` } };
    });
    const middleware = createContextMiddleware({
      model: "claude-sonnet-4-5",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      summarizer: createExtractiveSummarizer(),
    });
    let outputs = 0;
    const readTool = tool(async () => syntheticToolOutput(++outputs, 600), {
      name: "Read",
      description: "Reads a file",
      schema: z.object({ path: z.string() }),
    });
    const agent = createAgent({ model, tools: [readTool], middleware: [middleware] });
    await agent.invoke(
      { messages: [new HumanMessage("Request 0: read forty files.")] },
      { recursionLimit: 500 },
    );
    expect(refused).toBeGreaterThan(0);
    expect(middleware.status().contextWindow).toBe(20_000);
    expect(calls.length).toBeGreaterThan(40);
  });
});
