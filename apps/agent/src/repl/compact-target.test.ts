import { SUMMARY_SECTIONS } from "@unforget/compact";
import type { AgentSession } from "@unforget/session";
import { describe, expect, it } from "vitest";
import { anthropicSuite } from "../../test-support/agent-fixture.ts";
import { createAgentEnvironment } from "../agent/agent-environment.ts";
import { compactToTarget, parseCompactArguments } from "./compact-target.ts";

const suite = anthropicSuite("compact-target");

const SUMMARY = `<summary>\n${SUMMARY_SECTIONS.map((title, index) => `${index + 1}. ${title}:\nThe parts are done.`).join("\n\n")}\n</summary>`;

/** A session of six long answered prompts on the fake, and a summary answer for each compaction to come. */
async function longSession(): Promise<AgentSession> {
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
  return session;
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
    const session = await longSession();
    const outcome = await compactToTarget(session, 1_000_000, undefined);
    expect(outcome.reports).toEqual([]);
    expect(outcome.reached).toBe(true);
    await session.close();
  });

  it("compacts once when that reaches the target", async () => {
    const session = await longSession();
    const before = session.status().tokens;
    const outcome = await compactToTarget(session, before - 1_000, undefined);
    expect(outcome.reports).toHaveLength(1);
    expect(outcome.reached).toBe(true);
    expect(outcome.tokensAfter).toBeLessThanOrEqual(before - 1_000);
    await session.close();
  });

  it("says why it stopped above a target it cannot reach, and never grows the context", async () => {
    const session = await longSession();
    const before = session.status().tokens;
    const outcome = await compactToTarget(session, 1_000, undefined);
    expect(outcome.reached).toBe(false);
    expect(outcome.reason.length).toBeGreaterThan(0);
    expect(outcome.reports.length).toBeGreaterThanOrEqual(1);
    expect(outcome.reports.length).toBeLessThanOrEqual(3);
    expect(outcome.tokensAfter).toBeLessThanOrEqual(before);
    for (const report of outcome.reports) expect(report.tokensAfter).toBeLessThanOrEqual(report.tokensBefore);
    await session.close();
  });
});
