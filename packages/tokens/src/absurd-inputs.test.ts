import {
  type CountTokensRequest,
  createMessage,
  createUsage,
  InvalidMessageError,
  type Message,
} from "@unforget/core";
import { describe, expect, it } from "vitest";
import {
  estimateImageTokens,
  estimateMessagesTokens,
  estimateMessageTokens,
} from "./estimate-message-tokens.ts";
import { estimateRequestTokens } from "./estimate-request-tokens.ts";
import { estimateTextTokens } from "./estimate-text-tokens.ts";
import { createFallbackCounter } from "./fallback-counter.ts";
import { MAX_COUNTED_TOKENS } from "./finite-count.ts";
import { createTokenCountSession } from "./token-count-session.ts";
import { measureContextTokens, tokenCountWithEstimation } from "./token-count-with-estimation.ts";

// A count is always a finite non-negative integer, whatever the input claims.

const png = { type: "base64" as const, media_type: "image/png", data: "iVBORw0KGgo=" };
const pdf = { type: "base64" as const, media_type: "application/pdf", data: "JVBERi0=" };

function expectCount(value: number): void {
  expect(Number.isSafeInteger(value), String(value)).toBe(true);
  expect(value).toBeGreaterThanOrEqual(0);
}

const message = (content: unknown): Message => ({ ...createMessage("user", "x"), content: content as never });

describe("absurd media sizes", () => {
  it("estimates an image whose dimensions are not finite positive numbers as one of unknown size", () => {
    for (const [width, height] of [
      [Number.POSITIVE_INFINITY, 100],
      [100, Number.POSITIVE_INFINITY],
      [Number.NaN, 100],
      [-5, 100],
      ["800", 600],
    ] as const) {
      expect(estimateImageTokens(width as number, height, 1_234)).toBe(1_234);
    }
    expect(
      estimateMessageTokens(
        message([{ type: "image", source: png, width: Number.POSITIVE_INFINITY, height: 1 }]),
      ),
    ).toBe(2_003);
  });

  it("bounds a huge finite image by the API's downscaling instead of overflowing to 0 or Infinity", () => {
    const largest = Math.ceil(1_150_000 / 750);
    for (const [width, height] of [
      [1e308, 1e308],
      [1e200, 1e200],
      [Number.MAX_VALUE, 2],
      [1e200, 1],
    ]) {
      const tokens = estimateImageTokens(width, height, 2_000);
      expectCount(tokens);
      expect(tokens).toBeGreaterThanOrEqual(1);
      expect(tokens).toBeLessThanOrEqual(largest);
    }
    expect(estimateImageTokens(1e308, 1e308, 2_000)).toBeGreaterThan(1_400);
  });

  it("caps a document's page count at MAX_DOCUMENT_PAGES and treats a page count that is not a positive number as unknown", () => {
    const pages = (value: unknown) =>
      estimateMessageTokens(message([{ type: "document", source: pdf, pages: value }]), {
        messageOverheadTokens: 0,
      });
    expect(pages(1e308)).toBe(pages(10_000));
    expect(pages(1e308)).toBe(10_000 * 2_000);
    expect(pages(Number.POSITIVE_INFINITY)).toBe(2_000);
    expect(pages(Number.NaN)).toBe(2_000);
    expect(pages("12")).toBe(2_000);
    expect(pages(2.5)).toBe(3 * 2_000);
  });

  it("saturates at MAX_COUNTED_TOKENS when options multiply a count past it", () => {
    const images = message([
      { type: "image", source: png },
      { type: "image", source: png },
    ]);
    expect(estimateMessageTokens(images, { imageTokens: 1e308 })).toBe(MAX_COUNTED_TOKENS);
    expect(estimateMessagesTokens([images, images], { imageTokens: 1e308 })).toBe(MAX_COUNTED_TOKENS);
    const request: CountTokensRequest = { model: "m", messages: [createMessage("user", "hello")] };
    expect(estimateRequestTokens(request, { padding: 1e308 })).toBe(MAX_COUNTED_TOKENS);
    expect(tokenCountWithEstimation([images], { imageTokens: 1e308, padding: 1e308 })).toBe(
      MAX_COUNTED_TOKENS,
    );
    expect(tokenCountWithEstimation([createMessage("user", "hi")], { preambleTokens: Number.NaN })).toBe(
      tokenCountWithEstimation([createMessage("user", "hi")]),
    );
    const session = createTokenCountSession({ imageTokens: 1e308 });
    expect(session.count([images]).tokens).toBe(MAX_COUNTED_TOKENS);
    // Replacing a saturated message must not turn the running sum into Infinity − Infinity = NaN.
    expect(session.count([{ ...images }]).tokens).toBe(MAX_COUNTED_TOKENS);
  });

  it("never returns a non-finite count from createFallbackCounter", async () => {
    const request = {
      model: "m",
      messages: [message([{ type: "document", source: pdf, pages: 1e308 }])],
    } as CountTokensRequest;
    const counted = await createFallbackCounter(undefined).countTokens(request);
    expectCount(counted.inputTokens);
    const padded = await createFallbackCounter(undefined, {
      estimator: { documentPageTokens: 1e308 },
    }).countTokens(request);
    expect(padded.inputTokens).toBe(MAX_COUNTED_TOKENS);
  });
});

