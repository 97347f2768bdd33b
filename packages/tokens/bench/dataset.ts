// The fitting and evaluation data set: the corpus texts and the corpus sessions (listed by @unforget/testing,
// imported with @unforget/importers), turned into feature vectors and reference token counts once, with a group per
// source so that fits can be validated on sources they never saw.
import type { Message } from "@unforget/core";
import { importSessionText } from "@unforget/importers";
import { type CorpusSession, listCorpusSessions, loadCorpusFile } from "@unforget/testing/corpus";
import { collectTextFeatures, TEXT_FEATURE_COUNT } from "../src/text-features.ts";
import { chunkText, loadTextFiles } from "./corpus.ts";
import { messageParts } from "./message-parts.ts";
import type { ReferenceTokenizer } from "./reference-tokenizers.ts";

export interface Sample {
  /** Source group: a text file, or a session source (replays of the same SWE-agent task share one group). */
  group: string;
  /** Corpus sub-folder for texts (prose-en, code, cjk, …) or "session". */
  kind: string;
  /** Summed features of every part the estimator counts. */
  features: Float64Array;
  /** Reference token count per tokenizer (in `loadReferenceTokenizers` order), summed over the same parts. */
  counts: number[];
  /** Characters counted. */
  characters: number;
  /** The text, for texts and chunks (baselines estimate it directly). */
  text?: string;
}

export interface MessageSample extends Sample {
  message: Message;
}

export interface ConversationSample extends Sample {
  label: string;
  messages: MessageSample[];
}

export interface Dataset {
  tokenizers: ReferenceTokenizer[];
  /** Text chunks of ~300, ~1,200 and ~4,000 characters (fitting). */
  textChunks: Sample[];
  /** The ~1,200-character chunks of at least 200 characters (evaluation). */
  evaluationChunks: Sample[];
  /** Whole text files. */
  textFiles: Sample[];
  /** Every session message with countable content. */
  messages: MessageSample[];
  conversations: ConversationSample[];
}

function featuresOf(parts: readonly string[]): Float64Array {
  const features = new Float64Array(TEXT_FEATURE_COUNT);
  for (const part of parts) collectTextFeatures(part, features);
  return features;
}

function sampleOf(
  group: string,
  kind: string,
  parts: readonly string[],
  tokenizers: ReferenceTokenizer[],
): Sample {
  return {
    group,
    kind,
    features: featuresOf(parts),
    counts: tokenizers.map((tokenizer) => parts.reduce((total, part) => total + tokenizer.count(part), 0)),
    characters: parts.reduce((total, part) => total + part.length, 0),
  };
}

/** Replays of one SWE-agent task under different configurations are near-duplicates: group them. */
export function sessionGroup(relativePath: string): string {
  if (relativePath.startsWith("sweagent/")) {
    return `sweagent/${relativePath.slice(relativePath.lastIndexOf("/") + 1)}`;
  }
  return relativePath;
}

export function loadDataset(tokenizers: ReferenceTokenizer[]): Dataset {
  const textChunks: Sample[] = [];
  const evaluationChunks: Sample[] = [];
  const textFiles: Sample[] = [];
  for (const file of loadTextFiles()) {
    textFiles.push({ ...sampleOf(file.source, file.kind, [file.text], tokenizers), text: file.text });
    for (const size of [300, 1_200, 4_000]) {
      for (const chunk of chunkText(file.text, size)) {
        if (chunk.trim().length === 0) continue;
        const sample = { ...sampleOf(file.source, file.kind, [chunk], tokenizers), text: chunk };
        textChunks.push(sample);
        if (size === 1_200 && chunk.length >= 200) evaluationChunks.push(sample);
      }
    }
  }
  const messages: MessageSample[] = [];
  const conversations: ConversationSample[] = [];
  for (const session of listCorpusSessions()) {
    const group = sessionGroup(session.relativePath);
    for (const imported of importCorpusSession(session)) {
      const conversationMessages: MessageSample[] = [];
      for (const message of imported.result.messages) {
        const parts = messageParts(message);
        if (parts.length === 0) continue;
        conversationMessages.push({ ...sampleOf(group, "session", parts, tokenizers), message });
      }
      if (conversationMessages.length === 0) continue;
      messages.push(...conversationMessages);
      const features = new Float64Array(TEXT_FEATURE_COUNT);
      const counts = tokenizers.map(() => 0);
      let characters = 0;
      for (const message of conversationMessages) {
        for (let index = 0; index < TEXT_FEATURE_COUNT; index++) features[index]! += message.features[index]!;
        for (let target = 0; target < counts.length; target++) counts[target]! += message.counts[target]!;
        characters += message.characters;
      }
      conversations.push({
        group,
        kind: session.format,
        label: imported.label,
        features,
        counts,
        characters,
        messages: conversationMessages,
      });
    }
  }
  return { tokenizers, textChunks, evaluationChunks, textFiles, messages, conversations };
}

/** FNV-1a hash of a group name, for a deterministic split that does not depend on listing order. */
function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 0x01000193) >>> 0;
  }
  return value;
}

/** Fixed held-out split: about one group in four (by hash of its name) is the test split. */
export function isTestGroup(group: string): boolean {
  return hash(group) % 4 === 0;
}

/** Fold (0 … folds − 1) of a group for cross-validation inside the training split. */
export function foldOf(group: string, folds: number): number {
  return (hash(`fold:${group}`) >>> 3) % folds;
}

/** Imports a corpus session by content (one result per run of an evaluation output). */
function importCorpusSession(session: CorpusSession): { label: string; result: { messages: Message[] } }[] {
  const imported = importSessionText(loadCorpusFile(session.path));
  if (imported.instances.length === 0) return [{ label: session.relativePath, result: imported }];
  return imported.instances.map((instance) => ({
    label: `${session.relativePath}#${instance.line}`,
    result: instance.result,
  }));
}
