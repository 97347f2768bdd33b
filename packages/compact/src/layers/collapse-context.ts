import type { Message, ToolResultBlock, ToolUseBlock } from "@unforget/core";
import { applyLayerEdits, type ContextEdit, type ReplaceMessagesEdit } from "@unforget/transcript";
import { CACHE_TTL_MS } from "../cache/prompt-cache.ts";
import {
  clip,
  estimateTextTokens,
  estimateTokens,
  isTextObservation,
  isUserAuthored,
  oneLine,
  resultText,
  userText,
} from "../conversation/conversation.ts";
import { findErrorCodes } from "../conversation/error-codes.ts";
import {
  COLLAPSE_MAX_RECORDS,
  COLLAPSE_PROTECT_ROUNDS,
  COLLAPSE_PROTECT_SHARE,
  DIGEST_ACTION_CHARS,
  DIGEST_FAILED_CHARS,
  DIGEST_MAX_ACTIONS,
  DIGEST_MAX_FAILED,
  DIGEST_MAX_SAVED,
  DIGEST_MIN_RECORDS,
  LADDER_COLLAPSE_PROTECT_ROUNDS,
} from "../defaults.ts";
import {
  type RetentionLookup,
  retentionLookup,
  withCompactableTools,
} from "../tool-outputs/compactable-tools.ts";
import {
  clipOutcome,
  describeOutcome,
  findErrorLines,
  splitSavedPath,
  toolOutputRecord,
  withSavedPath,
} from "../tool-outputs/tool-output-record.ts";
import { clearedRecord, savedNote, type ToolResultOptions, toolResultContext } from "./clearable-outputs.ts";
import { defineLayer, type EditLayer, messagesTarget, plural } from "./layer.ts";
import {
  isoTime,
  type LayerResult,
  type LayerTimeOptions,
  resultFromEdits,
  unchanged,
} from "./layer-result.ts";
import { withSavedOutputs } from "./saved-outputs.ts";

export interface CollapseOptions extends LayerTimeOptions, ToolResultOptions {
  /** Fold the oldest runs until the messages' estimated tokens are at or below this; default: fold every eligible run. */
  targetTokens?: number;
  /** Rounds at the end never folded; default 4 (1 when draining). */
  protectRounds?: number;
  /** Also keep, from the end, at least this many tokens of rounds unfolded (on top of `protectRounds`); default 0. */
  protectTokens?: number;
  /** Fold nothing unless at least this many tokens go: each fold breaks the prompt cache; default 0. */
  minimumFreedTokens?: number;
  /** Fold everything but the last round (the emergency drain before a reactive summary). */
  drain?: boolean;
  /**
   * Also condense the records of finished turns (before the user's newest message) into one digest per run:
   * the calls that failed with their first error line, the last call, and what else was run. Default false
   * (the layer turns it on when the prompt cache is cold, so the break costs nothing).
   */
  digestFinishedTurns?: boolean;
}

/** One completed round: an assistant message and the user message that answers all of its calls. */
interface Round {
  start: number;
  /** Its records (computed when it is folded: saving an output happens there); undefined when an output could not be saved. */
  records(): string[] | undefined;
}

/**
 * Folds old, completed runs of tool calls into one line per call (`Read(src/a.ts) → … (120 lines)`), oldest
 * first, so the model keeps the thread of what was done without the outputs. A run is a stretch of rounds
 * where an assistant message's calls are all answered by the next user message and carry no words from the
 * user; the user's messages are never folded. A round with a call to a tool that is kept is never folded; one
 * with a call to a tool that is not reproducible only when its output can be saved first (`saveOutput`), and
 * its record says where. Records describe the original outputs (before a layer cleared or cut them).
 * Read-time only: the transcript keeps the outputs, and the recorded edit lets a resumed session project the
 * same context.
 */
