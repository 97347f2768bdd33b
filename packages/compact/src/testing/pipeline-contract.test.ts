import { type Message, PromptTooLongError } from "@unforget/core";
import { estimateMessagesTokens } from "@unforget/tokens";
import { toRequestMessages } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { ContextOverflowError } from "../compact-error.ts";
import { type ContextManager, createContextManager, type PrepareResult } from "../manager/context-manager.ts";
import { checkRecoverGuarantee, type ManagerUnderTest } from "./pipeline-contract.ts";

// The contract's own test: a guarantee that a manager breaking it still passes is no guarantee. Each broken
// manager here is a test double a third party could have written, run through the contract's checks.

const ours = ({ window, options }: ManagerUnderTest) =>
  createContextManager({
    model: "contract-self-test",
    limits: { contextWindow: window, maxOutputTokens: Math.min(8_000, Math.floor(window / 4)) },
    ...options,
  });

/** A manager that sends the conversation as it is, and whose `recover()` does what `behaviour` says. */
function plainManager(
  window: number,
  behaviour: (tokens: number, result: () => PrepareResult) => Promise<PrepareResult>,
): ContextManager {
  let view: readonly Message[] = [];
  const tokens = () => Math.ceil((estimateMessagesTokens(view) * 4) / 3);
  const status = () => ({
    tokens: tokens(),
    contextWindow: window,
    effectiveWindow: window,
    threshold: window,
    blockingLimit: window,
    percentUsed: (100 * tokens()) / window,
    turnsUntilCompaction: undefined,
    compactions: 0,
    recompactionChain: 0,
    failures: {},
  });
  const result = (): PrepareResult => ({
    messages: toRequestMessages(view),
    projected: [...view],
    tokensBefore: tokens(),
    tokens: tokens(),
    actions: [],
    status: status(),
  });
  return {
    async prepare(messages) {
      view = [...messages];
      return result();
    },
    recover: () => behaviour(tokens(), result),
    async compact() {
      return result();
    },
    requestCompaction() {},
    requestSnip() {},
    pin: () => Promise.reject(new Error("not pinned here")),
    unpin: async () => false,
    pins: () => ({ items: [], tokens: 0, capTokens: 0, maxShare: 0.25 }),
    async recordMetadata() {},
    status,
    layers: [],
    entries: [],
    on: () => () => {},
  };
}

describe("the recover() guarantee of describeContextManagerContract", () => {
  it("holds for the default ladder", async () => {
    await expect(checkRecoverGuarantee(ours)).resolves.toBeUndefined();
  });

  it("fails a manager whose recover() always gives up with ContextOverflowError", async () => {
    const givesUp = ({ window }: ManagerUnderTest) =>
      plainManager(window, async (tokens) => {
        throw new ContextOverflowError(
          tokens,
          window,
          "Nothing can be compacted; the transcript is intact. Start a new session.",
        );
      });
    await expect(checkRecoverGuarantee(givesUp)).rejects.toThrow(
      /gave up before any round shrank the context/,
    );
  });

  it("fails a manager whose recover() sends the refused request again", async () => {
    const resends = ({ window }: ManagerUnderTest) =>
      plainManager(window, async (_tokens, result) => result());
    await expect(checkRecoverGuarantee(resends)).rejects.toThrow(/round 0/);
  });

  it("fails a manager that gives up at once when the newest turn alone is over the limit", async () => {
    // Recovers like ours while the limit is in reach; below half the context it gives up without trying,
    // although the older rounds could have been summarised.
    const impatient = (context: ManagerUnderTest): ContextManager => {
      const manager = ours(context);
      return {
        ...manager,
        prepare: (messages, options) => manager.prepare(messages, options),
        status: () => manager.status(),
        async recover(error, options) {
          const tokens = manager.status().tokens;
          if (error instanceof PromptTooLongError && (error.limitTokens ?? 0) < tokens / 2) {
            throw new ContextOverflowError(
              tokens,
              error.limitTokens ?? 0,
              "The newest turn does not fit; the transcript is intact.",
            );
          }
          return manager.recover(error, options);
        },
      };
    };
    await expect(checkRecoverGuarantee(impatient)).rejects.toThrow(/gave up without shrinking what it could/);
  });
});
