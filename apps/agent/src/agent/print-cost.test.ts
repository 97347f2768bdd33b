import { fakeTokenCount, type RecordedRequest } from "@unforget/testing/fakes";
import { describe, expect, it } from "vitest";
import {
  anthropicSuite,
  isSummaryRequest,
  runAgent,
  SUMMARY_STEP,
} from "../../test-support/agent-fixture.ts";

const suite = anthropicSuite("print-cost");

/** Anthropic's list prices per million tokens (input, output) of the two models the run uses. */
const LIST_PRICES: Record<string, [number, number]> = {
  "claude-sonnet-4-6": [3, 15],
  "claude-haiku-4-5": [1, 5],
};

const modelOf = (request: RecordedRequest) => (request.body as { model: string }).model;

/** The usage each call was answered with: its size as the fake counts it, and an output of its own kind. */
const billed = new Map<RecordedRequest, { inputTokens: number; outputTokens: number }>();

const READS = 12;
let reads = 0;

/** Reads the data files one call at a time, then answers; a compaction call gets a summary. */
function readingModel(request: RecordedRequest) {
  const summary = isSummaryRequest(request);
  const usage = { inputTokens: fakeTokenCount(request.body), outputTokens: summary ? 700 : 40 };
  billed.set(request, usage);
  if (summary) return { ...SUMMARY_STEP, usage };
  const background = JSON.stringify(request.body).includes("[unforget memory extraction]");
  if (background || reads === READS) return { kind: "reply" as const, text: "Read them all.", usage };
  const read = reads++;
  return {
    kind: "reply" as const,
    // A long note each time: the cheap layers clear old results, but only a summary frees the notes.
    text: `Reading file ${read}. ${"Its records look consistent with the previous ones so far. ".repeat(30)}`,
    toolCalls: [{ name: "Read", input: { file_path: `data/file-${read}.txt` } }],
    usage,
  };
}

/** What the calls cost at list prices, each at its own model's. */
function priced(requests: readonly RecordedRequest[]): number {
  return requests.reduce((sum, request) => {
    const [input, output] = LIST_PRICES[modelOf(request)]!;
    const usage = billed.get(request)!;
    return sum + (usage.inputTokens * input + usage.outputTokens * output) / 1_000_000;
  }, 0);
}

/** The usage of the calls summed, as `modelUsage` reports it. */
function summed(requests: readonly RecordedRequest[]) {
  const usages = requests.map((request) => billed.get(request)!);
  return {
    inputTokens: usages.reduce((sum, usage) => sum + usage.inputTokens, 0),
    outputTokens: usages.reduce((sum, usage) => sum + usage.outputTokens, 0),
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    costUSD: expect.closeTo(priced(requests), 6),
  };
}

describe("unforget -p: total_cost_usd", () => {
  it("includes the summariser's calls, each at its own model's price, with modelUsage per model", async () => {
    suite.folders.write("home/.unforget/settings.json", {
      compaction: { threshold: { tokens: 8_000 } },
      summarizer: { model: "claude-haiku-4-5" },
    });
    for (let index = 0; index < READS; index++) {
      const line = `record ${index}: ${"the quick brown fox jumps over the lazy dog ".repeat(3)}\n`;
      suite.folders.write(`project/data/file-${index}.txt`, line.repeat(40));
    }
    reads = 0;
    suite.fake.setResponder(readingModel);
    const result = await runAgent(
      ["-p", "read the data files", "--model", "claude-sonnet-4-6", "--output-format", "json"],
      {
        cwd: suite.folders.project,
        env: { HOME: suite.folders.home, ANTHROPIC_BASE_URL: suite.fake.url },
      },
    );
    expect(result.code).toBe(0);
    const object = JSON.parse(result.stdout);
    const calls = suite.fake.requests.filter((request) => request.operation !== "count_tokens");
    const summaries = calls.filter(isSummaryRequest);
    // The run compacted, on the summariser model.
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries.every((request) => modelOf(request) === "claude-haiku-4-5")).toBe(true);
    expect(object.total_cost_usd).toBeCloseTo(priced(calls), 6);
    // Without the summaries the total would be another number: the assertion above tells them apart.
    expect(priced(calls.filter((request) => !isSummaryRequest(request)))).not.toBeCloseTo(
      object.total_cost_usd,
      6,
    );
    // modelUsage: each model's calls summed and priced (the summaries', and any notes or extraction, on Haiku).
    const onModel = (model: string) => calls.filter((request) => modelOf(request) === model);
    expect(object.modelUsage).toEqual({
      "claude-sonnet-4-6": summed(onModel("claude-sonnet-4-6")),
      "claude-haiku-4-5": summed(onModel("claude-haiku-4-5")),
    });
  });
});
