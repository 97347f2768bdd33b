import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findToolPairViolations, type Message } from "@unforget/core";
import { arbitraryConversation } from "@unforget/testing/arbitraries";
import {
  createTranscriptEntry,
  type LayerDecisionEntry,
  projectMessages,
  type TranscriptEntry,
  toRequestMessages,
} from "@unforget/transcript";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { estimateTokens, isUserAuthored, userText } from "../conversation.ts";
import type { LayerResult } from "../layer-result.ts";
import { USER_PREFIX_CHARS } from "../replay-conversation.ts";

/** A layer as the suite drives it. */
export interface LayerUnderTest {
  /** Shown in test names. */
  name: string;
  /**
   * Applies the layer to messages. `dir` is a fresh folder the layer may write to (a session folder); `now`
   * is the time to decide by (late enough for time-based layers to act).
   */
  run(
    messages: readonly Message[],
    context: { dir: string; now: number },
  ): LayerResult | Promise<LayerResult>;
  /** Whether running the layer on its own output must change nothing; default true. */
  idempotent?: boolean;
}

export interface LayerContractOptions {
  /** Recorded conversations to run the layer on too (e.g. every corpus session, imported). */
  sessions?: readonly { name: string; messages: readonly Message[] }[];
  /** fast-check runs over generated conversations; default 60. */
  numRuns?: number;
}

/**
 * The conformance suite every compaction layer passes, over generated conversations and the given
 * sessions: the input is never mutated; no tool_use loses its result or result its use; roles alternate in
 * the request; the context never grows; each user message is kept verbatim or quoted; running it again
 * changes nothing; the recorded edits, written and read back as transcript JSON, project to exactly the
 * layer's messages; any file the edits point at holds the original output byte for byte.
 */
export function describeLayerContract(layer: LayerUnderTest, options: LayerContractOptions = {}): void {
  describe(`compaction layer contract: ${layer.name}`, () => {
    it("holds every invariant on generated conversations", async () => {
      await fc.assert(
        fc.asyncProperty(
          arbitraryConversation({ maxRounds: 14, longToolOutputs: true }),
          async (messages) => {
            await checkLayer(layer, messages);
          },
        ),
        { numRuns: options.numRuns ?? 60 },
      );
    });
    for (const session of options.sessions ?? []) {
      it(`holds every invariant on ${session.name}`, async () => {
        await checkLayer(layer, session.messages);
      });
    }
  });
}

async function checkLayer(layer: LayerUnderTest, messages: readonly Message[]): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "unforget-layer-contract-"));
  try {
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
    expect(violations, "no new tool-pair or alternation violations").toEqual([]);

    expect(result.tokensFreed).toBeGreaterThanOrEqual(0);
    expect(estimateTokens(output), "never larger after than before").toBeLessThanOrEqual(
      estimateTokens(input),
    );
    if (result.edits.length === 0)
      expect(output.map((message) => message.id)).toEqual(input.map((message) => message.id));

    const outputText = output.map((message) => JSON.stringify(message.content)).join("\n");
    const outputIds = new Map(output.map((message) => [message.id, message]));
    for (const message of input) {
      if (!isUserAuthored(message)) continue;
      const kept = outputIds.get(message.id);
      if (kept && userText(kept) === userText(message)) continue;
      const prefix = JSON.stringify(userText(message).slice(0, USER_PREFIX_CHARS)).slice(1, -1);
      expect(outputText.includes(prefix), `user message ${message.id} is kept or quoted`).toBe(true);
    }

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
  } finally {
    await rm(dir, { recursive: true, force: true });
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
