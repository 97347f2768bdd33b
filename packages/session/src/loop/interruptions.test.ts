import { readTranscript } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import {
  anthropicSuite,
  echoTool,
  isSummaryRequest,
  modelCalls,
  summaryText,
  transcriptViolations,
  waitForAbortTool,
} from "../__fixtures__/session-kit.ts";
import { ContextOverflowError } from "../index.ts";
import { createAgentSession } from "./agent-session.ts";
import type { SessionEvent } from "./session-events.ts";

const suite = anthropicSuite("interrupt");

const MODEL = "claude-sonnet-4-6";

describe("aborts", () => {
  it("mid-stream: keeps the partial text, notes the interruption, and the next send continues from there", async () => {
    const session = await createAgentSession({
      provider: suite.provider,
      model: MODEL,
      tools: [echoTool],
      sessionsDir: suite.dir.path,
    });
    suite.fake.enqueue({
      kind: "reply",
      text: "Here is the first part of a long answer",
      hangAfterEvents: 4,
    });
    const events: SessionEvent[] = [];
    for await (const event of session.send("Write a long answer.")) {
      events.push(event);
      if (event.type === "text-delta") session.interrupt();
    }
    const end = events.at(-1);
    expect(end).toMatchObject({ type: "turn-end", stopReason: "aborted" });
    const partial = events
      .filter((event) => event.type === "text-delta")
      .map((event) => (event.type === "text-delta" ? event.text : ""))
      .join("");
    expect(partial.length).toBeGreaterThan(0);
    const { messages, violations } = await transcriptViolations(session.transcriptPath);
    expect(violations).toEqual([]);
    expect(messages.at(-2)).toMatchObject({ role: "assistant", content: [{ type: "text", text: partial }] });
    expect(messages.at(-1)).toMatchObject({
      role: "user",
      isMeta: true,
      content: [{ text: "[Request interrupted by user]" }],
    });
    expect(suite.fake.requests.at(-1)?.closedDuringHang).toBe(true);

    suite.fake.enqueue({ kind: "reply", text: "Continuing." });
    const next = await session.send("Go on.").result();
    expect(next.text).toBe("Continuing.");
    expect(JSON.stringify(modelCalls(suite.fake).at(-1)?.messages)).toContain(partial);
    await session.close();
  });

  it("mid-tool: the running call is stopped and answered as interrupted, the pairs stay whole", async () => {
    let started!: () => void;
    const toolStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const session = await createAgentSession({
      provider: suite.provider,
      model: MODEL,
      tools: [waitForAbortTool(() => started()), echoTool],
      sessionsDir: suite.dir.path,
      permissions: { mode: "bypassPermissions" },
    });
    suite.fake.enqueue({
      kind: "reply",
      toolCalls: [
        { id: "w1", name: "wait", input: {} },
        { id: "e1", name: "echo", input: { text: "never" } },
      ],
    });
    const turn = session.send("Wait, then echo.");
    void toolStarted.then(() => session.interrupt());
    const result = await turn.result();
    expect(result.stopReason).toBe("aborted");
    const results = result.messages.find((message) =>
      message.content.some((block) => block.type === "tool_result"),
    );
    const [waited, echoed] = results!.content;
    expect(waited).toMatchObject({ type: "tool_result", tool_use_id: "w1", is_error: true });
    expect(JSON.stringify(waited)).toContain("stopped by the signal");
    expect(echoed).toMatchObject({ type: "tool_result", tool_use_id: "e1", is_error: true });
    expect(JSON.stringify(echoed)).toContain("interrupted");
    const { messages, violations } = await transcriptViolations(session.transcriptPath);
    expect(violations).toEqual([]);
    expect(messages.at(-1)?.content).toEqual([
      { type: "text", text: "[Request interrupted by user for tool use]" },
    ]);
    suite.fake.enqueue({ kind: "reply", text: "Understood." });
    expect((await session.send("Skip it.").result()).text).toBe("Understood.");
    await session.close();
  });

  it("during a compaction: the summary call is cancelled and the turn ends as aborted, nothing lost", async () => {
    const session = await createAgentSession({
      provider: suite.provider,
      model: MODEL,
      sessionsDir: suite.dir.path,
      context: {
        limits: { contextWindow: 16_000, maxOutputTokens: 2_000 },
        config: { earlyMark: false, collapse: false, microcompact: false },
      },
    });
    let summaries = 0;
    suite.fake.setResponder((request) => {
      if (!isSummaryRequest(request.body)) return { kind: "reply", text: `Noted. ${"detail ".repeat(400)}` };
      summaries++;
      session.interrupt();
      return { kind: "hang" };
    });
    let result: Awaited<ReturnType<ReturnType<typeof session.send>["result"]>> | undefined;
    for (let index = 0; index < 20 && summaries === 0; index++) {
      result = await session.send(`Part ${index}. ${"context ".repeat(400)}`).result();
    }
    expect(summaries).toBe(1);
    expect(result?.stopReason).toBe("aborted");
    const { messages, violations } = await transcriptViolations(session.transcriptPath);
    expect(violations).toEqual([]);
    expect(messages.filter((message) => message.role === "user" && !message.isMeta)).toHaveLength(
      session.messages.filter((message) => message.role === "user" && !message.isMeta).length,
    );
    suite.fake.setResponder(undefined);
    suite.fake.enqueue(
      { kind: "reply", text: summaryText("Parts were noted.") },
      { kind: "reply", text: "Back." },
    );
    expect((await session.send("Go on.").result()).text).toBe("Back.");
    await session.close();
  });

  it("an aborted signal before the turn keeps the prompt and sends nothing", async () => {
    const session = await createAgentSession({
      provider: suite.provider,
      model: MODEL,
      sessionsDir: suite.dir.path,
    });
    const result = await session.send("Never mind.", { signal: AbortSignal.abort() }).result();
    expect(result.stopReason).toBe("aborted");
    expect(modelCalls(suite.fake)).toEqual([]);
    expect(session.messages.map((message) => message.role)).toEqual(["user"]);
    await session.close();
  });
});

