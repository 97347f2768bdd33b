import { fixedSummarizer } from "@unforget/compact/testing";
import { failingLookups } from "@unforget/testing/arbitraries";
import * as ai7 from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { createScriptedModel } from "./__fixtures__/scripted-model.ts";
import { createAiSdkContext } from "./ai-sdk-context.ts";

/** A summariser that writes little: one sentence, no errors, no calls. */
const terse = fixedSummarizer("Records were looked up.");

const STEPS = 70;
const FAILURES = 9;

/**
 * One run: the AI SDK's own loop (`generateText`, `prepareStep`) at a 16K window, a custom tool `get_record`
 * whose results no cheap layer may clear (only summaries make room), nine of its calls failing with an error of
 * their own at steps the seed picks among the first fifty. Returns the nine error lines and the last request.
 */
async function run(seed: number): Promise<{ errors: string[]; last: string; compactions: number }> {
  const lookups = failingLookups(seed, { failures: FAILURES, among: 50 });
  const { model, calls } = createScriptedModel(MockLanguageModelV4 as never, (_prompt, call) => ({
    tool: "get_record",
    input: { id: `rec-${call}` },
  }));
  const tools = {
    get_record: ai7.tool({
      description: "Looks a record up",
      inputSchema: ai7.jsonSchema<{ id: string }>({ type: "object", properties: { id: { type: "string" } } }),
      execute: async ({ id }) => lookups.lookUp(id),
    }),
  };
  const context = createAiSdkContext({
    model: "claude-sonnet-4-5",
    limits: { contextWindow: 16_000, maxOutputTokens: 4_000 },
    tools,
    summarizer: terse,
  });
  await ai7.generateText({
    model: model as ai7.LanguageModel,
    tools,
    messages: [{ role: "user", content: "Check every record and tell me which ones are broken." }],
    stopWhen: ai7.stepCountIs(STEPS),
    prepareStep: context.prepareStep,
  });
  return {
    errors: lookups.errors,
    last: JSON.stringify(calls.at(-1)!.prompt),
    compactions: context.status().compactions,
  };
}

describe("the continuation through the AI SDK adapter", () => {
  it("keeps every failing call of a custom tool in the last request, whatever a terse summariser writes (20 of 20 runs)", async () => {
    const lost: Record<number, string[]> = {};
    for (let seed = 1; seed <= 20; seed++) {
      const { errors, last, compactions } = await run(seed);
      expect(errors).toHaveLength(FAILURES);
      // Summaries stood for the failing calls: they are no longer in the request as they were sent.
      expect(compactions, `run ${seed}`).toBeGreaterThan(1);
      const missing = errors.filter((line) => !last.includes(line));
      if (missing.length > 0) lost[seed] = missing;
    }
    // Each run's nine error lines are all in its last request: 20 of 20 runs.
    expect(lost).toEqual({});
  }, 240_000);
});
