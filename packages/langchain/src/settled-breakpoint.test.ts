import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { createExtractiveSummarizer } from "@unforget/compact";
import { syntheticToolOutput } from "@unforget/testing/arbitraries";
import { createAgent, tool } from "langchain";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createScriptedChatModel,
  messagesTokens,
  type ScriptedCall,
} from "./__fixtures__/scripted-chat-model.ts";
import { type ContextMiddlewareOptions, createContextMiddleware } from "./context-middleware.ts";

/** Middlewares of the runs, flushed before their folder is removed: their outputs are saved after each step. */
const running = new Set<{ flush(): Promise<void> }>();

/**
 * The same scripted agent run for any tool name, through `createAgent` and the middleware: 81 calls of one
 * tool, each answered with ~600 tokens, at a 16K window. Returns the middleware and the calls the model got.
 */
async function scriptedRun(
  toolName: string,
  options: Partial<ContextMiddlewareOptions> & { metadata?: Record<string, unknown> } = {},
  start: BaseMessage[] = [new HumanMessage("Request 0: check eighty records.")],
): Promise<{ middleware: ReturnType<typeof createContextMiddleware>; calls: ScriptedCall[] }> {
  const { metadata, ...rest } = options;
  const { model, calls } = createScriptedChatModel((_messages, call) =>
    call > 80 ? { text: "Done." } : { tool: toolName, args: { id: `rec-${call}` } },
  );
  const middleware = createContextMiddleware({
    model: "claude-sonnet-4-5",
    limits: { contextWindow: 16_000, maxOutputTokens: 4_000 },
    summarizer: createExtractiveSummarizer(),
    ...rest,
  });
  let outputs = 0;
  const lookup = tool(async () => syntheticToolOutput(++outputs, 600), {
    name: toolName,
    description: "Looks a record up",
    schema: z.object({ id: z.string() }),
    ...(metadata ? { metadata } : {}),
  });
  running.add(middleware);
  const agent = createAgent({ model, tools: [lookup], middleware: [middleware] });
  await agent.invoke({ messages: start }, { recursionLimit: 500 });
  return { middleware, calls };
}

const summaries = async (...args: Parameters<typeof scriptedRun>) =>
  (await scriptedRun(...args)).middleware.status().compactions;

/** Indexes of the messages of a call that carry a `cache_control` marker (nested ones in tool messages too). */
function breakpoints(call: ScriptedCall): number[] {
  return call.messages.flatMap((message, index) => {
    const found = JSON.stringify(message.content).match(/"cache_control"/g)?.length ?? 0;
    return Array.from({ length: found }, () => index);
  });
}

describe("tool results of any tool, in createAgent", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "unforget-langchain-"));
  });
  afterEach(async () => {
    for (const middleware of running) await middleware.flush();
    running.clear();
    await rm(dir, { recursive: true, force: true });
  });

  it("take as many summaries with a custom tool name as with read, whichever way it is said", async () => {
    const read = await summaries("read");
    // The tool's own metadata, a table, or a folder to save its results in.
    expect(await summaries("get_record", { metadata: { resultRetention: "reproducible" } })).toBe(read);
    expect(await summaries("get_record", { resultRetention: { get_record: "reproducible" } })).toBe(read);
    expect(await summaries("get_record", { sessionDir: dir })).toBe(read);
    expect((await readdir(join(dir, "tool-results"))).length).toBeGreaterThan(0);
    // Said nothing, and no folder: its results are kept, and summaries make the room.
    expect(await summaries("get_record")).toBeGreaterThan(read);
  }, 120_000);
});

describe("the settled prefix's breakpoint, in createAgent", () => {
  it("goes on a message before the last, for a Claude model, and is left out otherwise", async () => {
    const { calls } = await scriptedRun("read");
    expect(calls.filter((call) => breakpoints(call).length > 0).length).toBeGreaterThan(calls.length / 2);
    for (const call of calls) {
      expect(breakpoints(call).length).toBeLessThanOrEqual(1);
      for (const index of breakpoints(call)) expect(index).toBeLessThan(call.messages.length - 1);
    }
    // What is sent is still a valid request of the same size.
    expect(Math.max(...calls.map((call) => messagesTokens(call.messages)))).toBeLessThan(16_000);
    const other = await scriptedRun("read", { model: "gpt-5" });
    for (const call of other.calls) expect(breakpoints(call)).toEqual([]);
    const off = await scriptedRun("read", { settledBreakpoint: false });
    for (const call of off.calls) expect(breakpoints(call)).toEqual([]);
  }, 120_000);

  it("never moves a breakpoint the user placed, and adds none past the request's four", async () => {
    const marked = (text: string) =>
      new HumanMessage({ content: [{ type: "text", text, cache_control: { type: "ephemeral" } }] });
    const two = await scriptedRun("read", {}, [
      marked("Rules: be brief."),
      marked("Request 0: check eighty records."),
    ]);
    for (const call of two.calls) expect(breakpoints(call)).toEqual([0, 1]);
    const one = await scriptedRun("read", {}, [marked("Request 0: check eighty records.")]);
    for (const call of one.calls) expect(breakpoints(call)[0]).toBe(0);
    expect(one.calls.some((call) => breakpoints(call).length === 2)).toBe(true);
  }, 120_000);
});
