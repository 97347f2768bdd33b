// `pnpm bench`: accuracy of the estimator against the reference tokenizers (beside `length / 4` and two
// public rules), throughput against js-tiktoken, and the per-turn cost of anchored counting. Prints a
// Markdown section for BENCHMARKS.md. Not part of `test`.
import { cpus } from "node:os";
import { createMessage, createUsage, type Message } from "@unforget/core";
import { estimateMessagesTokens, estimateMessageTokens } from "../src/estimate-message-tokens.ts";
import { estimateTextTokens } from "../src/estimate-text-tokens.ts";
import type { EstimatorProfile } from "../src/estimator-coefficients.ts";
import { createTokenCountSession } from "../src/token-count-session.ts";
import { tokenCountWithEstimation } from "../src/token-count-with-estimation.ts";
import { chunkText, loadSessions, loadTextFiles } from "./corpus.ts";
import { messageParts } from "./message-parts.ts";
import { characterClassRule, langChainApproximately, lengthOverFour } from "./public-rules.ts";
import { loadReferenceTokenizers } from "./reference-tokenizers.ts";

const lines: string[] = [];
const print = (line = "") => {
  lines.push(line);
  console.error(line);
};

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}
const percent = (value: number) => `${value >= 0 ? "+" : ""}${(value * 100).toFixed(1)}%`;
const absolutePercent = (value: number) => `${(value * 100).toFixed(1)}%`;

const tokenizers = loadReferenceTokenizers();
const textFiles = loadTextFiles();
const sessions = loadSessions();

interface Estimator {
  label: string;
  text(text: string, reference: EstimatorProfile): number;
  message(message: Message, reference: EstimatorProfile): number;
}

const noOverhead = { messageOverheadTokens: 0 };
const estimators: Estimator[] = [
  {
    label: "ours, profile fitted to that reference",
    text: (text, reference) => estimateTextTokens(text, reference),
    message: (message, reference) => estimateMessageTokens(message, { ...noOverhead, profile: reference }),
  },
  {
    label: 'ours, default profile ("claude")',
    text: (text) => estimateTextTokens(text),
    message: (message) => estimateMessageTokens(message, noOverhead),
  },
  {
    label: "length / 4",
    text: lengthOverFour,
    message: (message) => messageParts(message).reduce((total, part) => total + lengthOverFour(part), 0),
  },
  {
    label: "character-class rule",
    text: characterClassRule,
    message: (message) => messageParts(message).reduce((total, part) => total + characterClassRule(part), 0),
  },
  {
    label: "LangChain countTokensApproximately",
    text: lengthOverFour,
    message: (message) => langChainApproximately(message),
  },
];

// ---- accuracy ----------------------------------------------------------------------------------------
const chunks = textFiles
  .flatMap((file) => chunkText(file.text, 1_200))
  .filter((chunk) => chunk.length >= 200);
const sessionMessages = sessions.flatMap((session) => session.messages);
const longMessages = sessionMessages.filter((message) => messageParts(message).join("").length >= 200);

const referenceOf = (count: (text: string) => number, message: Message) =>
  messageParts(message).reduce((total, part) => total + count(part), 0);

const textReference = tokenizers.map((tokenizer) => chunks.map((chunk) => tokenizer.count(chunk)));
const fileReference = tokenizers.map((tokenizer) => textFiles.map((file) => tokenizer.count(file.text)));
const messageReference = tokenizers.map((tokenizer) =>
  longMessages.map((message) => referenceOf(tokenizer.count, message)),
);
const sessionReference = tokenizers.map((tokenizer) =>
  sessions.map((session) =>
    session.messages.reduce((total, message) => total + referenceOf(tokenizer.count, message), 0),
  ),
);

