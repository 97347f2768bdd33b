import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type HookPlugin,
  type PostSamplingEvent,
  type PostToolUseEvent,
  PROMPT_BLOCK_ATTACHMENT_KIND,
  type SessionEndEvent,
  type SessionStartEvent,
} from "@unforget/hooks";
import { readTranscript } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import {
  anthropicSuite,
  collect,
  echoTool,
  modelCalls,
  summaryText,
  transcriptViolations,
} from "../__fixtures__/session-kit.ts";
import { createAgentSession } from "./agent-session.ts";

const suite = anthropicSuite("hooks");

const MODEL = "claude-sonnet-4-6";

function lastRequestText(): string {
  return JSON.stringify(modelCalls(suite.fake).at(-1)?.messages);
}

describe("hooks, each at its moment", () => {
  it("SessionStart adds its context at startup, UserPromptSubmit per prompt, PostSampling after each response, SessionEnd on close", async () => {
    const starts: SessionStartEvent[] = [];
    const sampled: PostSamplingEvent[] = [];
    const ended: SessionEndEvent[] = [];
    const plugin: HookPlugin = {
      name: "observer",
      apply(hooks) {
        hooks.sessionStart.tapPromise("observer", async (attachments, event) => {
          starts.push(event);
          return [...attachments, { kind: "hook-context", content: "The project uses pnpm." }];
        });
        hooks.userPromptSubmit.tapPromise("observer", async (attachments, event) => [
          ...attachments,
          { kind: "hook-context", content: `Prompt length ${event.prompt.length}.` },
        ]);
        hooks.postSampling.tapPromise("observer", async (event) => {
          sampled.push(event);
        });
        hooks.sessionEnd.tapPromise("observer", async (event) => {
          ended.push(event);
        });
      },
    };
    const session = await createAgentSession({
      provider: suite.provider,
      model: MODEL,
      tools: [echoTool],
      sessionsDir: suite.dir.path,
      hooks: { plugins: [plugin] },
    });
    suite.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "t1", name: "echo", input: { text: "a" } }] },
      { kind: "reply", text: "First." },
      { kind: "reply", text: "Second." },
    );
    await session.send("Hello.").result();
    expect(lastRequestText()).toContain("The project uses pnpm.");
    expect(lastRequestText()).toContain("Prompt length 6.");
    await session.send("Again!").result();
    expect(starts.map((event) => event.source)).toEqual(["startup"]);
    expect(lastRequestText()).toContain("Prompt length 6.");
    expect(sampled.map((event) => event.toolCalls)).toEqual([1, 0, 0]);
    expect(sampled[0]?.contextTokens).toBeGreaterThan(0);
    expect(ended).toEqual([]);
    await session.close("prompt_input_exit");
    expect(ended).toEqual([
      { sessionId: session.sessionId, transcriptId: session.transcriptPath, reason: "prompt_input_exit" },
    ]);
  });

  it("UserPromptSubmit can block the prompt: nothing is sent and the prompt stays out of the context", async () => {
    const guard: HookPlugin = {
      name: "no-secrets",
      apply(hooks) {
        hooks.userPromptSubmit.tapPromise("no-secrets", async (attachments, event) =>
          event.prompt.includes("password")
            ? [
                ...attachments,
                {
                  kind: PROMPT_BLOCK_ATTACHMENT_KIND,
                  content: "Prompts may not hold passwords.",
                  source: "no-secrets",
                },
              ]
            : attachments,
        );
      },
    };
    const session = await createAgentSession({
      provider: suite.provider,
      model: MODEL,
      sessionsDir: suite.dir.path,
      hooks: { plugins: [guard] },
    });
    const events = await collect(session.send("my password is hunter2"));
    expect(events.find((event) => event.type === "prompt-blocked")).toMatchObject({
      reason: "Prompts may not hold passwords.",
      by: "no-secrets",
    });
    expect(events.at(-1)).toMatchObject({ type: "turn-end", stopReason: "blocked" });
    expect(modelCalls(suite.fake)).toEqual([]);
    expect(JSON.stringify(session.messages)).not.toContain("hunter2");
    await session.close();
  });

  it("PreToolUse denies with a reason the model reads, or rewrites the input; PostToolUse sees the result", async () => {
    const after: PostToolUseEvent[] = [];
    const policy: HookPlugin = {
      name: "policy",
      apply(hooks) {
        hooks.preToolUse.tapPromise("policy", async (event) => {
          if (event.input.text === "rm -rf /") return { behavior: "deny", reason: "Destructive text." };
          if (event.input.text === "lower") return { behavior: "rewrite", input: { text: "LOUD" } };
          return undefined;
        });
        hooks.postToolUse.tapPromise("policy", async (event) => {
          after.push(event);
        });
      },
    };
    let ran = 0;
    const counted = {
      ...echoTool,
      execute: async (input: Record<string, unknown>) => ({
        content: `ran ${++ran}: ${String(input.text)}`,
        isError: false,
      }),
    };
    const session = await createAgentSession({
      provider: suite.provider,
      model: MODEL,
      tools: [counted],
      sessionsDir: suite.dir.path,
      hooks: { plugins: [policy] },
    });
    suite.fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          { id: "d", name: "echo", input: { text: "rm -rf /" } },
          { id: "r", name: "echo", input: { text: "lower" } },
        ],
      },
      { kind: "reply", text: "Done." },
    );
    const events = await collect(session.send("Try both."));
    expect(ran).toBe(1);
    expect(events.find((event) => event.type === "permission-decision")).toMatchObject({
      toolUseId: "d",
      behavior: "deny",
      reason: "policy",
    });
    const sent = lastRequestText();
    expect(sent).toContain("A PreToolUse hook (policy) denied this call: Destructive text.");
    expect(sent).toContain("ran 1: LOUD");
    expect(after).toEqual([
      expect.objectContaining({
        toolUseId: "r",
        input: { text: "LOUD" },
        output: "ran 1: LOUD",
        isError: false,
      }),
    ]);
    await session.close();
  });

  it("a Claude Code PreToolUse command hook from settings denies a call (exit 2, stderr as the reason)", async () => {
    const script = join(suite.dir.path, "guard.sh");
    await writeFile(
      script,
      '#!/bin/sh\ninput=$(cat)\ncase "$input" in *deploy*) echo "Deploys need a human." >&2; exit 2;; esac\nexit 0\n',
    );
    await chmod(script, 0o755);
    let ran = 0;
    const counted = { ...echoTool, execute: async () => ({ content: `ran ${++ran}`, isError: false }) };
    const session = await createAgentSession({
      provider: suite.provider,
      model: MODEL,
      tools: [counted],
      sessionsDir: join(suite.dir.path, "sessions"),
      cwd: suite.dir.path,
      hooks: {
        commands: { PreToolUse: [{ matcher: "echo", hooks: [{ type: "command", command: script }] }] },
        commandOptions: { inheritEnv: ["PATH"] },
      },
    });
    suite.fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          { id: "a", name: "echo", input: { text: "deploy to prod" } },
          { id: "b", name: "echo", input: { text: "build" } },
        ],
      },
      { kind: "reply", text: "Done." },
    );
    await session.send("Deploy and build.").result();
    expect(ran).toBe(1);
    expect(lastRequestText()).toContain("Deploys need a human.");
    const { entries } = await readTranscript(session.transcriptPath, { quarantine: false });
    expect(
      entries
        .filter((entry) => entry.type === "hook_result")
        .map((entry) => entry.type === "hook_result" && entry.outcome),
    ).toEqual(expect.arrayContaining(["blocked", "success"]));
    await session.close();
  });

  it("a throwing plugin is reported as a hook-error event and never stops the loop", async () => {
    const broken: HookPlugin = {
      name: "broken",
      apply(hooks) {
        hooks.postToolUse.tapPromise("broken", async () => {
          throw new Error("audit log offline");
        });
        hooks.userPromptSubmit.tapPromise("broken", async () => {
          throw new Error("retrieval offline");
        });
      },
    };
    const session = await createAgentSession({
      provider: suite.provider,
      model: MODEL,
      tools: [echoTool],
      sessionsDir: suite.dir.path,
      hooks: { plugins: [broken] },
    });
    suite.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "t", name: "echo", input: { text: "x" } }] },
      { kind: "reply", text: "Fine." },
    );
    const events = await collect(session.send("Go."));
    const errors = events.flatMap((event) => (event.type === "hook-error" ? [event.message] : []));
    expect(errors.some((message) => message.includes("audit log offline"))).toBe(true);
    expect(errors.some((message) => message.includes("retrieval offline"))).toBe(true);
    expect(events.at(-1)).toMatchObject({ stopReason: "end_turn", text: "Fine." });
    await session.close();
  });

  it("PreCompact and PostCompact fire through the manager on compact(instructions); SessionStart 'compact' adds context after it", async () => {
    const seen: string[] = [];
    const plugin: HookPlugin = {
      name: "keeper",
      apply(hooks) {
        hooks.preCompact.tapPromise("keeper", async (result, event) => {
          seen.push(`pre ${event.trigger}: ${result.instructions}`);
          return { ...result, instructions: `${result.instructions}\nKeep version numbers.` };
        });
        hooks.postCompact.tapPromise("keeper", async (event) => {
          seen.push(`post ${event.layer}`);
        });
        hooks.sessionStart.tapPromise("keeper", async (attachments, event) =>
          event.source === "compact"
            ? [...attachments, { kind: "hook-context", content: "Remember: release 2.4.1." }]
            : attachments,
        );
      },
    };
    const session = await createAgentSession({
      provider: suite.provider,
      model: MODEL,
      sessionsDir: suite.dir.path,
      hooks: { plugins: [plugin] },
    });
    for (let index = 0; index < 4; index++) {
      suite.fake.enqueue({ kind: "reply", text: `Step ${index} done. ${"notes ".repeat(300)}` });
      await session.send(`Step ${index}. ${"context ".repeat(300)}`).result();
    }
    suite.fake.enqueue({ kind: "reply", text: summaryText("Four steps of the release.") });
    const report = await session.compact("Focus on the release.");
    expect(report.actions.map((action) => action.layer)).toEqual(["summary"]);
    expect(seen).toEqual(["pre manual: Focus on the release.", "post summary"]);
    const summaryCall = JSON.stringify(modelCalls(suite.fake).at(-1));
    expect(summaryCall).toContain("Focus on the release.");
    expect(summaryCall).toContain("Keep version numbers.");
    suite.fake.enqueue({ kind: "reply", text: "Next." });
    await session.send("Continue.").result();
    const sent = lastRequestText();
    expect(sent).toContain("Four steps of the release.");
    expect(sent).toContain("Remember: release 2.4.1.");
    expect(session.status().compactions).toBe(1);
    expect((await transcriptViolations(session.transcriptPath)).violations).toEqual([]);
    await session.close();
  });

  it("clear() ends the session and starts a new one with an empty context (SessionEnd and SessionStart 'clear')", async () => {
    const log: string[] = [];
    const plugin: HookPlugin = {
      name: "log",
      apply(hooks) {
        hooks.sessionStart.tapPromise("log", async (attachments, event) => {
          log.push(`start ${event.source}`);
          return attachments;
        });
        hooks.sessionEnd.tapPromise("log", async (event) => {
          log.push(`end ${event.reason}`);
        });
      },
    };
    const session = await createAgentSession({
      provider: suite.provider,
      model: MODEL,
      sessionsDir: suite.dir.path,
      hooks: { plugins: [plugin] },
    });
    suite.fake.enqueue({ kind: "reply", text: "One." }, { kind: "reply", text: "Two." });
    await session.send("Remember the number 7.").result();
    const first = session.sessionId;
    await session.clear();
    expect(session.sessionId).not.toBe(first);
    await session.send("Which number?").result();
    expect(lastRequestText()).not.toContain("number 7");
    await session.close();
    expect(log).toEqual(["start startup", "end clear", "start clear", "end other"]);
  });
});
