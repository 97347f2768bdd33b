// Measures what the provider adds on top of the bare SDK, against the h2c fake on 127.0.0.1:
// - createMessage vs a raw ConverseCommand carrying the same (pre-translated) body;
// - streamMessage vs a raw ConverseStreamCommand iterated to the end;
// - request translation of a long conversation vs JSON.stringify of the same messages.
// Run: npx tsx bench/provider.bench.ts (after building @unforget/testing and this package's deps).
import { cpus } from "node:os";
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
} from "@aws-sdk/client-bedrock-runtime";
import type { ModelRequest, RequestMessage } from "@unforget/core";
import { startBedrockFake } from "@unforget/testing/fakes";
import { Bench } from "tinybench";
import { convertToBedrockRequest } from "../src/convert-to-bedrock-request.ts";
import { createBedrockProvider } from "../src/index.ts";

const MODEL = "anthropic.claude-sonnet-4-6";

function conversation(turns: number): RequestMessage[] {
  const messages: RequestMessage[] = [];
  for (let turn = 0; turn < turns; turn++) {
    messages.push({
      role: "user",
      content: [{ type: "text", text: `Question ${turn}: ${"lorem ipsum ".repeat(40)}` }],
    });
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: "Checking." },
        {
          type: "tool_use",
          id: `tooluse_${turn}`,
          name: "read_file",
          input: { path: `src/file-${turn}.ts` },
        },
      ],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `tooluse_${turn}`, content: "x".repeat(2000) }],
    });
  }
  messages.push({ role: "user", content: [{ type: "text", text: "Summarise." }] });
  return messages;
}

const fake = await startBedrockFake({
  defaultReply: { kind: "reply", text: "A short answer of a few words." },
});
const small: ModelRequest = {
  model: MODEL,
  maxTokens: 256,
  tools: [{ name: "read_file", inputSchema: { type: "object" } }],
  messages: conversation(2),
};
const large: ModelRequest = { ...small, messages: conversation(200) };
const provider = createBedrockProvider({
  region: fake.region,
  baseURL: fake.url,
  env: {},
  credentials: fake.credentials,
  maxRetries: 0,
});
const client = new BedrockRuntimeClient({
  region: fake.region,
  endpoint: fake.url,
  authSchemePreference: ["sigv4"],
  credentials: fake.credentials,
  maxAttempts: 1,
});
const smallInput = convertToBedrockRequest(small);

const bench = new Bench({ time: 1500, warmup: true });
bench
  .add("baseline: raw SDK ConverseCommand", async () => {
    await client.send(new ConverseCommand({ modelId: MODEL, ...smallInput } as never));
  })
  .add("provider.createMessage", async () => {
    await provider.createMessage(small);
  })
  .add("baseline: raw SDK ConverseStreamCommand, iterated", async () => {
    const output = await client.send(new ConverseStreamCommand({ modelId: MODEL, ...smallInput } as never));
    for await (const _event of output.stream ?? []) {
      // drain
    }
  })
  .add("provider.streamMessage().finalResponse()", async () => {
    await provider.streamMessage(small).finalResponse();
  })
  .add("baseline: JSON.stringify(600 messages)", () => {
    JSON.stringify(large.messages);
  })
  .add("convertToBedrockRequest(600 messages)", () => {
    convertToBedrockRequest(large);
  });
await bench.run();
await fake.close();
client.destroy();

interface Latency {
  mean: number;
  p99?: number;
  samplesCount: number;
}
const latencyOf = (name: string): Latency | undefined => {
  const result = bench.tasks.find((task) => task.name === name)?.result as { latency?: Latency } | undefined;
  return result?.latency;
};
const mean = (name: string) => latencyOf(name)?.mean ?? Number.NaN;
const rows = bench.tasks.map((task) => ({
  task: task.name,
  "mean (ms)": Number(mean(task.name).toFixed(4)),
  "p99 (ms)": Number((latencyOf(task.name)?.p99 ?? Number.NaN).toFixed(4)),
  samples: latencyOf(task.name)?.samplesCount ?? 0,
}));
console.table(rows);
console.log(`machine: ${cpus().length} cpus, ${cpus()[0]?.model ?? "unknown"}, node ${process.version}`);
console.log(
  `createMessage / raw SDK: ${(mean("provider.createMessage") / mean("baseline: raw SDK ConverseCommand")).toFixed(2)}x`,
);
console.log(
  `streamMessage / raw SDK stream: ${(mean("provider.streamMessage().finalResponse()") / mean("baseline: raw SDK ConverseStreamCommand, iterated")).toFixed(2)}x`,
);
console.log(
  `convertToBedrockRequest / JSON.stringify: ${(mean("convertToBedrockRequest(600 messages)") / mean("baseline: JSON.stringify(600 messages)")).toFixed(2)}x`,
);
