import { HumanMessage } from "@langchain/core/messages";
import { fixedSummarizer } from "@unforget/compact/testing";
import { failingLookups } from "@unforget/testing/arbitraries";
import { createAgent, tool } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createScriptedChatModel } from "./__fixtures__/scripted-chat-model.ts";
import { createContextMiddleware } from "./context-middleware.ts";

/** A summariser that writes little: one sentence, no errors, no calls. */
const terse = fixedSummarizer("Records were looked up.");

const STEPS = 70;
const FAILURES = 9;
const RUNS = 20;

/**
 * One run: LangChain's own agent (`createAgent`, its fake chat model) with the middleware in `mode` at a 16K
 * window, a custom tool `get_record` whose results no cheap layer may clear (only summaries make room), nine of
 * its calls failing with an error of their own at steps the seed picks among the first fifty (the agent's tool
 * node turns the thrown error into an error `ToolMessage`). Returns the nine error lines and the last request.
 */
async function run(
  seed: number,
  mode: "state" | "request",
): Promise<{ errors: string[]; last: string; compactions: number }> {
  const lookups = failingLookups(seed, { failures: FAILURES, among: 50 });
  const { model, calls } = createScriptedChatModel(
    (_messages, call) =>
      call === STEPS ? { text: "Done." } : { tool: "get_record", args: { id: `rec-${call}` } },
    STEPS,
  );
  const getRecord = tool(async ({ id }) => lookups.lookUp(id), {
    name: "get_record",
    description: "Looks a record up",
    schema: z.object({ id: z.string() }),
  });
  const middleware = createContextMiddleware({
    model: "claude-sonnet-4-5",
    limits: { contextWindow: 16_000, maxOutputTokens: 4_000 },
    summarizer: terse,
    mode,
  });
  const agent = createAgent({ model, tools: [getRecord], middleware: [middleware] });
  await agent.invoke(
    { messages: [new HumanMessage("Check every record and tell me which ones are broken.")] },
    { recursionLimit: 4 * STEPS },
  );
  const last = JSON.stringify(calls.at(-1)!.messages.map((message) => message.content));
  return { errors: lookups.errors, last, compactions: middleware.status().compactions };
}

describe("the continuation through the LangChain middleware", () => {
  for (const mode of ["state", "request"] as const) {
    it(`keeps every failing call of a custom tool in the last request, whatever a terse summariser writes (${mode} mode, ${RUNS} of ${RUNS} runs)`, async () => {
      const lost: Record<number, string[]> = {};
      for (let seed = 1; seed <= RUNS; seed++) {
        const { errors, last, compactions } = await run(seed, mode);
        expect(errors).toHaveLength(FAILURES);
        // Summaries stood for the failing calls: they are no longer in the request as they were sent.
        expect(compactions, `run ${seed}`).toBeGreaterThan(1);
        const missing = errors.filter((line) => !last.includes(line));
        if (missing.length > 0) lost[seed] = missing;
      }
      // Each run's nine error lines are all in its last request.
      expect(lost).toEqual({});
    }, 240_000);
  }
});
