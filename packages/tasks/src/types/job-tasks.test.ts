import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readAllOutput, temporaryDirectory, waitForNotification } from "../__fixtures__/task-test-kit.ts";
import { createTaskManager, type TaskManager } from "../manager/task-manager.ts";
import type { InProcessTeammate } from "../task/task-spec.ts";

let dir: string;
let cleanup: () => Promise<void>;
let manager: TaskManager;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory("tasks-jobs-"));
  manager = await createTaskManager({ dir, graceMs: 200, stall: { intervalMs: 50, quietMs: 200 } });
});
afterEach(async () => {
  await manager.close();
  await cleanup();
});

describe("local_agent", () => {
  it("runs the caller's loop with its own context and reports back", async () => {
    const id = await manager.start({
      type: "local_agent",
      description: "summarise the logs",
      prompt: "Summarise logs/",
      async run({ prompt, output, signal, taskId }) {
        await output.line(`agent ${taskId} got: ${prompt}`);
        expect(signal.aborted).toBe(false);
        return "3 errors, all in the parser";
      },
    });
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({
      kind: "finished",
      type: "local_agent",
      result: "3 errors, all in the parser",
    });
    expect(await readAllOutput(manager, id)).toBe(`agent ${id} got: Summarise logs/\n`);
    expect(await manager.get(id)).toMatchObject({
      status: "completed",
      result: "3 errors, all in the parser",
    });
  });

  it("a loop that throws fails the task with its message", async () => {
    const id = await manager.start({
      type: "local_agent",
      description: "broken",
      async run() {
        throw new Error("provider unreachable");
      },
    });
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({ kind: "failed", reason: "error", error: "provider unreachable" });
  });

  it("stop aborts the loop's signal; a loop that ignores it is abandoned after the grace period", async () => {
    const polite = await manager.start({
      type: "local_agent",
      description: "polite",
      run: ({ signal }) =>
        new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted")))),
    });
    const stubborn = await manager.start({
      type: "local_agent",
      description: "stubborn",
      run: () => sleep(60_000).then(() => "late"),
    });
    expect(await manager.stop(polite)).toMatchObject({ status: "killed", endReason: "stopped" });
    expect(await manager.stop(stubborn)).toMatchObject({ status: "killed", endReason: "stopped" });
  });
});

describe("in_process_teammate and the mailbox", () => {
  it("exchanges messages with the coordinator and with another teammate", async () => {
    const echo: InProcessTeammate = {
      name: "echo",
      async run({ mailbox, signal }) {
        for (;;) {
          for (const message of await mailbox.receive({ waitMs: 5_000, signal })) {
            if (message.text === "bye") return "echoed until bye";
            await mailbox.send(`echo: ${message.text}`, { to: message.from });
          }
        }
      },
    };
    const echoId = await manager.start({ type: "in_process_teammate", teammate: echo });
    const askerId = await manager.start({
      type: "in_process_teammate",
      teammate: {
        name: "asker",
        async run({ mailbox }) {
          await mailbox.send("hello", { to: echoId });
          const [reply] = await mailbox.receive({ waitMs: 5_000 });
          await mailbox.send(`the echo said "${reply?.text}"`);
          return reply?.text;
        },
      },
    });
    const { match } = await waitForNotification(manager, (n) => n.taskId === askerId && n.kind === "message");
    expect(match).toMatchObject({ kind: "message", from: askerId, text: 'the echo said "echo: hello"' });

    await manager.write(echoId, "ping");
    const reply = await waitForNotification(manager, (n) => n.taskId === echoId && n.kind === "message");
    expect(reply.match).toMatchObject({ text: "echo: ping" });
    await manager.write(echoId, "bye");
    const finished = await waitForNotification(manager, (n) => n.taskId === echoId && n.kind === "finished");
    expect(finished.match).toMatchObject({ result: "echoed until bye" });
    expect(await manager.list()).toContainEqual(expect.objectContaining({ id: echoId, description: "echo" }));
  });
});

describe("remote_agent", () => {
  it("launches through the connector and follows the agent over the mailbox until its result", async () => {
    const launched: string[] = [];
    const id = await manager.start({
      type: "remote_agent",
      description: "remote review",
      prompt: "Review PR 12",
      connector: {
        async launch({ taskId, prompt, inbox, outbox, mailbox }) {
          launched.push(prompt);
          // The "remote" side, here in-process, speaking only the mailbox protocol.
          void (async () => {
            await mailbox.send({ from: taskId, to: outbox, kind: "progress", text: "reading the diff" });
            await mailbox.send({
              from: taskId,
              to: outbox,
              kind: "message",
              text: "Which branch is the base?",
            });
            const [answer] = await mailbox.receive(inbox, { waitMs: 5_000 });
            await mailbox.send({
              from: taskId,
              to: outbox,
              kind: "result",
              text: `Reviewed against ${answer?.text}: 2 comments`,
            });
          })();
        },
      },
    });
    const question = await waitForNotification(manager, (n) => n.taskId === id && n.kind === "message");
    expect(question.match).toMatchObject({ text: "Which branch is the base?" });
    await manager.write(id, "main");
    const { match } = await waitForNotification(manager, (n) => n.taskId === id && n.kind === "finished");
    expect(match).toMatchObject({ result: "Reviewed against main: 2 comments" });
    expect(launched).toEqual(["Review PR 12"]);
    expect(await readAllOutput(manager, id)).toContain("reading the diff\n");
  });

  it("stop sends shutdown, and cancels an agent that does not answer", async () => {
    const cancelled: string[] = [];
    const id = await manager.start({
      type: "remote_agent",
      description: "silent",
      prompt: "x",
      connector: {
        async launch() {},
        async cancel(taskId) {
          cancelled.push(taskId);
        },
      },
    });
    expect(await manager.stop(id)).toMatchObject({ status: "killed" });
    expect(cancelled).toEqual([id]);
  });
});

describe("dream", () => {
  it("runs the app's consolidation job and keeps its summary", async () => {
    const id = await manager.start({
      type: "dream",
      job: {
        name: "memory consolidation",
        async run({ log }) {
          for (const phase of ["orient", "gather", "consolidate", "prune"]) await log(`phase: ${phase}`);
          return { summary: "merged 2 duplicates, pruned 1 stale memory" };
        },
      },
    });
    const { match } = await waitForNotification(manager, (n) => n.taskId === id);
    expect(match).toMatchObject({
      kind: "finished",
      description: "memory consolidation",
      result: "merged 2 duplicates, pruned 1 stale memory",
    });
    expect(await readAllOutput(manager, id)).toBe(
      "phase: orient\nphase: gather\nphase: consolidate\nphase: prune\n",
    );
  });
});
