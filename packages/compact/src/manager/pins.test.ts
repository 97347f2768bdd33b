import {
  findToolPairViolations,
  type Message,
  PromptTooLongError,
  type SessionMemorySource,
} from "@unforget/core";
import { applyPlugins, createSessionHooks } from "@unforget/hooks";
import { describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { PinLimitError, PinNotFoundError } from "../compact-error.ts";
import { resultText } from "../conversation/conversation.ts";
import type { ContextEvent } from "./context-events.ts";
import { createContextManager } from "./context-manager.ts";

const LIMITS = { contextWindow: 60_000, maxOutputTokens: 8_000 };

/** A conversation of file reads, each result about `tokens` tokens; returns the builder and the reads' tool_use ids. */
function reads(count: number, tokens: number) {
  const c = conversationBuilder().user("Go.");
  for (let turn = 0; turn < count; turn++) c.tool("Read", { file_path: `f${turn}` }, filler(tokens, turn));
  const useIds = c.messages.flatMap((message) =>
    message.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : [])),
  );
  return { c, useIds };
}

/** The result text of a tool_use id in the projected messages, or undefined when its result is gone. */
function resultOf(messages: readonly Message[], useId: string): string | undefined {
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "tool_result" && block.tool_use_id === useId) return resultText(block);
    }
  }
  return undefined;
}

const original = (turn: number, tokens: number) => filler(tokens, turn);