export function collapseContext(messages: readonly Message[], options: CollapseOptions = {}): LayerResult {
  const rounds = findRounds(messages, options);
  let protect = options.drain ? 1 : Math.max(0, options.protectRounds ?? COLLAPSE_PROTECT_ROUNDS);
  if (!options.drain && options.protectTokens !== undefined) {
    let kept = 0;
    for (let index = rounds.length - 1; index >= 0 && kept < options.protectTokens; index--) {
      const round = rounds[index]!;
      kept += estimateTokens(messages.slice(round.start, round.start + 2));
      protect = Math.max(protect, rounds.length - index);
    }
  }
  const eligible = rounds.slice(0, Math.max(0, rounds.length - protect));
  if (eligible.length === 0 && !options.digestFinishedTurns) return unchanged(messages);

  // Consecutive rounds form one run; each run becomes one record message.
  const runs: Round[][] = [];
  for (const round of eligible) {
    const run = runs[runs.length - 1];
    const last = run?.[run.length - 1];
    if (run && last && last.start + 2 === round.start) run.push(round);
    else runs.push([round]);
  }
  let total = options.targetTokens === undefined ? 0 : estimateTokens(messages);
  const edits: ContextEdit[] = [];
  let tokensFreed = 0;
  let folded = 0;
  for (const run of runs) {
    if (options.targetTokens !== undefined && total <= options.targetTokens) break;
    const first = run[0]!.start;
    const end = run[run.length - 1]!.start + 2;
    const removed = messages.slice(first, end);
    const perRound = run.map((round) => round.records());
    if (perRound.some((records) => records === undefined)) continue;
    const records = perRound.flatMap((records) => records ?? []);
    const text = recordText(records);
    const freed = estimateTokens(removed) - estimateTextTokens(text);
    if (freed <= 0) continue;
    edits.push({
      kind: "replace_messages",
      messageIds: removed.map((message) => message.id),
      details: { replacement: { id: `collapse_${removed[0]!.id}`, role: "user", text }, reason: "collapse" },
    });
    tokensFreed += freed;
    total -= freed;
    folded += records.length;
  }
  // Then finished turns' records — folded earlier or just now — condense into digests.
  let digested = 0;
  const afterFolds =
    options.digestFinishedTurns && edits.length > 0
      ? applyLayerEdits(
          messages,
          edits.map((edit) => ({ edit, timestamp: isoTime(options.now) })),
        )
      : messages;
  for (const digest of options.digestFinishedTurns ? digestEdits(afterFolds) : []) {
    edits.push(digest.edit);
    tokensFreed += digest.freed;
    digested += digest.edit.messageIds.length;
  }
  if (edits.length === 0 || tokensFreed < (options.minimumFreedTokens ?? 0)) return unchanged(messages);
  return resultFromEdits(messages, edits, isoTime(options.now), tokensFreed, {
    runs: edits.length,
    calls: folded,
    ...(digested > 0 ? { digested } : {}),
  });
}

const RECORD_HEADER =
  "[Earlier tool activity, folded to one line per call; the full outputs are in the transcript:]";
const DIGEST_HEADER = "[Tool activity of a finished turn, condensed";

/**
 * One edit per run of record messages (what earlier folds left) in a finished turn — before the user's
 * newest message — that condenses them into a digest, when that frees tokens.
 */
function digestEdits(messages: readonly Message[]): { edit: ReplaceMessagesEdit; freed: number }[] {
  let newestUser = -1;
  for (let index = messages.length - 1; index >= 0 && newestUser < 0; index--)
    if (isUserAuthored(messages[index]!)) newestUser = index;
  const result: { edit: ReplaceMessagesEdit; freed: number }[] = [];
  let run: Message[] = [];
  const flush = () => {
    const parts = run.map((message) => recordLines(userText(message)));
    const lines = parts.flatMap((part) => part.records);
    const calls = parts.reduce((sum, part) => sum + part.calls, 0);
    const savedEarlier = parts.flatMap((part) => part.saved);
    // One digest alone is left as it is; a run of records (with or without digests made earlier) condenses.
    const digestOnly = run.length === 1 && userText(run[0]!).startsWith(DIGEST_HEADER);
    if (!digestOnly && calls >= DIGEST_MIN_RECORDS && lines.length > 0) {
      const text = digestText(lines, calls, savedEarlier);
      const freed = estimateTokens(run) - estimateTextTokens(text);
      if (freed > 0) {
        result.push({
          edit: {
            kind: "replace_messages",
            messageIds: run.map((message) => message.id),
            details: { replacement: { id: `digest_${run[0]!.id}`, role: "user", text }, reason: "collapse" },
          },
          freed,
        });
      }
    }
    run = [];
  };
  for (let index = 0; index < newestUser; index++) {
    const message = messages[index]!;
    if (isRecordMessage(message)) run.push(message);
    else flush();
  }
  flush();
  return result;
}

