import { SUMMARY_SECTIONS } from "@unforget/compact";
import type { AgentSession } from "@unforget/session";
import { describe, expect, it } from "vitest";
import { anthropicSuite } from "../../test-support/agent-fixture.ts";
import { createAgentEnvironment } from "../agent/agent-environment.ts";
import { parseCompactArguments } from "./context-commands.ts";
import { ReplController } from "./repl-controller.ts";
import { ReplStore } from "./repl-state.ts";

const suite = anthropicSuite("session-commands");

const SUMMARY = `<summary>\n${SUMMARY_SECTIONS.map((title, index) => `${index + 1}. ${title}:\nThe parts are done.`).join("\n\n")}\n</summary>`;

/** A session of six long answered prompts on the fake, and a summary answer for each compaction to come. */
async function longSession(): Promise<{ session: AgentSession; run(line: string): Promise<string> }> {
  const environment = await createAgentEnvironment({
    flags: { model: "claude-sonnet-4-6" },
    env: { HOME: suite.folders.home, ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: suite.fake.url },
    cwd: suite.folders.project,
  });
  const session = await environment.openSession();
  for (let part = 0; part < 6; part++) {
    suite.fake.enqueue({
      kind: "reply",
      text: `Part ${part}: ${"every module was read and noted. ".repeat(120)}`,
    });
    await session.send(`Do part ${part}.`).result();
  }
  suite.fake.enqueue(
    { kind: "reply", text: SUMMARY },
    { kind: "reply", text: SUMMARY },
    { kind: "reply", text: SUMMARY },
  );
  // The REPL's controller on this session, as the screen drives it: each command's printed lines come back.
  const store = new ReplStore({ phase: "ready" });
  const controller = new ReplController(store, () => {});
  controller.environment = environment;
  controller.session = session;
  const run = async (line: string) => {
    const from = store.getState().history.length;
    await controller.runCommand(line);
    return store
      .getState()
      .history.slice(from)
      .map((item) => ("text" in item ? item.text : ""))
      .join("\n");
  };
  return { session, run };
}

describe("/compact --target", () => {
  it("reads --preview, --target and the instructions in any order of the flags", () => {
    expect(parseCompactArguments("--target 20K keep the names")).toEqual({
      preview: false,
      target: 20_000,
      instructions: "keep the names",
    });
    expect(parseCompactArguments("--preview")).toEqual({ preview: true, instructions: "" });
    expect(parseCompactArguments("keep --target 5K")).toEqual({
      preview: false,
      instructions: "keep --target 5K",
    });
    expect(() => parseCompactArguments("--target lots")).toThrow(/--window lots|lots/);
  });

  it("does nothing when the context is already at or under the target", async () => {
    const { session, run } = await longSession();
    expect(await run("/compact --target 1M")).toMatch(/^Nothing to do: the context is [\d.]+K tokens/);
    await session.close();
  });

  it("compacts until the context is under the target, through the session's targetTokens", async () => {
    const { session, run } = await longSession();
    const before = session.status().tokens;
    expect(before).toBeGreaterThan(8_000);
    expect(await run("/compact --target 8K")).toMatch(
      /^Compacted to the target with one compaction: [\d.]+K → [\d.]+K tokens \(target 8\.0K\)/,
    );
    expect(session.status().tokens).toBeLessThanOrEqual(8_000);
    await session.close();
  });
});

describe("/pin, /unpin and /pins", () => {
  it("pin a message that a compaction then keeps verbatim, list it, and unpin it", async () => {
    const { session, run } = await longSession();
    expect(await run("/pins")).toMatch(/^No pins\. \/pin last/);
    const second = session.messages.find(
      (message) => message.role === "assistant" && JSON.stringify(message.content).includes("Part 1:"),
    )!;
    expect(await run(`/pin ${second.id}`)).toMatch(new RegExp(`^Pinned ${second.id} \\([\\d.]+K? tokens\\)`));
    const listed = await run("/pins");
    expect(listed).toContain(second.id);
    expect(listed).toMatch(/yes\s+user/);
    expect(await run("/compact")).toMatch(/^Compacted \(summary\)/);
    suite.fake.enqueue({ kind: "reply", text: "Next." });
    await session.send("What next?").result();
    const request = JSON.stringify(suite.fake.requests.at(-1)?.body);
    expect(request).toContain("Part 1: every module");
    expect(request).not.toContain("Part 0: every module");
    expect(await run(`/unpin ${second.id}`)).toMatch(/^Unpinned/);
    expect(await run(`/unpin ${second.id}`)).toMatch(/^Nothing pinned holds/);
    await session.close();
  });

  it("pin the newest message with last, say what to do past the cap, and are listed in /help", async () => {
    const { session, run } = await longSession();
    expect(await run("/pin last")).toMatch(new RegExp(`^Pinned ${session.messages.at(-1)!.id} `));
    expect(await run("/pin")).toMatch(/\/pin: say what to pin/);
    expect(await run("/pin no-such-id")).toMatch(/\/pin: .*no-such-id/);
    const help = await run("/help");
    for (const command of ["/pin <id|last>", "/unpin <id>", "/pins"]) expect(help).toContain(command);
    await session.close();
  });
});

describe("the end of a turn", () => {
  it("says why a turn paused after a compaction (compaction.pauseAfterAuto) and what to do next", () => {
    const store = new ReplStore({ phase: "ready" });
    const controller = new ReplController(store, () => {});
    const usage = { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };
    controller.onEvent({ type: "turn-end", stopReason: "compacted", turns: 3, usage, text: "" });
    const printed = store
      .getState()
      .history.map((item) => ("text" in item ? item.text : ""))
      .join("\n");
    expect(printed).toContain("Paused after compacting");
    expect(printed).toContain("/context summary");
  });
});
