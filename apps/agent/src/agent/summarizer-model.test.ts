import { SUMMARY_SECTIONS } from "@unforget/compact";
import { describe, expect, it } from "vitest";
import { anthropicSuite } from "../../test-support/agent-fixture.ts";
import { createAgentEnvironment } from "./agent-environment.ts";

const suite = anthropicSuite("summarizer");

const SUMMARY = `<summary>\n${SUMMARY_SECTIONS.map((title, index) => `${index + 1}. ${title}:\nThe part is done.`).join("\n\n")}\n</summary>`;

/** One answered prompt and a compaction in an environment with these flags: the model of each call. */
async function modelsOfCalls(flags: { summarizerModel?: string } = {}): Promise<string[]> {
  const environment = await createAgentEnvironment({
    flags: { model: "claude-sonnet-4-6", ...flags },
    env: { HOME: suite.folders.home, ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: suite.fake.url },
    cwd: suite.folders.project,
  });
  const session = await environment.openSession();
  suite.fake.enqueue({ kind: "reply", text: "Done." }, { kind: "reply", text: SUMMARY });
  await session.send("Do the part.").result();
  await session.compact();
  await session.close();
  await environment.tasks.close?.();
  return suite.fake.requests
    .filter((request) => request.operation !== "count_tokens")
    .map((request) => (request.body as { model: string }).model);
}

describe("the summariser model in the app", () => {
  it("is the session's model unless set", async () => {
    expect(await modelsOfCalls()).toEqual(["claude-sonnet-4-6", "claude-sonnet-4-6"]);
  });

  it("is the settings' summarizer.model, and --summarizer-model over it", async () => {
    suite.folders.write("home/.unforget/settings.json", { summarizer: { model: "claude-haiku-4-5" } });
    expect(await modelsOfCalls()).toEqual(["claude-sonnet-4-6", "claude-haiku-4-5"]);
    suite.fake.reset();
    expect(await modelsOfCalls({ summarizerModel: "claude-3-5-haiku" })).toEqual([
      "claude-sonnet-4-6",
      "claude-3-5-haiku",
    ]);
  });
});