print("### Accuracy");
print();
print(
  `Samples: ${chunks.length} chunks (~1,200 characters, ≥ 200) of the ${textFiles.length} files in corpus/text; ` +
    `${longMessages.length} session messages of ≥ 200 characters from ${sessions.length} corpus sessions ` +
    `(SWE-agent, mini-swe-agent, OpenHands, Claude Code fixtures); totals over the ${textFiles.length} whole text ` +
    `files and the ${sessions.length} whole conversations. Everything counts message *content* only (text, ` +
    "tool name + JSON input, tool results, thinking): no per-message overhead, no padding. Errors are " +
    "(estimate − reference) / reference. The fitted profiles were fitted on this same corpus (in-sample).",
);
for (const [target, tokenizer] of tokenizers.entries()) {
  print();
  print(`#### Reference: ${tokenizer.label}`);
  print();
  print(
    "| estimator | text chunks \\|err\\| p50 | p95 | messages \\|err\\| p50 | p95 | text files: worst signed total | conversations: worst signed total | median signed total |",
  );
  print("| --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const estimator of estimators) {
    const textErrors = chunks.map((chunk, index) => {
      const reference = textReference[target]![index]!;
      return Math.abs(estimator.text(chunk, tokenizer.name) - reference) / reference;
    });
    const messageErrors = longMessages.map((message, index) => {
      const reference = messageReference[target]![index]!;
      return Math.abs(estimator.message(message, tokenizer.name) - reference) / reference;
    });
    const fileTotals = textFiles.map((file, index) => {
      const reference = fileReference[target]![index]!;
      return (estimator.text(file.text, tokenizer.name) - reference) / reference;
    });
    const sessionTotals = sessions.map((session, index) => {
      const reference = sessionReference[target]![index]!;
      const estimate = session.messages.reduce(
        (total, message) => total + estimator.message(message, tokenizer.name),
        0,
      );
      return (estimate - reference) / reference;
    });
    print(
      `| ${estimator.label} | ${absolutePercent(quantile(textErrors, 0.5))} | ${absolutePercent(quantile(textErrors, 0.95))} | ` +
        `${absolutePercent(quantile(messageErrors, 0.5))} | ${absolutePercent(quantile(messageErrors, 0.95))} | ` +
        `${percent(Math.min(...fileTotals))} | ${percent(Math.min(...sessionTotals))} | ${percent(quantile(sessionTotals, 0.5))} |`,
    );
  }
}

// ---- speed -------------------------------------------------------------------------------------------
function throughput(run: () => void, bytes: number, minimumMs: number): number {
  run();
  const rates: number[] = [];
  const deadline = performance.now() + minimumMs;
  do {
    const start = performance.now();
    run();
    rates.push(bytes / 1e6 / ((performance.now() - start) / 1_000));
  } while (performance.now() < deadline || rates.length < 3);
  return quantile(rates, 0.5);
}

const allText = textFiles.map((file) => file.text).join("\n");
const bytes = Buffer.byteLength(allText, "utf8");
const o200k = tokenizers.find((tokenizer) => tokenizer.name === "o200k")!;
const claude = tokenizers.find((tokenizer) => tokenizer.name === "claude")!;
const ours = throughput(() => estimateTextTokens(allText), bytes, 1_500);
const oursChunks = throughput(
  () => {
    for (const chunk of chunks) estimateTextTokens(chunk);
  },
  chunks.reduce((total, chunk) => total + Buffer.byteLength(chunk, "utf8"), 0),
  1_500,
);
const tiktoken = throughput(() => o200k.count(allText), bytes, 3_000);
const claudeTokenizer = throughput(() => claude.count(allText), bytes, 3_000);
const quarter = throughput(() => lengthOverFour(allText), bytes, 500);