function isRecordMessage(message: Message): boolean {
  if (message.role !== "user" || message.content.length !== 1) return false;
  const block = message.content[0]!;
  return (
    block.type === "text" && (block.text.startsWith(RECORD_HEADER) || block.text.startsWith(DIGEST_HEADER))
  );
}

/**
 * The calls a fold of tool runs or its digest records with their outcomes (`call → outcome`), oldest first: what
 * the collapse layer wrote, read back (a projection keeps only its text). Undefined for a text it did not write.
 */
export function foldedCallRecords(text: string): { call: string; outcome: string }[] | undefined {
  if (!text.startsWith(RECORD_HEADER) && !text.startsWith(DIGEST_HEADER)) return undefined;
  return recordLines(text).records.flatMap((record) => {
    const at = record.indexOf(" → ");
    return at < 0 ? [] : [{ call: record.slice(0, at), outcome: record.slice(at + 3) }];
  });
}

/**
 * The call records of a record message (the assistant's thoughts and the "… more …" line left out), or of a
 * digest (its failed and last calls; the other actions, without outcomes), and how many calls it stands for.
 */
function recordLines(text: string): { records: string[]; calls: number; saved: string[] } {
  const lines = text.split("\n").slice(1);
  if (text.startsWith(DIGEST_HEADER)) {
    const saved = lines.flatMap((line) =>
      line.startsWith(DIGEST_SAVED) ? line.slice(DIGEST_SAVED.length).split(ACTION_SEPARATOR) : [],
    );
    const calls = Number(/from (\d+) call/.exec(text)?.[1] ?? 0);
    const records = lines.flatMap((line) => {
      if (line.startsWith(DIGEST_FAILED)) return [line.slice(DIGEST_FAILED.length)];
      if (line.startsWith(DIGEST_LAST)) return [line.slice(DIGEST_LAST.length)];
      if (line.startsWith(DIGEST_ALSO)) return line.slice(DIGEST_ALSO.length).split(ACTION_SEPARATOR);
      return [];
    });
    return { records, calls, saved };
  }
  const records = lines
    .filter((line) => line.startsWith("- ") && !line.startsWith("- (assistant)") && !line.startsWith("- … "))
    .map((line) => line.slice(2));
  const more = Number(/^- … (\d+) more …$/m.exec(text)?.[1] ?? 0);
  return { records, calls: records.length + more, saved: [] };
}

const DIGEST_FAILED = "- failed: ";
const DIGEST_LAST = "- last: ";
const DIGEST_ALSO = "- also: ";
const DIGEST_SAVED = "- saved outputs: ";
const FAILED_HEAD = /^(?:exit -?\d+|error): /;
const ACTION_SEPARATOR = " · ";

/**
 * The digest: the calls that failed (each with its first error line), the last call, what else ran, and where
 * outputs were saved.
 */
function digestText(records: readonly string[], calls: number, savedEarlier: readonly string[]): string {
  const hasOutcome = (record: string) => record.includes(" → ");
  const failed = records.filter((record) => {
    if (!hasOutcome(record)) return false;
    const outcome = record.slice(record.indexOf(" → ") + 3);
    // A record says a call failed by its head (`exit 2: …`, `error: …`), else by an error line or code in it.
    return (
      FAILED_HEAD.test(outcome) || findErrorLines(outcome, 1).length > 0 || findErrorCodes(outcome).length > 0
    );
  });
  const last = records.findLast(hasOutcome) ?? records.at(-1)!;
  const shownFailed = failed.slice(-DIGEST_MAX_FAILED);
  const actions = [
    ...new Set(
      records
        .filter((record) => record !== last && !failed.includes(record))
        .map((record) => clip(record.split(" → ")[0] ?? record, DIGEST_ACTION_CHARS)),
    ),
  ];
  const shownActions = actions.slice(-DIGEST_MAX_ACTIONS);
  // Outputs saved before they were cleared stay findable: their paths (the oldest go first when there are many).
  const saved = [
    ...new Set(
      [...savedEarlier.map((path) => withSavedPath("", path)), ...records].flatMap((record) =>
        record === last || shownFailed.includes(record) ? [] : (splitSavedPath(record).savedPath ?? []),
      ),
    ),
  ].slice(-DIGEST_MAX_SAVED);
  return [
    `${DIGEST_HEADER} from ${plural(calls, "call")}; the full outputs are in the transcript:]`,
    ...shownFailed.filter((record) => record !== last).map((record) => DIGEST_FAILED + digestRecord(record)),
    DIGEST_LAST + digestRecord(last),
    ...(shownActions.length > 0 ? [DIGEST_ALSO + shownActions.join(ACTION_SEPARATOR)] : []),
    ...(saved.length > 0 ? [DIGEST_SAVED + saved.join(ACTION_SEPARATOR)] : []),
  ].join("\n");
}