describe("pins", () => {
  it("keep a pinned tool result through microcompact's clearing after an idle gap", async () => {
    const { c, useIds } = reads(12, 800);
    const manager = createContextManager({ model: "m", limits: LIMITS, clock: c.now });
    await manager.prepare(c.messages);
    const item = await manager.pin(c.messages, useIds[1]!);
    expect(item.messageIds).toHaveLength(2);
    c.wait(3 * 60 * 60_000);
    c.user("Back again.");
    const result = await manager.prepare(c.messages);
    expect(result.actions.map((action) => action.layer)).toContain("microcompact");
    expect(resultOf(result.projected, useIds[0]!)).not.toBe(original(0, 800));
    expect(resultOf(result.projected, useIds[1]!)).toBe(original(1, 800));
  });

  it("keep a pinned call and its result when collapse folds the rounds around them", async () => {
    const { c, useIds } = reads(10, 1_000);
    const manager = createContextManager({
      model: "m",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      clock: c.now,
    });
    const before = await manager.prepare(c.messages);
    await manager.pin(c.messages, useIds[2]!);
    const overflow = new PromptTooLongError("prompt is too long: 210000 tokens > 200000 maximum", {
      actualTokens: 210_000,
      limitTokens: 200_000,
    });
    const drained = await manager.recover(overflow);
    expect(drained.actions.map((action) => action.layer)).toEqual(["collapse"]);
    expect(resultOf(drained.projected, useIds[1]!)).toBeUndefined();
    expect(resultOf(drained.projected, useIds[2]!)).toBe(resultOf(before.projected, useIds[2]!));
    expect(findToolPairViolations(drained.messages as Message[])).toEqual([]);
  });

  it("keep a pinned round when snip removes the middle of the conversation", async () => {
    const { c, useIds } = reads(30, 400);
    const manager = createContextManager({ model: "m", limits: LIMITS, clock: c.now });
    await manager.prepare(c.messages);
    await manager.pin(c.messages, useIds[5]!);
    manager.requestSnip(10);
    const snipped = await manager.prepare(c.messages);
    expect(snipped.actions.map((action) => action.layer)).toEqual(["snip"]);
    expect(resultOf(snipped.projected, useIds[4]!)).toBeUndefined();
    expect(resultOf(snipped.projected, useIds[5]!)).toBe(original(5, 400));
    expect(findToolPairViolations(snipped.messages as Message[])).toEqual([]);
  });

  it("keep a pinned message verbatim after a summary, its tool partner with it", async () => {
    const { c, useIds } = reads(20, 600);
    c.assistant("Read them all.").user("Now summarise.");
    const manager = createContextManager({ model: "m", limits: LIMITS, clock: c.now });
    await manager.prepare(c.messages);
    // The tool_result message, by its id: its call comes with it.
    const resultMessage = c.messages.find((message) => resultOf([message], useIds[3]!) !== undefined)!;
    await manager.pin(c.messages, resultMessage.id);
    const compacted = await manager.compact(c.messages);
    expect(compacted.actions.map((action) => action.layer)).toEqual(["summary"]);
    const ids = compacted.projected.map((message) => message.id);
    expect(compacted.projected[0]?.isCompactSummary).toBe(true);
    expect(resultOf(compacted.projected, useIds[2]!)).toBeUndefined();
    expect(resultOf(compacted.projected, useIds[3]!)).toBe(original(3, 600));
    const call = c.messages.find((message) =>
      message.content.some((block) => block.type === "tool_use" && block.id === useIds[3]),
    )!;
    expect(ids.indexOf(call.id)).toBe(ids.indexOf(resultMessage.id) - 1);
    expect(findToolPairViolations(compacted.messages as Message[])).toEqual([]);
  });

  it("keep a pinned message when session notes stand for the rest", async () => {
    const { c, useIds } = reads(20, 600);
    c.assistant("Read them all.").user("Go on.");
    const notes: SessionMemorySource = {
      async waitForPendingExtraction() {},
      async readNotes() {
        return { text: "# Current State\nAll twenty files read.\n" };
      },
    };
    const manager = createContextManager({ model: "m", limits: LIMITS, clock: c.now, sessionMemory: notes });
    await manager.prepare(c.messages);
    await manager.pin(c.messages, useIds[0]!);
    const compacted = await manager.compact(c.messages);
    expect(compacted.actions.map((action) => action.layer)).toEqual(["session-memory"]);
    expect(resultOf(compacted.projected, useIds[1]!)).toBeUndefined();
    expect(resultOf(compacted.projected, useIds[0]!)).toBe(original(0, 600));
    expect(findToolPairViolations(compacted.messages as Message[])).toEqual([]);
  });

  it("are refused past their share of the window, saying to unpin, and are listed with their sizes", async () => {
    const { c, useIds } = reads(6, 3_000);
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      config: { pins: { maxShare: 0.1 }, toolResultBudget: false },
    });
    await manager.prepare(c.messages);
    await manager.pin(c.messages, useIds[0]!);
    const refused = await manager.pin(c.messages, useIds[1]!).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PinLimitError);
    expect((refused as PinLimitError).capTokens).toBe(6_000);
    expect((refused as Error).message).toMatch(/unpin/);
    await expect(manager.pin(c.messages, "nothing-like-it")).rejects.toBeInstanceOf(PinNotFoundError);
    expect(manager.pins().items.map((item) => item.messageId)).toHaveLength(1);
    expect(await manager.unpin(c.messages, useIds[0]!)).toBe(true);
    expect(await manager.unpin(c.messages, useIds[0]!)).toBe(false);
    await manager.pin(c.messages, useIds[1]!);
    const status = manager.pins();
    expect(status.items).toHaveLength(1);
    expect(status.tokens).toBeGreaterThan(2_000);
    expect(status.tokens).toBeLessThanOrEqual(status.capTokens);
  });

  it("stop being honoured, oldest first and with a notice, when the window shrinks under them", async () => {
    const { c, useIds } = reads(12, 3_000);
    const events: ContextEvent[] = [];
    const manager = createContextManager({
      model: "m",
      limits: { contextWindow: 200_000, maxOutputTokens: 8_000 },
      clock: c.now,
      config: { toolResultBudget: false },
      onEvent: (event) => events.push(event),
    });
    await manager.prepare(c.messages);
    await manager.pin(c.messages, useIds[0]!);
    await manager.pin(c.messages, useIds[1]!);
    // The provider says the model takes 20K: the pins' cap falls to 5K, room for the newer pin only.
    const refusal = new PromptTooLongError("prompt is too long: 26000 tokens > 20000 maximum", {
      actualTokens: 26_000,
      limitTokens: 20_000,
    });
    const recovered = await manager.recover(refusal);
    expect(recovered.status.contextWindow).toBe(20_000);
    expect(manager.pins().items.map((item) => item.honoured)).toEqual([false, true]);
    const notices = events.filter((event) => event.type === "pins-unhonoured");
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ capTokens: 5_000 });
    expect(resultOf(recovered.projected, useIds[1]!)).toBe(original(1, 3_000));
    expect(recovered.tokens).toBeLessThan(20_000);
  });

  it("can be asked for by a PreCompact plugin: kept by that compaction, refused ones reported", async () => {
    const { c, useIds } = reads(20, 600);
    c.assistant("Read them all.").user("Now summarise.");
    const hooks = createSessionHooks({ onHookError: () => {} });
    applyPlugins(hooks, [
      {
        name: "keep-the-schema",
        apply(bus) {
          bus.preCompact.tap("keep-the-schema", (result) => ({ ...result, pin: [useIds[7]!, "gone"] }));
        },
      },
    ]);
    const events: ContextEvent[] = [];
    const manager = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      hooks,
      onEvent: (event) => events.push(event),
    });
    await manager.prepare(c.messages);
    const compacted = await manager.compact(c.messages);
    expect(compacted.actions.map((action) => action.layer)).toEqual(["summary"]);
    expect(resultOf(compacted.projected, useIds[7]!)).toBe(original(7, 600));
    expect(resultOf(compacted.projected, useIds[6]!)).toBeUndefined();
    expect(manager.pins().items.map((item) => item.by)).toEqual(["plugin"]);
    expect(events.filter((event) => event.type === "pin-refused").map((event) => event.type)).toHaveLength(1);
  });

  it("survive a resume: the pin entries are replayed, and the resumed manager keeps the message", async () => {
    const { c, useIds } = reads(20, 600);
    c.assistant("Done.").user("Next.");
    const first = createContextManager({ model: "m", limits: LIMITS, clock: c.now });
    await first.prepare(c.messages);
    await first.pin(c.messages, useIds[4]!, { by: "user" });
    await first.pin(c.messages, useIds[6]!);
    await first.unpin(c.messages, useIds[6]!);
    expect(first.entries.filter((entry) => entry.type === "pin")).toHaveLength(3);
    const resumed = createContextManager({
      model: "m",
      limits: LIMITS,
      clock: c.now,
      resume: first.entries,
    });
    expect(resumed.pins().items.map((item) => [item.messageIds.length, item.by])).toEqual([[2, "user"]]);
    const compacted = await resumed.compact(c.messages);
    expect(compacted.actions.map((action) => action.layer)).toEqual(["summary"]);
    expect(resultOf(compacted.projected, useIds[4]!)).toBe(original(4, 600));
    expect(resultOf(compacted.projected, useIds[6]!)).toBeUndefined();
  });
});
