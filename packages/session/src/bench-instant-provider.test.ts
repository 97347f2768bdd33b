import type { ContentBlock } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { createInstantProvider } from "../bench/instant-provider.ts";

// The loop-overhead bench compares the session with a hand-written loop that builds new request message
// objects around the same contents every call. The bench's provider must charge both alike: it measures a
// content once, whichever message object carries it (keyed by the message object, it charged the baseline a
// full serialisation of the conversation per call, about 400 KB at 100K tokens).
describe("the bench's instant provider", () => {
  it("measures a content once, whatever message object carries it", async () => {
    let serialised = 0;
    const block = {
      type: "text",
      text: "x".repeat(4_000),
      toJSON() {
        serialised++;
        return { type: "text", text: this.text };
      },
    } as ContentBlock;
    const content = [block];
    const provider = createInstantProvider(() => ({ text: "done" }));
    const first = await provider.countTokens({ model: "m", messages: [{ role: "user", content }] });
    const again = await provider.countTokens({ model: "m", messages: [{ role: "user", content }] });
    expect(again).toEqual(first);
    expect(first.inputTokens).toBeGreaterThanOrEqual(1_000);
    expect(serialised).toBe(1);
  });
});