/** A session with six exchanges, so that a reactive compaction has history to summarise. */
async function sessionWithHistory() {
  const session = await createAgentSession({
    provider: suite.provider,
    model: MODEL,
    sessionsDir: suite.dir.path,
  });
  for (let index = 0; index < 6; index++) {
    suite.fake.enqueue({ kind: "reply", text: `Answer ${index}: ${"detail ".repeat(300)}` });
    await session.send(`Question ${index}: ${"context ".repeat(300)}`).result();
  }
  return session;
}

describe("prompt too long", () => {
  it("recovers with a reactive compaction and retries once", async () => {
    const session = await sessionWithHistory();
    suite.fake.enqueue(
      { kind: "error", error: "prompt_too_long", actualTokens: 210_000, limitTokens: 200_000 },
      { kind: "reply", text: summaryText("The user asked six questions.") },
      { kind: "reply", text: "Recovered." },
    );
    const events: SessionEvent[] = [];
    for await (const event of session.send("Question 7.")) events.push(event);
    expect(events.find((event) => event.type === "retry")).toMatchObject({ reason: "prompt-too-long" });
    expect(events.at(-1)).toMatchObject({ type: "turn-end", stopReason: "end_turn", text: "Recovered." });
    const { entries } = await readTranscript(session.transcriptPath, { quarantine: false });
    expect(entries.some((entry) => entry.type === "compact_boundary" && entry.trigger === "reactive")).toBe(
      true,
    );
    const sent = JSON.stringify(modelCalls(suite.fake).at(-1));
    expect(sent).toContain("The user asked six questions.");
    expect(sent).toContain("Question 7.");
    expect((await transcriptViolations(session.transcriptPath)).violations).toEqual([]);
    await session.close();
  });

  it("a second refusal is a ContextOverflowError that says what was tried, with nothing lost", async () => {
    const session = await sessionWithHistory();
    suite.fake.enqueue(
      { kind: "error", error: "prompt_too_long", actualTokens: 210_000, limitTokens: 200_000 },
      { kind: "reply", text: summaryText("Six questions.") },
      { kind: "error", error: "prompt_too_long", actualTokens: 205_000, limitTokens: 200_000 },
    );
    const failure = await session
      .send("Question 7.")
      .result()
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ContextOverflowError);
    expect((failure as Error).message).toContain("even after reactive compaction");
    expect((failure as Error).message).toContain("(205000 tokens > 200000)");
    const { messages, violations } = await transcriptViolations(session.transcriptPath);
    expect(violations).toEqual([]);
    expect(messages.at(-1)).toMatchObject({ role: "user", content: [{ text: "Question 7." }] });
    await session.close();
  });
});

describe("prompt too long with nothing to compact", () => {
  it("rejects with the ContextOverflowError the session exports (compact's class is the same one)", async () => {
    const session = await createAgentSession({
      provider: suite.provider,
      model: MODEL,
      sessionsDir: suite.dir.path,
    });
    suite.fake.enqueue({
      kind: "error",
      error: "prompt_too_long",
      actualTokens: 210_000,
      limitTokens: 200_000,
    });
    const failure = await session
      .send("A first question.")
      .result()
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ContextOverflowError);
    expect((failure as ContextOverflowError).code).toBe("context_overflow");
    expect((failure as Error).message).toContain("the transcript is intact");
    await session.close();
  });
});

describe("max_tokens inside a tool use", () => {
  it("never runs the cut-off call, tells the model, and goes on", async () => {
    let ran = 0;
    const counted = { ...echoTool, execute: async () => ({ content: `ran ${++ran}`, isError: false }) };
    const session = await createAgentSession({
      provider: suite.provider,
      model: MODEL,
      tools: [counted],
      sessionsDir: suite.dir.path,
    });
    suite.fake.enqueue(
      {
        kind: "reply",
        text: "Writing.",
        toolCalls: [{ id: "cut", name: "echo", input: { text: "partial" } }],
        stopReason: "max_tokens",
      },
      { kind: "reply", text: "I will write less." },
    );
    const events: SessionEvent[] = [];
    for await (const event of session.send("Write it all.")) events.push(event);
    expect(ran).toBe(0);
    expect(events.find((event) => event.type === "tool-end")).toMatchObject({ status: "truncated" });
    expect(events.at(-1)).toMatchObject({ stopReason: "end_turn", text: "I will write less." });
    expect(JSON.stringify(modelCalls(suite.fake).at(-1))).toContain("hit the output token limit");
    await session.close();
  });
});
