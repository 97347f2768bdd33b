// What the provider layer costs on top of the raw @google-cloud/vertexai client, both talking to the same
// in-process HTTPS Vertex fake, plus request translation compared with the JSON serialisation the SDK does
// anyway. Run: `npm run bench` in packages/providers/vertex. Results go to BENCHMARKS.md, never to tests.
import { spawnSync } from "node:child_process";
import { cpus } from "node:os";
import { type GenerateContentRequest, VertexAI } from "@google-cloud/vertexai";
import type { ModelRequest, RequestMessage } from "@unforget/core";
import { startVertexFake, writeVertexFakeCaCertificate } from "@unforget/testing/fakes";
import { Bench } from "tinybench";
import { convertToVertexRequest } from "../src/convert-to-vertex-request.ts";
import { createVertexProvider } from "../src/index.ts";
import { digestRequestBody } from "../src/vertex-stream.ts";

// The SDK only speaks https; Node reads the extra CA only at start-up, so restart once with it.
const caBundle = writeVertexFakeCaCertificate();
if (process.env.NODE_EXTRA_CA_CERTS !== caBundle) {
  const env = { ...process.env, NODE_EXTRA_CA_CERTS: caBundle };
  const child = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env,
  });
  process.exit(child.status ?? 1);
}

const silenced = console.warn;
console.warn = (...args: unknown[]) => {
  if (!String(args[0]).includes("The VertexAI class and all its dependencies are deprecated"))
    silenced(...args);
};

const fake = await startVertexFake({
  defaultReply: { kind: "reply", text: "A short answer from the fake." },
});
const small: ModelRequest = {
  model: "gemini-2.5-pro",
  maxTokens: 256,
  messages: [{ role: "user", content: [{ type: "text", text: "Hello there" }] }],
};
const provider = createVertexProvider({
  project: "bench",
  location: "us-central1",
  baseURL: fake.url,
  accessToken: "fake-token",
  maxRetries: 0,
});
const vertex = new VertexAI({
  project: "bench",
  location: "us-central1",
  apiEndpoint: fake.endpoint,
  googleAuthOptions: { authClient: { getAccessToken: async () => ({ token: "fake-token" }) } as never },
});
const rawModel = vertex.getGenerativeModel({ model: small.model });
const rawBody = convertToVertexRequest(small) as unknown as GenerateContentRequest;

// A 200-turn conversation with 2 KB tool results (about 400 KB), for the translation cost.
const long: RequestMessage[] = [{ role: "user", content: [{ type: "text", text: "Start the task." }] }];
for (let turn = 0; turn < 100; turn++) {
  long.push({
    role: "assistant",
    content: [
      { type: "text", text: `Step ${turn}: reading the file.` },
      { type: "tool_use", id: `toolu_${turn}`, name: "read_file", input: { path: `src/file-${turn}.ts` } },
    ],
  });
  long.push({
    role: "user",
    content: [{ type: "tool_result", tool_use_id: `toolu_${turn}`, content: "x".repeat(2048) }],
  });
}
const longRequest: ModelRequest = { ...small, messages: long };

const bench = new Bench({ time: 1500, warmupTime: 500 });
bench
  .add("baseline: raw SDK generateContent (pre-translated body)", async () => {
    await rawModel.generateContent(rawBody);
  })
  .add("provider.createMessage (same request)", async () => {
    await provider.createMessage(small);
  })
  .add("baseline: raw SDK generateContentStream, iterated", async () => {
    const result = await rawModel.generateContentStream(rawBody);
    for await (const _chunk of result.stream) {
      // drain
    }
    await result.response;
  })
  .add("provider.streamMessage().finalResponse()", async () => {
    await provider.streamMessage(small).finalResponse();
  })
  .add("baseline: JSON.stringify of a 200-turn request (400 KB of tool results)", () => {
    JSON.stringify(longRequest);
  })
  .add("convertToVertexRequest of the same request", () => {
    convertToVertexRequest(longRequest);
  })
  .add("convertToVertexRequest + request digest (call-id seed) of the same request", () => {
    digestRequestBody(convertToVertexRequest(longRequest));
  });

await bench.run();
await fake.close();

console.log(`nproc ${cpus().length}, node ${process.version}, cpu ${cpus()[0]?.model ?? "unknown"}`);
const rows = bench.tasks.map((task) => {
  const result = task.result as { latency?: { mean?: number } } | undefined;
  if ((task.result as { error?: unknown } | undefined)?.error)
    console.error(task.name, (task.result as { error?: unknown }).error);
  return { name: task.name, meanMs: result?.latency?.mean ?? Number.NaN };
});
const pairs: [number, number][] = [
  [0, 1],
  [2, 3],
  [4, 5],
  [4, 6],
];
for (const [baseline, measured] of pairs) {
  const base = rows[baseline];
  const row = rows[measured];
  if (!base || !row) continue;
  if (measured !== 6) console.log(`| ${base.name} | ${format(base.meanMs)} | 1.00× |`);
  console.log(`| ${row.name} | ${format(row.meanMs)} | ${(row.meanMs / base.meanMs).toFixed(2)}× |`);
}

function format(ms: number): string {
  return ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(1)} µs`;
}
