// The corpus texts whose token counts are known: from real API responses (the usage they report) and from the
// public reference tokenizers (counted once by bench/reference-counts.ts and stored beside this file). Only
// ids and counts are stored in the repository; the texts are read from the corpus in place.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { Message } from "@unforget/core";
import { importSessionText } from "@unforget/importers";
import { evaluationCorpus, loadCorpusFile } from "@unforget/testing/corpus";
import { chunkText, loadTextFiles } from "../../bench/corpus.ts";
import { messageParts } from "../../bench/message-parts.ts";

/** A text and the token count a model's API reported for it. */
export interface UsageSample {
  /** Corpus file and where in it the text is. */
  id: string;
  model: string;
  /** The parts of the text, each counted on its own by the estimator. */
  parts: string[];
  /** What the API counted. */
  tokens: number;
}

/** A text of the corpus for the reference tokenizers. */
export interface TextSample {
  /** Corpus file (and run, for an evaluation file holding several) the sample is from. */
  group: string;
  /** The chunk's or the message's index in it. */
  index: number;
  /** The class of text: the corpus/text sub-folder (prose-en, code, json, logs, email, cjk) or "session". */
  kind: string;
  parts: string[];
  /** The imported message, for session messages. */
  message?: Message;
}

type Json = Record<string, unknown>;

const record = (value: unknown): Json => (typeof value === "object" && value !== null ? (value as Json) : {});

/** A block's text as the model wrote it: text, or the summary of a compaction block. */
function blockText(block: Json): string | undefined {
  if (block.type === "text" && typeof block.text === "string") return block.text;
  if (block.type === "compaction" && typeof block.content === "string") return block.content;
  return undefined;
}

/**
 * The output blocks of an Anthropic Messages response, from its JSON or from its SSE chunk dump (one event per
 * line), with the response's model and usage.
 */
function anthropicResponse(text: string, streamed: boolean): { model: string; blocks: Json[]; usage: Json } {
  if (!streamed) {
    const message = record(JSON.parse(text));
    return {
      model: String(message.model),
      blocks: (message.content as Json[]) ?? [],
      usage: record(message.usage),
    };
  }
  let model = "";
  let usage: Json = {};
  const blocks: Json[] = [];
  for (const line of text.split("\n")) {
    if (line.trim().length === 0) continue;
    const event = record(JSON.parse(line));
    if (event.type === "message_start") model = String(record(event.message).model);
    if (event.type === "content_block_start") {
      const block = { ...record(event.content_block) };
      if (block.type === "compaction") block.content ??= "";
      blocks[Number(event.index)] = block;
    }
    if (event.type === "content_block_delta") {
      const block = blocks[Number(event.index)]!;
      const delta = record(event.delta);
      if (typeof delta.text === "string") block.text = `${block.text ?? ""}${delta.text}`;
      if (typeof delta.content === "string") block.content = `${block.content ?? ""}${delta.content}`;
      if (typeof delta.thinking === "string") block.thinking = `${block.thinking ?? ""}${delta.thinking}`;
    }
    if (event.type === "message_delta") usage = record(event.usage);
  }
  return { model, blocks, usage };
}

/**
 * Texts a Claude model wrote, with the output tokens its API reported for them: each iteration of a response
 * (a server-side compaction, then the message) counts the blocks of its kind. Only iterations whose output is
 * nothing but text are taken (thinking is billed in full but may be returned summarised; a tool call's framing
 * is not in its JSON).
 */
export function claudeUsageSamples(): UsageSample[] {
  const folder = join(evaluationCorpus().dir, "api-fixtures");
  const samples: UsageSample[] = [];
  for (const name of readdirSync(folder).sort()) {
    if (!name.startsWith("anthropic-")) continue;
    const streamed = name.endsWith(".chunks.txt");
    if (!streamed && !name.endsWith(".json")) continue;
    const response = anthropicResponse(loadCorpusFile(join(folder, name)), streamed);
    const iterations = Array.isArray(response.usage.iterations)
      ? (response.usage.iterations as Json[])
      : [{ type: "message", output_tokens: response.usage.output_tokens }];
    for (const iteration of iterations) {
      const kind = iteration.type === "compaction" ? "compaction" : "message";
      const blocks = response.blocks.filter((block) =>
        kind === "compaction" ? block.type === "compaction" : block.type !== "compaction",
      );
      const parts = blocks.map(blockText);
      if (blocks.length === 0 || parts.some((part) => part === undefined)) continue;
      samples.push({
        id: `api-fixtures/${name}#${kind}`,
        model: response.model,
        parts: parts as string[],
        tokens: Number(iteration.output_tokens),
      });
    }
  }
  return samples;
}