/**
 * A record as a digest shows it: the call clipped, the outcome kept up to and with its first error line
 * whole, and where the output was saved.
 */
function digestRecord(record: string): string {
  const at = record.indexOf(" → ");
  if (at < 0) return clip(record, DIGEST_FAILED_CHARS);
  const { record: outcome, savedPath } = splitSavedPath(record.slice(at + 3));
  return withSavedPath(
    `${clip(record.slice(0, at), DIGEST_FAILED_CHARS)} → ${clipOutcome(outcome)}`,
    savedPath,
  );
}

/**
 * True when `assistant` and the `answer` after it form a completed round collapse may fold: an action and
 * its observation, or tool calls (all of compactable tools) every one of which the answer answers, with no
 * words from the user in the answer. The working-set policy counts the same rounds.
 */
export function isFoldableRound(
  assistant: Message,
  answer: Message,
  foldable: (toolName: string) => boolean,
): boolean {
  if (assistant.role !== "assistant" || answer.role !== "user" || answer.isMeta) return false;
  const uses = assistant.content.filter((block) => block.type === "tool_use");
  if (isTextObservation(answer) && uses.length === 0) return true;
  if (uses.length === 0 || !uses.every((use) => use.type === "tool_use" && foldable(use.name))) return false;
  const answered = new Set<string>();
  for (const block of answer.content) {
    if (block.type === "tool_result") answered.add(block.tool_use_id);
    else if (block.type === "text" && block.text.trim().length > 0) return false;
  }
  return uses.every((use) => use.type === "tool_use" && answered.has(use.id));
}

function findRounds(messages: readonly Message[], options: CollapseOptions): Round[] {
  const retention = withCompactableTools(options.retention ?? retentionLookup(), options.compactableTools);
  const foldable = (name: string) => {
    const kind = retention(name);
    return kind === "reproducible" || (kind === "persist" && options.saveOutput !== undefined);
  };
  const rounds: Round[] = [];
  for (let index = 0; index + 1 < messages.length; index++) {
    const assistant = messages[index]!;
    const answer = messages[index + 1]!;
    if (!isFoldableRound(assistant, answer, foldable)) continue;
    const uses = assistant.content.filter((block) => block.type === "tool_use");
    const thought = assistantThought(assistant);
    if (uses.length === 0) {
      const action = typeof assistant.metadata?.action === "string" ? assistant.metadata.action : thought;
      const records = [`${clip(oneLine(action || "(action)"), 100)} → ${describeOutcome(userText(answer))}`];
      rounds.push({ start: index, records: () => records });
      continue;
    }
    let records: string[] | undefined | null = null;
    rounds.push({
      start: index,
      records() {
        if (records === null) records = roundRecords(uses, answer, thought, retention, options);
        return records;
      },
    });
  }
  return rounds;
}

/** The records of a round's calls, its thought first; undefined when an output that must be saved was not. */
function roundRecords(
  uses: readonly Message["content"][number][],
  answer: Message,
  thought: string,
  retention: RetentionLookup,
  options: CollapseOptions,
): string[] | undefined {
  const results = new Map<string, ToolResultBlock>();
  for (const block of answer.content) if (block.type === "tool_result") results.set(block.tool_use_id, block);
  const records: string[] = [];
  if (thought) records.push(`(assistant) ${clip(oneLine(thought), 120)}`);
  for (const use of uses) {
    if (use.type !== "tool_use") continue;
    const result = results.get(use.id)!;
    const text = resultText(result);
    const original = options.originalOutput?.(use.id);
    let savedPath: string | undefined;
    if (retention(use.name) === "persist") {
      savedPath = options.saveOutput?.(use.id, original ?? text);
      if (savedPath === undefined) return undefined;
    }
    records.push(outputRecord(use, text, original, result.is_error === true, savedPath));
  }
  return records;
}

