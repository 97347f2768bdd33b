// What the provider layer costs on top of the raw SDK, compared in the same run against the same local fake:
// request translation, error/usage normalisation, stream translation and accumulation.
import { cpus, loadavg } from "node:os";
import Anthropic from "@anthropic-ai/sdk";
import type { ModelRequest } from "@unforget/core";
import { startAnthropicFake } from "@unforget/testing/fakes";
import { Bench } from "tinybench";
import { convertToAnthropicRequest } from "../src/convert-to-anthropic-request.ts";
import { createAnthropicProvider } from "../src/index.ts";

const fake = await startAnthropicFake({
  defaultReply: {
    kind: "reply",
    text: "The weather in Paris is sunny and 21C. ".repeat(20),
    toolCalls: [{ id: "toolu_1", name: "get_weather", input: { city: "Paris" } }],
  },
});
const client = new Anthropic({ apiKey: "sk-ant-bench", baseURL: fake.url, maxRetries: 0 });
const provider = createAnthropicProvider({ apiKey: "sk-ant-bench", baseURL: fake.url });

/** A long agent conversation: `turns` tool round trips with 2 KB results. */
function conversation(turns: number): ModelRequest {
  const messages: ModelRequest["messages"] = [
    { role: "user", content: [{ type: "text", text: "Fix the bug." }] },
  ];
  for (let index = 0; index < turns; index++) {
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: `Reading file ${index}.` },
        {
          type: "tool_use",
          id: `toolu_${index}`,
          name: "read_file",
          input: { path: `src/file-${index}.ts` },
        },
      ],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${index}`, content: "x".repeat(2048) }],
    });
  }
  return { model: "claude-sonnet-4-6", maxTokens: 1024, system: "You are a coding agent.", messages };
}

const small = conversation(2);
const large = conversation(200);
const smallWire = convertToAnthropicRequest(small).body;

const bench = new Bench({ time: 1500, warmup: true, warmupTime: 500 });
bench
  .add("baseline: raw SDK messages.create (small request)", async () => {
    await client.messages.create(smallWire as never);
  })
  .add("provider.createMessage (small request)", async () => {
    await provider.createMessage(small);
  })
  .add("baseline: raw SDK stream + finalMessage (small request)", async () => {
    await client.messages.stream(smallWire as never).finalMessage();
  })
  .add("provider.streamMessage().finalResponse() (small request)", async () => {
    await provider.streamMessage(small).finalResponse();
  })
  .add("baseline: JSON.stringify of the 200-turn request", () => {
    JSON.stringify(large);
  })
  .add("convertToAnthropicRequest of the 200-turn request", () => {
    convertToAnthropicRequest(large);
  });

await bench.run();
await fake.close();

const rows = bench.tasks.map((task) => {
  const result = task.result as { latency?: { mean?: number } } | undefined;
  return { name: task.name, meanMs: result?.latency?.mean ?? Number.NaN };
});
const baselineOf = (name: string) => {
  if (name.startsWith("provider.createMessage")) return rows[0];
  if (name.startsWith("provider.streamMessage")) return rows[2];
  if (name.startsWith("convertToAnthropicRequest")) return rows[4];
  return rows.find((row) => row.name === name);
};
console.log(
  `machine: nproc ${cpus().length}, node ${process.version}, cpu "${cpus()[0]?.model}", load ${loadavg()[0]?.toFixed(1)}`,
);
console.log("| case | mean | vs. baseline in the same run |\n| --- | ---: | ---: |");
for (const row of rows) {
  const baseline = baselineOf(row.name);
  const ratio = baseline ? row.meanMs / baseline.meanMs : Number.NaN;
  const mean = row.meanMs >= 1 ? `${row.meanMs.toFixed(2)} ms` : `${(row.meanMs * 1000).toFixed(1)} µs`;
  console.log(`| ${row.name} | ${mean} | ${ratio.toFixed(2)}× |`);
}
