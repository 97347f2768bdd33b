import { expect } from "vitest";
import type { FakeStep } from "../fakes/fake-script.ts";

/** A fake that takes scripted steps and records what reached it. */
interface HoldingFake {
  enqueue(...steps: FakeStep[]): void;
  readonly requests: readonly unknown[];
}

/**
 * The held-reply check every fake shares: a reply held until the test releases it is not answered before, its
 * request is recorded meanwhile, and the released reply carries the scripted text. `send` makes one request and
 * resolves to the text of the answer as that wire shapes it.
 */
export async function expectHeldReply(fake: HoldingFake, send: () => Promise<unknown>): Promise<void> {
  let release: () => void = () => undefined;
  fake.enqueue({
    kind: "reply",
    text: "Released.",
    holdUntil: new Promise<void>((resolve) => (release = resolve)),
  });
  let settled = false;
  const answer = send().then((text) => {
    settled = true;
    return text;
  });
  await expect.poll(() => fake.requests.length).toBe(1);
  // Long enough for an answer that was not held to arrive; the check is that none did.
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(settled).toBe(false);
  release();
  expect(await answer).toBe("Released.");
}
