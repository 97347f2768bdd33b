import { chmod, copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createTaskManager } from "@unforget/tasks";
import type { FakeStep, RecordedRequest } from "@unforget/testing/fakes";
import { createBuiltinTools } from "@unforget/tools";
import { readTranscript } from "@unforget/transcript";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  collect,
  isSummaryRequest,
  modelCalls,
  PROVIDER_NAMES,
  type ProviderSetup,
  startProvider,
  summaryText,
  tempDir,
  transcriptViolations,
} from "../__fixtures__/session-kit.ts";
import { type AgentSessionOptions, createAgentSession } from "../index.ts";
import type { SessionEvent } from "./session-events.ts";

/** The request a fake received as text, to look for what the model was sent (every wire keeps the words). */
const wireText = (request: RecordedRequest | Record<string, unknown> | undefined) =>
  JSON.stringify(request ?? {});

/** How many stream events each fake sends up to the first piece of a reply's text. */
const FIRST_TEXT_EVENTS = { anthropic: 4, bedrock: 2, vertex: 1 } as const;

describe.each(PROVIDER_NAMES)("end to end on the %s fake", (name) => {
  let setup: ProviderSetup;
  let dir: { path: string; cleanup(): Promise<void> };
  let workspace: string;

  beforeAll(async () => {
    setup = await startProvider(name);
  });
  afterAll(async () => {
    await setup.fake.close();
  });
  beforeEach(async () => {
    setup.fake.reset();
    dir = await tempDir(`e2e-${name}`);
    workspace = join(dir.path, "workspace");
    await mkdir(workspace, { recursive: true });
  });
  afterEach(async () => {
    await dir.cleanup();
  });

  const options = (extra: Partial<AgentSessionOptions> = {}): AgentSessionOptions => ({
    provider: setup.provider,
    model: setup.model,
    system: "You are a careful coding agent.",
    tools: createBuiltinTools({ bash: { outputDir: join(dir.path, "bash-output") } }),
    sessionsDir: join(dir.path, "sessions"),
    cwd: workspace,
    permissions: { mode: "bypassPermissions" },
    context: { limits: { contextWindow: 32_000, maxOutputTokens: 4_000 } },
    ...extra,
  });

  it("a session of 200+ tool calls across a 32K window compacts and keeps going", async () => {
    const files = 210;
    for (let index = 0; index < files; index++) {
      const lines = Array.from(
        { length: 40 },
        (_, line) => `module ${index}, line ${line}: export const v${line} = ${line};`,
      );
      await writeFile(join(workspace, `module-${index}.ts`), `${lines.join("\n")}\n`);
    }
    let calls = 0;
    setup.fake.setResponder((request): FakeStep => {
      if (isSummaryRequest(request.body)) {
        return { kind: "reply", text: summaryText(`Read modules 0 to ${calls - 1}; all export constants.`) };
      }
      if (calls >= files) return { kind: "reply", text: `Read all ${files} modules.` };
      const index = calls++;
      const input =
        index % 25 === 24
          ? { name: "Bash", input: { command: `wc -l module-${index}.ts` } }
          : { name: "Read", input: { file_path: join(workspace, `module-${index}.ts`) } };
      return { kind: "reply", text: `Reading module ${index}.`, toolCalls: [input] };
    });
    const session = await createAgentSession(options());
    const events = await collect(
      session.send("Read every module in this workspace and tell me what they export."),
    );
    const end = events.at(-1);
    expect(end).toMatchObject({
      type: "turn-end",
      stopReason: "end_turn",
      text: `Read all ${files} modules.`,
    });
    const completed = events.filter((event) => event.type === "tool-end" && event.status === "completed");
    expect(completed.length).toBe(files);
    expect(events.filter((event) => event.type === "tool-end" && event.output.isError)).toEqual([]);
    const layers = events.flatMap((event) =>
      event.type === "context" && event.event.type === "layer" ? [event.event.layer] : [],
    );
    // The context passed the threshold again and again; the ladder brought it back each time.
    expect(layers.length).toBeGreaterThanOrEqual(3);
    const requests = modelCalls(setup.fake).filter((body) => !isSummaryRequest(body));
    // The user's words are in every request, the window is never exceeded, and the pairs are whole.
    for (const body of requests) expect(wireText(body)).toContain("Read every module in this workspace");
    expect(Math.max(...requests.map((body) => setup.fake.countTokens(body)))).toBeLessThan(32_000);
    expect(events.some((event) => event.type === "retry")).toBe(false);
    expect((await transcriptViolations(session.transcriptPath)).violations).toEqual([]);
    await session.close();
    // 210 model calls and tool runs: a few seconds alone, several times that on a loaded 2-core machine.
  }, 180_000);

  it("a prompt-too-long reply leads to recover, and the retry succeeds", async () => {
    const session = await createAgentSession(options());
    for (let index = 0; index < 6; index++) {
      setup.fake.enqueue({ kind: "reply", text: `Answer ${index}: ${"detail ".repeat(300)}` });
      await session.send(`Question ${index}: ${"context ".repeat(300)}`).result();
    }
    setup.fake.enqueue(
      // The provider counts one token over its limit (the fake counts the request as the provider would).
      { kind: "error", error: "prompt_too_long" },
      { kind: "reply", text: summaryText("Six questions were answered.") },
      { kind: "reply", text: "Recovered." },
    );
    const events = await collect(session.send("Question 7."));
    expect(events.some((event) => event.type === "retry")).toBe(true);
    expect(events.at(-1)).toMatchObject({ stopReason: "end_turn", text: "Recovered." });
    expect(wireText(modelCalls(setup.fake).at(-1))).toContain("Six questions were answered.");
    await session.close();
  });

  it("an abort mid-stream, and one mid-Bash, leave a valid transcript", async () => {
    const session = await createAgentSession(options());
    setup.fake.enqueue({
      kind: "reply",
      text: "A long answer that will be cut",
      hangAfterEvents: FIRST_TEXT_EVENTS[name],
    });
    const streamed: SessionEvent[] = [];
    for await (const event of session.send("Answer at length.")) {
      streamed.push(event);
      if (event.type === "text-delta") session.interrupt();
    }
    expect(streamed.at(-1)).toMatchObject({ stopReason: "aborted" });

    setup.fake.enqueue({ kind: "reply", toolCalls: [{ name: "Bash", input: { command: "sleep 30" } }] });
    const midBash: SessionEvent[] = [];
    for await (const event of session.send("Sleep.")) {
      midBash.push(event);
      if (event.type === "tool-start") session.interrupt();
    }
    expect(midBash.find((event) => event.type === "tool-end")).toMatchObject({
      name: "Bash",
      status: "interrupted",
    });
    expect(midBash.at(-1)).toMatchObject({ stopReason: "aborted" });
    expect((await transcriptViolations(session.transcriptPath)).violations).toEqual([]);

    setup.fake.enqueue({ kind: "reply", text: "Back." });
    expect((await session.send("Go on.").result()).text).toBe("Back.");
    await session.close();
  });

  it("resume reproduces the next request byte for byte", async () => {
    await writeFile(join(workspace, "notes.md"), "# Notes\nRelease 2.4.1 on Friday.\n");
    const session = await createAgentSession(options());
    setup.fake.enqueue(
      { kind: "reply", toolCalls: [{ name: "Read", input: { file_path: join(workspace, "notes.md") } }] },
      { kind: "reply", text: "The release is on Friday." },
    );
    await session.send("When is the release?").result();
    const copy = join(dir.path, "copy");
    await mkdir(copy, { recursive: true });
    await copyFile(session.transcriptPath, join(copy, `${session.sessionId}.jsonl`));
    setup.fake.enqueue({ kind: "reply", text: "Version 2.4.1." });
    await session.send("Which version?").result();
    const expected = wireText(modelCalls(setup.fake).at(-1));
    await session.close();

    const resumed = await createAgentSession(options({ sessionsDir: copy, resume: session.sessionId }));
    setup.fake.enqueue({ kind: "reply", text: "Version 2.4.1." });
    await resumed.send("Which version?").result();
    expect(wireText(modelCalls(setup.fake).at(-1))).toBe(expected);
    await resumed.close();
  });

  it("a background task's completion reaches the model on the next turn", async () => {
    const tasks = await createTaskManager({ dir: join(dir.path, "tasks") });
    try {
      const session = await createAgentSession(
        options({
          tools: createBuiltinTools({ bash: { tasks, outputDir: join(dir.path, "bash-output") } }),
          tasks,
        }),
      );
      setup.fake.enqueue(
        {
          kind: "reply",
          toolCalls: [{ name: "Bash", input: { command: "echo build finished", run_in_background: true } }],
        },
        // A long answer, so that a summary has something to shrink (the user's words are carried whole).
        { kind: "reply", text: `The build runs in the background. ${"detail ".repeat(600)}` },
      );
      await session.send("Build in the background.").result();
      const [task] = await tasks.list();
      await tasks.wait(task!.id, { timeoutMs: 20_000 });
      // The tools the notification names are offered: the model reads the output with task_output.
      setup.fake.enqueue(
        { kind: "reply", toolCalls: [{ name: "task_output", input: { id: task!.id } }] },
        { kind: "reply", text: "The build finished." },
      );
      const events = await collect(session.send("Is it done?"));
      expect(events.find((event) => event.type === "task-notification")).toMatchObject({
        notifications: [expect.objectContaining({ taskId: task!.id, kind: "finished" })],
      });
      const read = events.find((event) => event.type === "tool-end");
      expect(read).toMatchObject({ name: "task_output", status: "completed", output: { isError: false } });
      expect(JSON.stringify(read)).toContain("build finished");
      expect(session.tools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining(["Bash", "task_output", "task_input", "task_stop", "task_list"]),
      );
      // Starting one is Bash's run_in_background: no second way to do it.
      expect(session.tools.map((tool) => tool.name)).not.toContain("task_start");
      expect(wireText(modelCalls(setup.fake).at(-1))).toContain(`Background task ${task!.id}`);
      // After a compaction the task's status comes back, so the model does not start it again.
      setup.fake.enqueue({ kind: "reply", text: summaryText("A build ran in the background.") });
      expect((await session.compact()).actions.map((action) => action.layer)).toEqual(["summary"]);
      setup.fake.enqueue({ kind: "reply", text: "Nothing else runs." });
      await session.send("What runs now?").result();
      expect(wireText(modelCalls(setup.fake).at(-1))).toContain(`${task!.id} (local_bash)`);
      await session.close();
    } finally {
      await tasks.close();
    }
  });

  it("a PreToolUse command hook denies a call", async () => {
    const script = join(dir.path, "no-rm.sh");
    await writeFile(
      script,
      '#!/bin/sh\ngrep -q "rm -rf" && { echo "rm -rf is not allowed here." >&2; exit 2; }\nexit 0\n',
    );
    await chmod(script, 0o755);
    const session = await createAgentSession(
      options({
        hooks: {
          commands: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: script }] }] },
          commandOptions: { inheritEnv: ["PATH"] },
        },
      }),
    );
    await writeFile(join(workspace, "keep.txt"), "keep me\n");
    setup.fake.enqueue(
      { kind: "reply", toolCalls: [{ name: "Bash", input: { command: "rm -rf ./*" } }] },
      { kind: "reply", text: "I will not delete anything." },
    );
    const events = await collect(session.send("Clean the workspace."));
    expect(events.find((event) => event.type === "tool-end")).toMatchObject({ status: "denied" });
    expect(wireText(modelCalls(setup.fake).at(-1))).toContain("rm -rf is not allowed here.");
    const { entries } = await readTranscript(session.transcriptPath, { quarantine: false });
    expect(entries.some((entry) => entry.type === "hook_result" && entry.outcome === "blocked")).toBe(true);
    await session.close();
  });
});
