import { InvalidMessageError, UnforgetError } from "@unforget/core";
import { describe, expect, it } from "vitest";
import {
  anthropicSuite,
  collect,
  echoTool,
  modelCalls,
  recordingTool,
  transcriptViolations,
} from "../__fixtures__/session-kit.ts";
import { listSessions } from "../transcript/list-sessions.ts";
import { createAgentSession } from "./agent-session.ts";
import { SessionBusyError } from "./session-errors.ts";

const suite = anthropicSuite("loop");

describe("the loop", () => {
  it("calls the model, runs its tools, sends their results back and stops at end_turn", async () => {
    const session = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      system: "You are terse.",
      tools: [echoTool],
      sessionsDir: suite.dir.path,
    });
    suite.fake.enqueue(
      {
        kind: "reply",
        text: "Let me echo.",
        toolCalls: [{ id: "toolu_1", name: "echo", input: { text: "hi" } }],
      },
      { kind: "reply", text: "It said hi." },
    );
    const events = await collect(session.send("Echo hi."));
    const types = events.map((event) => event.type);
    expect(types[0]).toBe("turn-start");
    expect(types.at(-1)).toBe("turn-end");
    expect(types.filter((type) => type === "model-request")).toHaveLength(2);
    expect(events.find((event) => event.type === "tool-end")).toMatchObject({
      name: "echo",
      status: "completed",
      output: { content: "echo: hi", isError: false },
    });
    expect(events.at(-1)).toMatchObject({
      type: "turn-end",
      stopReason: "end_turn",
      turns: 2,
      text: "It said hi.",
    });

    const [first = {}, second = {}] = modelCalls(suite.fake);
    expect(first.system).toEqual([
      { type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } },
    ]);
    expect((first.tools as { name: string }[]).map((tool) => tool.name)).toEqual(["echo"]);
    const lastSent = (second.messages as { role: string; content: unknown[] }[]).at(-1);
    expect(lastSent?.role).toBe("user");
    expect(lastSent?.content[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: "toolu_1",
      content: "echo: hi",
    });

    const { messages, violations } = await transcriptViolations(session.transcriptPath);
    expect(violations).toEqual([]);
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
    await session.close();
  });

  it("answers an invented tool, a bad input, a throwing tool and a hanging tool with error results, and goes on", async () => {
    const throwing = {
      ...echoTool,
      name: "explode",
      async execute(): Promise<never> {
        throw new Error("the disk is on fire");
      },
    };
    const hanging = {
      ...echoTool,
      name: "hang",
      timeoutMs: 50,
      execute: () => new Promise<never>(() => {}),
    };
    const session = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      tools: [echoTool, throwing, hanging],
      sessionsDir: suite.dir.path,
    });
    suite.fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          { id: "t1", name: "search_web", input: { q: "x" } },
          { id: "t2", name: "echo", input: { text: 42 } },
          { id: "t3", name: "explode", input: { text: "a" } },
          { id: "t4", name: "hang", input: { text: "a" } },
          { id: "t5", name: "echo", input: { text: "fine" } },
        ],
      },
      { kind: "reply", text: "Done." },
    );
    const result = await session.send("Try everything.").result();
    expect(result.stopReason).toBe("end_turn");
    const results = result.messages[2]!.content;
    expect(results.map((block) => (block.type === "tool_result" ? block.tool_use_id : ""))).toEqual([
      "t1",
      "t2",
      "t3",
      "t4",
      "t5",
    ]);
    const text = results.map((block) => (block.type === "tool_result" ? String(block.content) : ""));
    expect(text[0]).toBe(
      "There is no tool named search_web. The tools you can call are: echo, explode, hang.",
    );
    expect(text[1]).toContain("/text must be string");
    expect(text[2]).toBe("explode failed: the disk is on fire");
    expect(text[3]).toContain("did not finish within 50 ms");
    expect(text[4]).toBe("echo: fine");
    expect(results.map((block) => block.type === "tool_result" && block.is_error === true)).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
    await session.close();
  });

  it("runs concurrency-safe calls together and the others one by one, keeping the results in order", async () => {
    const log: string[] = [];
    let open!: () => void;
    // Both reads must have started before either may finish: run one at a time, this would never resolve.
    let started = 0;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const read = recordingTool("read", { concurrencySafe: true, log, gate });
    const countingRead = {
      ...read,
      async execute(input: Record<string, unknown>, context: Parameters<typeof read.execute>[1]) {
        started++;
        if (started === 2) open();
        return read.execute(input, context);
      },
    };
    const write = recordingTool("write", { concurrencySafe: false, log });
    const session = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      tools: [countingRead, write],
      sessionsDir: suite.dir.path,
      toolTimeoutMs: 20_000,
      permissions: { mode: "bypassPermissions" },
    });
    suite.fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          { id: "r1", name: "read", input: { id: "r1" } },
          { id: "r2", name: "read", input: { id: "r2" } },
          { id: "w1", name: "write", input: { id: "w1" } },
          { id: "w2", name: "write", input: { id: "w2" } },
        ],
      },
      { kind: "reply", text: "Done." },
    );
    const result = await session.send("Go.").result();
    expect(log.slice(0, 2)).toEqual(["start r1", "start r2"]);
    expect(log.slice(4)).toEqual(["start w1", "end w1", "start w2", "end w2"]);
    const results = result.messages[2]!.content;
    expect(results.map((block) => (block.type === "tool_result" ? block.content : ""))).toEqual([
      "done r1",
      "done r2",
      "done w1",
      "done w2",
    ]);
    await session.close();
  });

  it("refuses an empty prompt, and a second send or a compaction while a turn runs; stops at maxTurns with a valid conversation", async () => {
    const session = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      tools: [echoTool],
      sessionsDir: suite.dir.path,
      maxTurns: 2,
    });
    const call = (id: string) => ({
      kind: "reply" as const,
      toolCalls: [{ id, name: "echo", input: { text: id } }],
    });
    suite.fake.enqueue(call("a"), call("b"), call("c"));
    expect(() => session.send("  ")).toThrow(InvalidMessageError);
    const turn = session.send("Loop.");
    expect(() => session.send("Again.")).toThrow(SessionBusyError);
    await expect(session.compact()).rejects.toBeInstanceOf(SessionBusyError);
    const result = await turn.result();
    expect(result.stopReason).toBe("max_turns");
    expect(result.turns).toBe(2);
    expect((await transcriptViolations(session.transcriptPath)).violations).toEqual([]);
    suite.fake.enqueue({ kind: "reply", text: "Continuing." });
    expect((await session.send("Go on.").result()).text).toBe("Continuing.");
    await session.close();
  });

  it("status() gives the gauge and the breakdown; setModel() changes the model and keeps the context", async () => {
    const session = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      system: "You are terse.",
      tools: [echoTool],
      sessionsDir: suite.dir.path,
    });
    const idle = session.status();
    expect(idle).toMatchObject({ sessionId: session.sessionId, model: "claude-sonnet-4-6", busy: false });
    expect(idle.breakdown.system).toBeGreaterThan(0);
    suite.fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          {
            id: "t",
            name: "echo",
            input: { text: Array.from({ length: 80 }, (_, index) => `finding${index}`).join(" ") },
          },
        ],
      },
      { kind: "reply", text: "Done." },
    );
    await session.send("Echo a lot.").result();
    const status = session.status();
    expect(status.tokens).toBeGreaterThan(0);
    expect(status.threshold).toBeGreaterThan(status.tokens);
    const { breakdown } = status;
    expect(breakdown.tools).toBeGreaterThan(0);
    expect(breakdown.toolResults).toBeGreaterThan(80);
    expect(breakdown.messages).toBeGreaterThan(0);
    const { total, ...parts } = breakdown;
    expect(total).toBe(Object.values(parts).reduce((sum, tokens) => sum + tokens, 0));

    session.setModel("claude-opus-4-1");
    suite.fake.enqueue({ kind: "reply", text: "Still here." });
    await session.send("Who are you?").result();
    const [, before = {}, after = {}] = modelCalls(suite.fake);
    expect(after.model).toBe("claude-opus-4-1");
    // The same conversation, but for the moving cache breakpoint.
    const withoutBreakpoints = (messages: unknown) =>
      JSON.stringify(messages, (key, value) => (key === "cache_control" ? undefined : value));
    const previous = withoutBreakpoints((before.messages as unknown[]).slice(0, 3));
    expect(withoutBreakpoints((after.messages as unknown[]).slice(0, 3))).toBe(previous);
    await session.close();
  });

  it("listSessions() lists the sessions of a folder, newest first, with their first prompt", async () => {
    const ids: string[] = [];
    for (const prompt of ["The first session.", "The second session."]) {
      const session = await createAgentSession({
        provider: suite.provider,
        model: "claude-sonnet-4-6",
        sessionsDir: suite.dir.path,
      });
      suite.fake.enqueue({ kind: "reply", text: "Noted." });
      await session.send(prompt).result();
      await session.close();
      ids.push(session.sessionId);
    }
    const listed = await listSessions(suite.dir.path);
    expect(listed.map((summary) => summary.firstPrompt).sort()).toEqual([
      "The first session.",
      "The second session.",
    ]);
    expect(listed.map((summary) => summary.sessionId).sort()).toEqual(ids.sort());
    expect(await listSessions(`${suite.dir.path}/missing`)).toEqual([]);
  });

  it("a malformed provider reply is a typed error with a valid transcript; an empty reply just ends the turn", async () => {
    const session = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      sessionsDir: suite.dir.path,
    });
    suite.fake.enqueue({ kind: "error", error: "malformed" });
    const failure = await session
      .send("Hello?")
      .result()
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UnforgetError);
    expect((failure as UnforgetError).code).toBe("provider_request");
    expect(session.status().busy).toBe(false);
    expect((await transcriptViolations(session.transcriptPath)).violations).toEqual([]);

    suite.fake.enqueue({ kind: "reply" });
    const empty = await session.send("Anything?").result();
    expect(empty).toMatchObject({ stopReason: "end_turn", text: "", turns: 1 });
    expect(session.messages.at(-1)?.role).toBe("user");

    suite.fake.enqueue({ kind: "reply", text: "Now I can answer." });
    expect((await session.send("Please.").result()).text).toBe("Now I can answer.");
    expect((await transcriptViolations(session.transcriptPath)).violations).toEqual([]);
    await session.close();
  });

  it("fails closed when the permission check throws, and goes on when the tracer throws", async () => {
    let ran = 0;
    const counted = { ...echoTool, execute: async () => ({ content: `ran ${++ran}`, isError: false }) };
    const throwing = () => {
      throw new Error("tracing backend down");
    };
    const session = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      tools: [counted],
      sessionsDir: suite.dir.path,
      permissions: async () => {
        throw new Error("policy server down");
      },
      tracer: { startSpan: () => ({ end: throwing }) },
    });
    suite.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "t", name: "echo", input: { text: "x" } }] },
      { kind: "reply", text: "Could not." },
    );
    const result = await session.send("Echo.").result();
    expect(ran).toBe(0);
    expect(result.text).toBe("Could not.");
    expect(JSON.stringify(modelCalls(suite.fake).at(-1))).toContain(
      "The permission check failed (policy server down), so the call was not run.",
    );
    await session.close();

    const failing = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      tools: [counted],
      sessionsDir: suite.dir.path,
      permissions: { mode: "bypassPermissions" },
      tracer: { startSpan: throwing },
    });
    suite.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "u", name: "echo", input: { text: "y" } }] },
      { kind: "reply", text: "Done." },
    );
    expect((await failing.send("Echo.").result()).text).toBe("Done.");
    expect(ran).toBe(1);
    await failing.close();
  });
});