/**
 * The record of a call: from its original output when that is known; else, for an output a layer cleared, the
 * record the clearing wrote (describing the placeholder would keep its first hundred characters and lose the
 * error line); else from the output as it is.
 */
function outputRecord(
  use: ToolUseBlock,
  text: string,
  original: string | undefined,
  isError: boolean,
  savedPath: string | undefined,
): string {
  if (original !== undefined) return toolOutputRecord(use, original, isError, savedPath);
  const record = clearedRecord(text);
  if (record?.includes(" → ")) return record;
  return toolOutputRecord(use, text, isError, savedPath);
}

function assistantThought(message: Message): string {
  for (const block of message.content) {
    if (block.type === "text" && block.text.trim().length > 0) return block.text.trim().split("\n")[0] ?? "";
  }
  return "";
}

function recordText(records: readonly string[]): string {
  const shown =
    records.length > COLLAPSE_MAX_RECORDS
      ? [
          ...records.slice(0, COLLAPSE_MAX_RECORDS / 2),
          `… ${records.length - COLLAPSE_MAX_RECORDS} more …`,
          ...records.slice(-COLLAPSE_MAX_RECORDS / 2),
        ]
      : records;
  return `${RECORD_HEADER}\n${shown.map((record) => `- ${record}`).join("\n")}`;
}

export interface CollapseLayerOptions
  extends Omit<
    CollapseOptions,
    "now" | "targetTokens" | "drain" | "digestFinishedTurns" | "retention" | "saveOutput" | "originalOutput"
  > {
  /** Recent tool output never folded in a batch beyond the protected rounds, as a share of the threshold; default 0. */
  protectShare?: number;
  /**
   * Finished turns' records condense into digests in a batch after an idle gap longer than this (the prompt
   * cache has expired, so the break is free); default five minutes, the cache's lifetime; false: never. Not
   * while a background summary is pending: it will stand for those turns, and condensing them under it would
   * leave it too little to free.
   */
  digestAfterIdleMs?: number | false;
}

/**
 * Collapse as a layer: in a batch of the cheap layers it folds the oldest completed runs down to the target
 * (keeping the last 2 rounds); in `recover` it drains everything but the
 * last round before the reactive summary.
 */
export function createCollapseLayer(options: CollapseLayerOptions = {}): EditLayer {
  const { protectShare, digestAfterIdleMs, ...collapse } = options;
  const digestAfter = digestAfterIdleMs ?? CACHE_TTL_MS["5m"];
  return defineLayer({
    name: "collapse",
    label: "Collapse",
    color: "#7c3aed",
    kind: "edit",
    due(state) {
      if (state.trigger === "reactive") return "drain before the reactive summary";
      return state.trigger === "auto" && state.batch && state.tokens > state.target
        ? "context at the cheap-layer level"
        : false;
    },
    run(messages, context) {
      return withSavedOutputs(context, (saveOutput) => {
        const tools = toolResultContext(context, saveOutput);
        if (context.trigger === "reactive")
          return collapseContext(messages, { ...collapse, drain: true, now: context.now, ...tools });
        return collapseContext(messages, {
          protectRounds: LADDER_COLLAPSE_PROTECT_ROUNDS,
          protectTokens: Math.floor(context.threshold * (protectShare ?? COLLAPSE_PROTECT_SHARE)),
          minimumFreedTokens: context.minimumFreedTokens,
          ...collapse,
          targetTokens: messagesTarget(messages, context),
          now: context.now,
          digestFinishedTurns:
            digestAfter !== false && context.idleMs > digestAfter && !context.backgroundPending,
          ...tools,
        });
      });
    },
    describe: (report) =>
      `Folded ${plural(report.stats.calls ?? 0, "completed tool call")} into one-line records${savedNote(report.stats)}: ${report.reason}.`,
  });
}