describe("values of the wrong type inside messages", () => {
  it("counts them as their JSON text instead of throwing", () => {
    const weird = message([
      { type: "text", text: 12345 },
      { type: "text" },
      null,
      7,
      "plain string block",
      { type: "tool_use", name: { not: "a string" }, input: undefined },
      { type: "tool_result", content: { not: "an array" } },
      { type: "thinking", thinking: ["a", "b"] },
      { type: "image", source: null, width: "wide" },
      { type: "document", source: "nope" },
    ]);
    expectCount(estimateMessageTokens(weird));
    expect(estimateMessageTokens(weird)).toBeGreaterThan(estimateMessageTokens(message([])));
    expectCount(estimateMessageTokens(message("a string content")));
    expect(estimateMessageTokens(message("a string content"))).toBe(
      estimateMessageTokens(createMessage("user", "a string content")),
    );
    expectCount(estimateMessageTokens(message(undefined)));
    expectCount(estimateMessageTokens(null as never));
    expectCount(estimateTextTokens(42 as never));
    expect(estimateTextTokens(undefined as never)).toBe(0);
  });

  it("walks tool results nested far deeper than the call stack allows", () => {
    let content: unknown = [{ type: "text", text: "the innermost result" }];
    for (let depth = 0; depth < 100_000; depth++)
      content = [{ type: "tool_result", tool_use_id: "t", content }];
    const deep = message(content);
    const tokens = estimateMessageTokens(deep);
    expectCount(tokens);
    expect(tokens).toBeGreaterThan(estimateTextTokens("the innermost result"));
    let nested: unknown = "leaf";
    for (let depth = 0; depth < 100_000; depth++) nested = [nested];
    const deepInput = message([{ type: "tool_use", id: "t", name: "n", input: nested }]);
    // The JSON text of 100,000 nested arrays is 200,004 characters: it is counted, not dropped.
    expect(estimateMessageTokens(deepInput)).toBeGreaterThan(10_000);
  });

  it("ignores a usage whose fields are not finite non-negative numbers (no anchor there)", () => {
    const good = createUsage({ inputTokens: 1_000, outputTokens: 10 });
    const messages: Message[] = [
      createMessage("user", "hi"),
      createMessage("assistant", "one", { usage: good }),
      createMessage("user", "again"),
    ];
    const base = measureContextTokens(messages);
    for (const usage of [
      { ...good, inputTokens: Number.NaN },
      { ...good, outputTokens: "10" },
      { ...good, cacheReadInputTokens: Number.POSITIVE_INFINITY },
      { ...good, inputTokens: -1 },
      { inputTokens: 1e308, outputTokens: 1e308, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 },
      null,
      "lots",
    ]) {
      const broken = [...messages, createMessage("assistant", "two", { usage: usage as never })];
      const count = measureContextTokens(broken);
      expectCount(count.tokens);
      expect(count.anchorIndex).toBe(base.anchorIndex);
      const session = createTokenCountSession();
      expect(session.count(broken)).toEqual(count);
    }
    // A usage missing its cache fields (a plain-JavaScript caller) counts the fields it has.
    const partial = [
      createMessage("assistant", "x", { usage: { inputTokens: 5, outputTokens: 5 } as never }),
    ];
    expect(measureContextTokens(partial)).toMatchObject({ anchorTokens: 10, anchorIndex: 0 });
  });

  it("rejects a message list that is not a list with InvalidMessageError", () => {
    for (const notAList of [undefined, null, 5, "messages", { length: 3 }]) {
      expect(() => tokenCountWithEstimation(notAList as never)).toThrow(InvalidMessageError);
      expect(() => measureContextTokens(notAList as never)).toThrow(/is not an array of messages/);
      expect(() => estimateMessagesTokens(notAList as never)).toThrow(InvalidMessageError);
      expect(() => createTokenCountSession().count(notAList as never)).toThrow(InvalidMessageError);
    }
  });

  it("estimates list entries that are not messages as their JSON text", () => {
    const list = [null, 5, "text", { role: "assistant", usage: 3 }, createMessage("user", "hi")] as never;
    expectCount(tokenCountWithEstimation(list));
    expect(createTokenCountSession().count(list)).toEqual(measureContextTokens(list));
  });
});