/** Rounds smaller than this are left out: OpenHands' own framing (~30–40 tokens a round) would be over 6 % of them. */
export const OPEN_HANDS_MIN_ROUND_TOKENS = 600;

/**
 * Rounds that OpenHands evaluation runs added to a model's prompt: the prompt tokens the API reported for the
 * next call less those of this one, against what the round added (the model's text, its tool calls' names and
 * arguments, the observations). OpenHands frames each round with a few dozen tokens the corpus does not hold
 * (role headers, the exit-code and working-directory lines), so only rounds of at least `minTokens` are taken.
 */
export function openHandsRoundSamples(minTokens = OPEN_HANDS_MIN_ROUND_TOKENS): UsageSample[] {
  const samples: UsageSample[] = [];
  for (const session of evaluationCorpus().sessions) {
    if (session.format !== "openhands-evaluation") continue;
    for (const line of loadCorpusFile(session.path).split("\n")) {
      if (line.trim().length === 0) continue;
      const run = record(JSON.parse(line));
      const usages = (record(run.metrics).token_usages as Json[] | undefined) ?? [];
      const history = (run.history as Json[] | undefined) ?? [];
      const firstEvent = new Map<string, number>();
      history.forEach((event, index) => {
        const id = record(record(event.tool_call_metadata).model_response).id;
        if (typeof id === "string" && event.action !== undefined && !firstEvent.has(id))
          firstEvent.set(id, index);
      });
      for (let call = 0; call + 1 < usages.length; call++) {
        const from = firstEvent.get(String(usages[call]!.response_id));
        const to = firstEvent.get(String(usages[call + 1]!.response_id));
        const tokens = Number(usages[call + 1]!.prompt_tokens) - Number(usages[call]!.prompt_tokens);
        if (from === undefined || to === undefined || to <= from || !(tokens >= minTokens)) continue;
        const response = record(record(history[from]!.tool_call_metadata).model_response);
        const message = record(record((response.choices as Json[])[0]).message);
        const parts: string[] = [];
        if (typeof message.content === "string") parts.push(message.content);
        for (const toolCall of (message.tool_calls as Json[] | undefined) ?? []) {
          const fn = record(toolCall.function);
          parts.push(String(fn.name), String(fn.arguments));
        }
        for (const event of history.slice(from, to)) {
          if (event.observation !== undefined && typeof event.content === "string") parts.push(event.content);
        }
        samples.push({
          id: `${session.relativePath}#${String(run.instance_id)}:${String(usages[call]!.response_id)}`,
          model: String(usages[call]!.model),
          parts: parts.filter((part) => part.length > 0),
          tokens,
        });
      }
    }
  }
  return samples;
}

/** Characters below which a chunk or a message is not a sample (a few tokens of framing would dominate it). */
const MIN_SAMPLE_CHARS = 200;

/**
 * Every text of corpus/text (licence files left out) cut at line boundaries into chunks of about 1,200
 * characters, and every corpus session message of at least 200 characters (the parts the estimator counts:
 * text, tool name and JSON input, tool results, thinking), sessions imported with our importers.
 */
export function tokenizerSamples(): TextSample[] {
  const samples: TextSample[] = [];
  // The texts as the fit reads them (licence files left out), cut as its evaluation chunks are.
  for (const file of loadTextFiles()) {
    chunkText(file.text, 1_200).forEach((chunk, index) => {
      if (chunk.length >= MIN_SAMPLE_CHARS)
        samples.push({ group: file.source, index, kind: file.kind, parts: [chunk] });
    });
  }
  for (const session of evaluationCorpus().sessions) {
    const imported = importSessionText(loadCorpusFile(session.path));
    const runs =
      imported.instances.length === 0
        ? [{ label: session.relativePath, messages: imported.messages }]
        : imported.instances.map((instance) => ({
            label: `${session.relativePath}#${instance.line}`,
            messages: instance.result.messages,
          }));
    for (const run of runs) {
      run.messages.forEach((message, index) => {
        const parts = messageParts(message);
        if (parts.reduce((total, part) => total + part.length, 0) < MIN_SAMPLE_CHARS) return;
        samples.push({ group: run.label, index, kind: "session", parts, message });
      });
    }
  }
  return samples;
}