print();
print("### Speed");
print();
print(`All corpus text concatenated (${(bytes / 1e6).toFixed(2)} MB UTF-8), median of repeated runs.`);
print();
print("| counter | MB/s | vs js-tiktoken o200k |");
print("| --- | --- | --- |");
print(`| ours, one call on the whole text | ${ours.toFixed(0)} | ${(ours / tiktoken).toFixed(0)}× |`);
print(
  `| ours, ${chunks.length} chunk calls | ${oursChunks.toFixed(0)} | ${(oursChunks / tiktoken).toFixed(0)}× |`,
);
print(`| js-tiktoken o200k_base (baseline) | ${tiktoken.toFixed(2)} | 1× |`);
print(
  `| @anthropic-ai/tokenizer (tiktoken WASM) | ${claudeTokenizer.toFixed(2)} | ${(claudeTokenizer / tiktoken).toFixed(1)}× |`,
);
print(`| length / 4 | ${quarter >= 1e6 ? "≫ 10⁶" : quarter.toFixed(0)} | (reads only the length) |`);

// ---- per-turn cost -------------------------------------------------------------------------------------
function buildConversation(targetTokens: number, extraMessages: number): Message[] {
  const source = sessionMessages;
  const messages: Message[] = [];
  let total = 0;
  let response = 0;
  let extra = 0;
  for (let index = 0; total < targetTokens || extra++ < extraMessages; index++) {
    const original = source[index % source.length]!;
    const message =
      original.role === "assistant"
        ? createMessage("assistant", original.content, {
            responseId: `resp_${response++}`,
            usage: createUsage({ inputTokens: total, outputTokens: 100 }),
          })
        : createMessage("user", original.content);
    total += estimateMessageTokens(message);
    messages.push(message);
  }
  return messages;
}

function perTurn(size: number): {
  incremental: number;
  stateless: number;
  fullEstimate: number;
  messages: number;
} {
  const turns = 300;
  const conversation = buildConversation(size, 2 * turns);
  const base = conversation.slice(0, conversation.length - 2 * turns);
  const baseMessages = base.length;
  const appended = conversation.slice(base.length);
  const measure = (count: (messages: Message[]) => void) => {
    const messages = [...base];
    count(messages);
    let elapsed = 0;
    for (let turn = 0; turn < turns; turn++) {
      messages.push(appended[2 * turn]!, appended[2 * turn + 1]!);
      const start = performance.now();
      count(messages);
      elapsed += performance.now() - start;
    }
    return elapsed / turns;
  };
  const session = createTokenCountSession();
  const incremental = measure((messages) => session.count(messages));
  const stateless = measure((messages) => tokenCountWithEstimation(messages));
  const fullStart = performance.now();
  for (let run = 0; run < 5; run++) estimateMessagesTokens(conversation);
  const fullEstimate = (performance.now() - fullStart) / 5;
  return { incremental, stateless, fullEstimate, messages: baseMessages };
}

print();
print("### Per-turn cost of the context count");
print();
print(
  "Conversations built by cycling the corpus session messages until the estimate reaches the size, every " +
    "assistant message carrying usage; then 300 turns each append a user message and an assistant message and " +
    "count (mean per turn). The baseline re-estimates the whole conversation once.",
);
print();
print(
  "| conversation | messages | createTokenCountSession().count | tokenCountWithEstimation (stateless walk-back) | estimateMessagesTokens of everything (baseline) | baseline / incremental |",
);
print("| --- | --- | --- | --- | --- | --- |");
for (const [label, size] of [
  ["200K tokens", 200_000],
  ["1M tokens", 1_000_000],
] as const) {
  const result = perTurn(size);
  print(
    `| ${label} | ${result.messages} | ${(result.incremental * 1_000).toFixed(1)} µs | ${(result.stateless * 1_000).toFixed(1)} µs | ` +
      `${result.fullEstimate.toFixed(2)} ms | ${(result.fullEstimate / result.incremental).toFixed(0)}× |`,
  );
}

print();
print(
  `Machine: ${cpus().length} CPUs visible (\`nproc\` ${process.env.NPROC ?? "n/a"}), ${cpus()[0]?.model ?? "unknown CPU"}, Node ${process.version}; shared with other jobs, so absolute speeds vary between runs — the ratios are measured in the same run.`,
);
console.log(lines.join("\n"));
