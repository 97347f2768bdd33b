import { type RequestMessage, withCacheBreakpoints } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { createPromptCache } from "./prompt-cache.ts";

const system = "You are a careful agent.";
const tools = [{ name: "Bash", inputSchema: { type: "object" } }];
const preamble = { system: 1_000, tools: 500 };
/** Every message counts 1,000 tokens, so the figures read easily. */
const count = () => 1_000;
const text = (role: "user" | "assistant", words: string): RequestMessage => ({
  role,
  content: [{ type: "text", text: words }],
});
const conversation = (turns: number) =>
  Array.from({ length: turns }, (_, turn) => text(turn % 2 === 0 ? "user" : "assistant", `turn ${turn}`));
const sent = (messages: RequestMessage[], ttl?: "1h") =>
  withCacheBreakpoints({ system, tools, messages }, ttl ? { ttl } : {});
const MINUTE = 60_000;

describe("createPromptCache", () => {
  it("reads what the previous request wrote and writes only what was added", () => {
    const cache = createPromptCache();
    expect(cache.bill(sent(conversation(3)), preamble, count, 0)).toEqual({
      tokens: 4_500,
      cacheReadTokens: 0,
      cacheWriteTokens: 4_500,
      uncachedTokens: 0,
    });
    expect(cache.bill(sent(conversation(5)), preamble, count, MINUTE)).toEqual({
      tokens: 6_500,
      cacheReadTokens: 4_500,
      cacheWriteTokens: 2_000,
      uncachedTokens: 0,
    });
  });

  it("after a change in the middle reads only the system prompt and tools, and rewrites the rest", () => {
    const cache = createPromptCache();
    cache.bill(sent(conversation(6)), preamble, count, 0);
    const edited = conversation(8);
    edited[2] = text("user", "a cleared tool output");
    expect(cache.bill(sent(edited), preamble, count, MINUTE)).toMatchObject({
      cacheReadTokens: 1_500,
      cacheWriteTokens: 8_000,
    });
  });

  it("moving the breakpoint does not change the prefix: the markers are not content", () => {
    const cache = createPromptCache();
    const first = sent(conversation(4));
    cache.bill(first, preamble, count, 0);
    // The next request has the marker on a later message; the earlier message now carries none.
    expect(JSON.stringify(sent(conversation(6)).messages[3])).not.toContain("cache_control");
    expect(cache.bill(sent(conversation(6)), preamble, count, MINUTE).cacheReadTokens).toBe(5_500);
  });

  it("takes a breakpoint on the last block inside a tool result as the result's own", () => {
    const result: RequestMessage = {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "t1",
          content: [{ type: "text", text: "output", cache_control: { type: "ephemeral" } }],
        },
      ],
    };
    const messages = [...conversation(3), result, ...conversation(3).slice(1)];
    const edited = [...messages];
    edited[5] = text("user", "folded");
    const nested = createPromptCache();
    nested.bill(sent(messages), preamble, count, 0);
    // With the marker inside the result, what precedes it (and the result) is read back after the change.
    expect(nested.bill(sent(edited), preamble, count, MINUTE).cacheReadTokens).toBe(5_500);
  });

  it("forgets everything after an idle gap longer than the lifetime, and keeps it for an hour when asked", () => {
    const short = createPromptCache();
    short.bill(sent(conversation(4)), preamble, count, 0);
    expect(short.bill(sent(conversation(6)), preamble, count, 6 * MINUTE)).toMatchObject({
      cacheReadTokens: 0,
      cacheWriteTokens: 7_500,
    });
    const long = createPromptCache({ ttl: "1h" });
    long.bill(sent(conversation(4), "1h"), preamble, count, 0);
    expect(long.bill(sent(conversation(6), "1h"), preamble, count, 50 * MINUTE).cacheReadTokens).toBe(5_500);
    // A read refreshes the entry's lifetime: four minutes after the last read is still warm.
    short.bill(sent(conversation(8)), preamble, count, 10 * MINUTE);
    short.bill(sent(conversation(10)), preamble, count, 14 * MINUTE);
    expect(short.bill(sent(conversation(12)), preamble, count, 18 * MINUTE).cacheReadTokens).toBe(11_500);
  });

  it("caches nothing without breakpoints, nor a prompt shorter than the minimum", () => {
    const cache = createPromptCache();
    const plain = { system, tools, messages: conversation(4) };
    cache.bill(plain, preamble, count, 0);
    expect(cache.bill(plain, preamble, count, MINUTE)).toMatchObject({
      cacheReadTokens: 0,
      uncachedTokens: 5_500,
    });
    const small = createPromptCache({ minimumCacheableTokens: 10_000 });
    small.bill(sent(conversation(4)), preamble, count, 0);
    expect(small.bill(sent(conversation(4)), preamble, count, MINUTE)).toMatchObject({
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      uncachedTokens: 5_500,
    });
  });

  it("finds an earlier entry only within 20 blocks of a breakpoint", () => {
    const cache = createPromptCache({ lookbackBlocks: 20 });
    cache.bill(sent(conversation(4)), preamble, count, 0);
    // 25 messages later the old entry is 25 blocks back: only the system prompt and tools are found.
    expect(cache.bill(sent(conversation(29)), preamble, count, MINUTE).cacheReadTokens).toBe(1_500);
    const near = createPromptCache({ lookbackBlocks: 20 });
    near.bill(sent(conversation(4)), preamble, count, 0);
    expect(near.bill(sent(conversation(20)), preamble, count, MINUTE).cacheReadTokens).toBe(5_500);
  });
});
