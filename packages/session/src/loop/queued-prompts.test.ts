import type { HookPlugin } from "@unforget/hooks";
import type { FakeStep } from "@unforget/testing/fakes";
import { describe, expect, it } from "vitest";
import {
  anthropicSuite,
  echoTool,
  isSummaryRequest,
  modelCalls,
  summaryText,
} from "../__fixtures__/session-kit.ts";
import { createAgentSession } from "./agent-session.ts";

const suite = anthropicSuite("queued");

/** The text of a request's message, whatever its blocks. */
const textOf = (message: { content: unknown }) => JSON.stringify(message.content);

describe("prompts sent while a compaction runs", () => {
  it("wait for it and land after the summary and its continuation, in the order they were sent", async () => {
    // A PreCompact plugin holds the compaction until the test lets it go.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const hold: HookPlugin = {
      name: "hold",
      apply(hooks) {
        hooks.preCompact.tapPromise("hold", async (result) => {
          started();
          await held;
          return result;
        });
      },
    };
    suite.fake.setResponder((request): FakeStep => {
      if (isSummaryRequest(request.body)) return { kind: "reply", text: summaryText("Echoed the words.") };
      const last = JSON.stringify((request.body as { messages: unknown[] }).messages.at(-1));
      return {
        kind: "reply",
        text: last.includes("tool_result") ? "Done." : "Echoing.",
        ...(last.includes("tool_result") ? {} : { toolCalls: [{ name: "echo", input: { text: "x" } }] }),
      };
    });
    const session = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      tools: [echoTool],
      sessionsDir: suite.dir.path,
      hooks: { plugins: [hold] },
    });
    for (const word of ["one", "two", "three", "four", "five", "six"]) {
      await session.send(`Echo ${word}. ${"Some context for it. ".repeat(150)}`).result();
    }
    const compaction = session.compact();
    await running;
    // Sent while the compaction is held: neither is refused.
    const first = session.send("First, after the compaction.");
    const second = session.send("Second, after the first.");
    release();
    const report = await compaction;
    expect(report.actions.map((action) => action.layer)).toEqual(["summary"]);
    const r1 = await first.result();
    expect(r1.text).toBe("Done.");
    expect((await second.result()).text).toBe("Done.");
    const requests = modelCalls(suite.fake).filter((body) => !isSummaryRequest(body));
    const firstRequest = requests.find((body) =>
      JSON.stringify(body).includes("First, after the compaction."),
    )!;
    const messages = firstRequest.messages as { role: string; content: unknown }[];
    // The summary (with its continuation) opens the request; the queued prompt follows it.
    expect(textOf(messages[0]!)).toContain("<continuation>");
    const at = messages.findIndex((message) => textOf(message).includes("First, after the compaction."));
    expect(at).toBeGreaterThan(0);
    const secondRequest = requests.find((body) => JSON.stringify(body).includes("Second, after the first."))!;
    const order = JSON.stringify(secondRequest.messages);
    expect(order.indexOf("First, after the compaction.")).toBeLessThan(
      order.indexOf("Second, after the first."),
    );
    await session.close();
  }, 60_000);
});
