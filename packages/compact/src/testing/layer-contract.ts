import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage, findToolPairViolations, type Message } from "@unforget/core";
import { arbitraryConversation } from "@unforget/testing/arbitraries";
import { DEFAULT_PADDING } from "@unforget/tokens";
import {
  createTranscriptEntry,
  type LayerDecisionEntry,
  projectMessages,
  type TranscriptEntry,
  toRequestMessages,
} from "@unforget/transcript";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { estimateTokens, isUserAuthored, resultText, userText } from "../conversation/conversation.ts";
import { findNewestTurn } from "../conversation/newest-turn.ts";
import type { EditLayer, LayerContext } from "../layers/layer.ts";
import { scaleFor } from "../layers/layer.ts";
import type { LayerResult } from "../layers/layer-result.ts";
import { foldedUserMessages, USER_PREFIX_CHARS } from "../replay/request-checks.ts";

/** A layer as the suite drives it: a function of messages, or a ladder `EditLayer` (run as if due in a batch). */
export interface LayerUnderTest {
  /** Shown in test names. */
  name: string;
  /**
   * Applies the layer to messages. `dir` is a folder the layer may write to (a session folder); `now` is the
   * time to decide by (late enough for time-based layers to act).
   */
  run(
    messages: readonly Message[],
    context: { dir: string; now: number },
  ): LayerResult | Promise<LayerResult>;
  /** Whether running the layer on its own output must change nothing; default true. */
  idempotent?: boolean;
  /** True for a layer that may cut the newest turn in the middle (the tool-result budget); none may remove it. */
  cutsNewestTurn?: boolean;
}

export interface LayerContractOptions {
  /** Recorded conversations to run the layer on too (e.g. every corpus session, imported). */
  sessions?: readonly { name: string; messages: readonly Message[] }[];
  /** fast-check runs over generated conversations; default 60. */
  numRuns?: number;
  /** Only the recorded `sessions` (an evaluation over a corpus, beside a unit suite that runs the rest). */
  recordedOnly?: boolean;
}

/**
 * A ladder layer as the suite runs it: due in a batch of the cheap layers at a small threshold (so that it
 * acts on short conversations), with every message new, long after the last response.
 */
export function layerUnderTest(layer: EditLayer, threshold = 2_000): LayerUnderTest {
  return {
    name: layer.name,
    ...(layer.cutsNewestTurn ? { cutsNewestTurn: true } : {}),
    run(messages, { dir, now }) {
      // Counted as the manager counts (padded), so the layer's target is the same size on every run.
      const tokens = Math.ceil(estimateTokens(messages) * DEFAULT_PADDING);
      const context: LayerContext = {
        trigger: "auto",
        tokens,
        threshold,
        blockingLimit: threshold * 2,
        contextWindow: threshold * 3,
        added: messages.length,
        firstNew: 0,
        idleMs: 3 * 3_600_000,
        batch: true,
        target: Math.floor(threshold * 0.3),
        minimumFreedTokens: 0,
        requested: new Map(),
        acted: new Set(),
        reason: "conformance",
        now,
        scale: scaleFor(threshold),
        sessionDir: dir,
        staleMessageIds: new Set(),
        newestTurn: findNewestTurn(messages),
      };
      return layer.run(messages, context);
    },
  };
}

/**
 * The conformance suite every compaction layer passes, over generated conversations and the given
 * sessions: the input is never mutated; no tool_use loses its result or result its use; roles alternate in
 * the request; the context never grows; each user message is kept verbatim or quoted; the newest turn stays
 * (the newest tool results and the user's newest message whole — cut in the middle at most, by a layer that
 * says so); running it again changes nothing; the recorded edits, written and read back as transcript JSON,
 * project to exactly the layer's messages; any file the edits point at holds the original output byte for byte.
 * Wrap a ladder `EditLayer` with `layerUnderTest`.
 */
