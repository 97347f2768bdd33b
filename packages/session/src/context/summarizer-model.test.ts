import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { anthropicSetup, anthropicSuite, modelCalls, summaryText } from "../__fixtures__/session-kit.ts";
import { type AgentSessionOptions, createAgentSession } from "../index.ts";

const suite = anthropicSuite("summarizer-model");

/** A session of two answered prompts, then a compaction: which model and server wrote the summary. */
async function compactWith(extra: Partial<AgentSessionOptions>, name: string) {
  const session = await createAgentSession({
    provider: suite.provider,
    model: "claude-sonnet-4-6",
    system: "You are a careful agent.",
    sessionsDir: join(suite.dir.path, name),
    ...extra,
  });
  for (const text of ["first", "second"]) {
    suite.fake.enqueue({ kind: "reply", text: `Done with the ${text} part.` });
    await session.send(`Do the ${text} part.`).result();
  }
  return session;
}

const modelOf = (body: unknown) => (body as { model?: string }).model;

describe("a summariser model of its own", () => {
  it("writes summaries with the session's model by default", async () => {
    const session = await compactWith({}, "default");
    suite.fake.enqueue({ kind: "reply", text: summaryText("Both parts are done.") });
    await session.compact();
    expect(modelCalls(suite.fake).map((call) => modelOf(call))).toEqual([
      "claude-sonnet-4-6",
      "claude-sonnet-4-6",
      "claude-sonnet-4-6",
    ]);
    await session.close();
  });

  it("sends the summary call to the configured model, the turns to the session's", async () => {
    const session = await compactWith({ summarizer: { model: "claude-haiku-4-5" } }, "configured");
    suite.fake.enqueue({ kind: "reply", text: summaryText("Both parts are done.") });
    await session.compact();
    expect(modelCalls(suite.fake).map((call) => modelOf(call))).toEqual([
      "claude-sonnet-4-6",
      "claude-sonnet-4-6",
      "claude-haiku-4-5",
    ]);
    await session.close();
  });

  it("sends the summary call to the summariser's own provider when it has one", async () => {
    const other = await anthropicSetup();
    try {
      const session = await compactWith(
        { summarizer: { provider: other.provider, model: "claude-haiku-4-5" } },
        "provider",
      );
      other.fake.enqueue({ kind: "reply", text: summaryText("Both parts are done.") });
      await session.compact();
      expect(modelCalls(suite.fake)).toHaveLength(2);
      expect(modelCalls(other.fake).map((call) => modelOf(call))).toEqual(["claude-haiku-4-5"]);
      await session.close();
    } finally {
      await other.fake.close();
    }
  });
});
