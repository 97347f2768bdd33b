// `pnpm bench:degenerate` (tsx bench/degenerate-shapes.ts): per-turn cost of the context count on degenerate
// conversation shapes, next to an ordinary one, and estimator throughput on huge runs of one character. A
// linear implementation keeps the per-turn cost flat as the shape grows; speed lives here, never in tests.
// `--source <dir>` loads token-count-session.ts / token-count-with-estimation.ts from another copy of src/
// (to compare with an earlier version in the same conditions).
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { createMessage, createUsage, type Message } from "@unforget/core";
import { estimateTextTokens } from "../src/estimate-text-tokens.ts";
import type { TokenCountSession } from "../src/token-count-session.ts";
import { throughput } from "./throughput.ts";

const sourceFlag = process.argv.indexOf("--source");
const source =
  sourceFlag > 0 ? resolve(process.argv[sourceFlag + 1]!) : resolve(import.meta.dirname, "../src");
const { createTokenCountSession } = (await import(
  pathToFileURL(`${source}/token-count-session.ts`).href
)) as {
  createTokenCountSession: () => TokenCountSession;
};
const { tokenCountWithEstimation } = (await import(
  pathToFileURL(`${source}/token-count-with-estimation.ts`).href
)) as { tokenCountWithEstimation: (messages: Message[]) => number };

const usage = createUsage({ inputTokens: 50_000, outputTokens: 100 });
const TURNS = 1_000;

/** A pair of messages for turn `index` of a shape. */
type Shape = (index: number) => [Message, Message];

const ordinary: Shape = (index) => [
  createMessage(
    "assistant",
    [{ type: "tool_use", id: `t${index}`, name: "Read", input: { path: `f${index}` } }],
    {
      responseId: `resp_${index}`,
      usage,
    },
  ),
  createMessage("user", [
    { type: "tool_result", tool_use_id: `t${index}`, content: "export const x = 1;\n" },
  ]),
];
// One response fanned out into thousands of tool calls; every split message carries the response's usage.
const oneResponse: Shape = (index) => {
  const [call, result] = ordinary(index);
  return [{ ...call, responseId: "resp_same" }, result];
};
// No usage anywhere (an imported or heuristic-only session): nothing to anchor on.
const noUsage: Shape = (index) => [
  createMessage("user", `step ${index}: keep going`),
  createMessage("user", [{ type: "text", text: `note ${index}` }]),
];

function perTurn(shape: Shape, size: number, count: (messages: Message[]) => void): number {
  const messages: Message[] = [];
  for (let index = 0; index < size / 2; index++) messages.push(...shape(index));
  count(messages);
  const times: number[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    messages.push(...shape(size / 2 + turn));
    const start = performance.now();
    count(messages);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1]! * 1_000;
}

console.log(`Source: ${source}`);
console.log(
  "| shape | messages | session.count per turn (median) | tokenCountWithEstimation per turn (median) |",
);
console.log("| --- | --- | --- | --- |");
for (const [label, shape] of [
  ["ordinary (one response per turn)", ordinary],
  ["one response split into every tool call", oneResponse],
  ["no usage anywhere", noUsage],
] as const) {
  for (const size of [2_000, 20_000]) {
    // A first pass warms the JIT up on the same shape; the second is reported.
    perTurn(shape, size, (messages) => createTokenCountSession().count(messages));
    const session = createTokenCountSession();
    const incremental = perTurn(shape, size, (messages) => session.count(messages));
    const stateless = perTurn(shape, size, (messages) => tokenCountWithEstimation(messages));
    console.log(
      `| ${label} | ${size.toLocaleString("en-US")} | ${incremental.toFixed(1)} µs | ${stateless.toFixed(1)} µs |`,
    );
  }
}

console.log();
console.log("| text (4 MB) | estimateTextTokens MB/s |");
console.log("| --- | --- |");
const size = 4_000_000;
for (const [label, text] of [
  ["one letter repeated", "a".repeat(size)],
  ["one digit repeated", "7".repeat(size)],
  ["spaces", " ".repeat(size)],
  ["line breaks", "\n".repeat(size)],
  ["one CJK character", "中".repeat(size / 3)],
  ["lone surrogates", "\uD800".repeat(size / 3)],
  ["a 40-character line repeated", "const answer = 42; // the usual reply\n".repeat(size / 40)],
] as const) {
  const bytes = Buffer.byteLength(text, "utf8");
  console.log(`| ${label} | ${throughput(() => estimateTextTokens(text), bytes, 1_500).toFixed(0)} |`);
}