export function describeLayerContract(layer: LayerUnderTest, options: LayerContractOptions = {}): void {
  describe(`compaction layer contract: ${layer.name}`, () => {
    // Two halves of the generated runs, so that neither comes near the timeout on a loaded machine.
    const runs = options.recordedOnly === true ? 0 : (options.numRuns ?? 60);
    for (const [half, numRuns] of [
      [1, Math.ceil(runs / 2)],
      [2, Math.floor(runs / 2)],
    ] as const) {
      if (numRuns === 0) continue;
      it(`holds every invariant on generated conversations (${half} of 2)`, async () => {
        const dir = await mkdtemp(join(tmpdir(), "unforget-layer-contract-"));
        try {
          await fc.assert(
            fc.asyncProperty(arbitraryConversation({ maxRounds: 14, longToolOutputs: true }), (messages) =>
              checkLayer(layer, messages, dir),
            ),
            { numRuns },
          );
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      });
    }
    if (options.recordedOnly !== true) {
      it("keeps the newest turn, however large", async () => {
        const dir = await mkdtemp(join(tmpdir(), "unforget-layer-contract-"));
        try {
          await checkLayer(layer, largeNewestTurn(), dir);
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      });
    }
    if (options.sessions && options.sessions.length > 0) {
      it(`holds every invariant on ${options.sessions.length} recorded sessions`, async () => {
        const dir = await mkdtemp(join(tmpdir(), "unforget-layer-contract-"));
        try {
          for (const session of options.sessions ?? [])
            await checkLayer(layer, session.messages, dir, session.name);
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      });
    }
  });
}

/** A conversation whose newest tool result and newest user message are each larger than any layer's budget. */
function largeNewestTurn(): Message[] {
  const messages: Message[] = [];
  let time = Date.parse("2026-01-01T00:00:00Z");
  const at = () => {
    time += 1_000;
    return new Date(time).toISOString();
  };
  messages.push(
    createMessage("user", "Fix the failing build. Keep the public API.", { id: "u0", timestamp: at() }),
  );
  for (let round = 0; round < 8; round++) {
    const id = `toolu_${round}`;
    const output = `${round === 7 ? "FAIL src/date.test.ts\n" : ""}${`line ${round} of the build log\n`.repeat(round === 7 ? 4_000 : 300)}`;
    messages.push(
      createMessage(
        "assistant",
        [{ type: "tool_use", id, name: "Bash", input: { command: `make step-${round}` } }],
        {
          id: `a${round}`,
          timestamp: at(),
        },
      ),
    );
    messages.push(
      createMessage("user", [{ type: "tool_result", tool_use_id: id, content: output }], {
        id: `r${round}`,
        timestamp: at(),
      }),
    );
    if (round === 5) {
      messages.push(createMessage("assistant", "Looking at it.", { id: "a-note", timestamp: at() }));
      messages.push(
        createMessage(
          "user",
          `Also: ${"keep the changelog in step with every change; ".repeat(400)}and tell me when done.`,
          {
            id: "u-latest",
            timestamp: at(),
          },
        ),
      );
    }
  }
  return messages;
}

async function checkLayer(
  layer: LayerUnderTest,
  messages: readonly Message[],
  dir: string,
  sessionName?: string,
): Promise<void> {
  const where = sessionName ? ` (${sessionName})` : "";
  const input = deepFreeze(structuredClone(messages) as Message[]);
  const now = Date.parse(input[input.length - 1]?.timestamp ?? "2026-01-01T00:00:00Z") + 3 * 3_600_000;
  const result = await layer.run(input, { dir, now });
  const output = result.messages;

  const inputViolations = new Set(
    findToolPairViolations(toRequestMessages(input) as Message[]).map((v) => v.kind),
  );
  const violations = findToolPairViolations(toRequestMessages(output) as Message[]).filter(
    (violation) => !inputViolations.has(violation.kind),
  );
  expect(violations, `no new tool-pair or alternation violations${where}`).toEqual([]);

  expect(result.tokensFreed).toBeGreaterThanOrEqual(0);
  expect(estimateTokens(output), "never larger after than before").toBeLessThanOrEqual(estimateTokens(input));
  if (result.edits.length === 0)
    expect(output.map((message) => message.id)).toEqual(input.map((message) => message.id));

  const outputText = output.map((message) => JSON.stringify(message.content)).join("\n");
  const outputIds = new Map(output.map((message) => [message.id, message]));
  const folded = foldedUserMessages(output, input.filter(isUserAuthored));
  for (const message of input) {
    if (!isUserAuthored(message)) continue;
    const kept = outputIds.get(message.id);
    if ((kept && userText(kept) === userText(message)) || folded.has(message.id)) continue;
    const prefix = JSON.stringify(userText(message).slice(0, USER_PREFIX_CHARS)).slice(1, -1);
    expect(outputText.includes(prefix), `user message ${message.id} is kept or quoted`).toBe(true);
  }

  checkNewestTurn(layer, input, output, where);

  if (layer.idempotent !== false && result.edits.length > 0) {
    const again = await layer.run(deepFreeze(structuredClone(output)), { dir, now });
    expect(again.edits, "a second run changes nothing").toEqual([]);
  }

  const entries: TranscriptEntry[] = input.map((message) =>
    createTranscriptEntry({ type: "message", message }),
  );
  if (result.edits.length > 0) {
    const decision = createTranscriptEntry(
      { type: "layer_decision", layer: layer.name, edits: result.edits },
      { now: new Date(replacementTime(output)) },
    ) as LayerDecisionEntry;
    entries.push(decision);
  }
  const reread = JSON.parse(JSON.stringify(entries)) as TranscriptEntry[];
  expect(
    JSON.stringify(toRequestMessages(projectMessages(reread))),
    "the transcript projects to the live request",
  ).toBe(JSON.stringify(toRequestMessages(output)));

  for (const edit of result.edits) {
    const path = edit.details?.path;
    if (typeof path !== "string") continue;
    const useId = edit.toolUseIds?.[0];
    const original = input
      .flatMap((message) => message.content)
      .find((block) => block.type === "tool_result" && block.tool_use_id === useId);
    expect(original, "a persisted output belongs to a result of the input").toBeDefined();
    if (original?.type === "tool_result") {
      const text =
        typeof original.content === "string"
          ? original.content
          : original.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
      expect(await readFile(path, "utf8"), "the persisted output is byte-identical").toBe(text);
    }
  }
}

/** The newest tool results are still tool results whose start is kept; the user's newest message is there whole (or cut in the middle). */
function checkNewestTurn(
  layer: LayerUnderTest,
  input: readonly Message[],
  output: readonly Message[],
  where: string,
): void {
  const turn = findNewestTurn(input);
  const after = new Map<string, string>();
  for (const message of output) {
    for (const block of message.content)
      if (block.type === "tool_result") after.set(block.tool_use_id, resultText(block));
  }
  for (const message of input) {
    if (!turn.outputMessageIds.has(message.id)) continue;
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      const before = resultText(block);
      const kept = after.get(block.tool_use_id);
      expect(kept, `the newest tool result ${block.tool_use_id} stays${where}`).toBeDefined();
      if (layer.cutsNewestTurn)
        expect(
          kept!.includes(before.slice(0, USER_PREFIX_CHARS).trimEnd()),
          `the newest tool result keeps its start${where}`,
        ).toBe(true);
      else expect(kept, `the newest tool result is unchanged${where}`).toBe(before);
    }
  }
  if (turn.userText === undefined) return;
  const text = JSON.stringify(output.map((message) => message.content));
  const quoted = (fragment: string) => text.includes(JSON.stringify(fragment).slice(1, -1));
  if (layer.cutsNewestTurn) {
    expect(
      quoted(turn.userText.slice(0, USER_PREFIX_CHARS)) && quoted(turn.userText.slice(-USER_PREFIX_CHARS)),
      `the user's newest message keeps its start and end${where}`,
    ).toBe(true);
  } else {
    expect(quoted(turn.userText), `the user's newest message stays whole${where}`).toBe(true);
  }
}

/** The time replacement messages carry (their edit's time), so the projection can be compared byte for byte. */
function replacementTime(output: readonly Message[]): string {
  const replacement = output.find((message) => message.metadata?.replaces !== undefined);
  return replacement?.timestamp ?? new Date().toISOString();
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as Record<string, unknown>)) deepFreeze(child);
  }
  return value;
}
