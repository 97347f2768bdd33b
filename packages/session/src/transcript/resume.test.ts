import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Tool } from "@unforget/core";
import type { HookPlugin } from "@unforget/hooks";
import { readTranscript } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import {
  anthropicSuite,
  echoTool,
  modelCalls,
  summaryText,
  transcriptViolations,
  waitForAbortTool,
} from "../__fixtures__/session-kit.ts";
import { type AgentSessionOptions, createAgentSession } from "../index.ts";
import { SessionNotFoundError } from "../loop/session-errors.ts";

const suite = anthropicSuite("resume");

/** Prints a large report: the tool-result budget persists it, so the context holds a layer edit. */
const reportTool: Tool = {
  name: "report",
  description: "Prints a long report.",
  inputSchema: { type: "object", properties: { part: { type: "number" } }, required: ["part"] },
  readOnly: true,
  concurrencySafe: true,
  async execute(input) {
    const lines = Array.from(
      { length: 800 },
      (_, line) => `part ${String(input.part)} line ${line}: all good`,
    );
    return { content: lines.join("\n"), isError: false };
  },
};

function options(sessionsDir: string, extra: Partial<AgentSessionOptions> = {}): AgentSessionOptions {
  return {
    provider: suite.provider,
    model: "claude-sonnet-4-6",
    system: "You are a careful agent.",
    tools: [echoTool, reportTool],
    sessionsDir,
    context: { limits: { contextWindow: 32_000, maxOutputTokens: 4_000 } },
    permissions: { mode: "bypassPermissions" },
    ...extra,
  };
}

describe("resume", () => {
  it("the next request of a resumed session is byte for byte the one the session would have sent", async () => {
    const original = join(suite.dir.path, "original");
    const copy = join(suite.dir.path, "copy");
    const session = await createAgentSession(options(original));
    for (let part = 0; part < 3; part++) {
      suite.fake.enqueue(
        {
          kind: "reply",
          text: `Reading part ${part}.`,
          toolCalls: [
            { id: `r${part}`, name: "report", input: { part } },
            { id: `e${part}`, name: "echo", input: { text: `part ${part}` } },
          ],
        },
        { kind: "reply", text: `Part ${part} is fine.` },
      );
      await session.send(`Check part ${part}.`).result();
    }
    suite.fake.enqueue({ kind: "reply", text: summaryText("Parts 0 to 2 were checked; all fine.") });
    await session.compact("Keep the part numbers.");
    suite.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "r3", name: "report", input: { part: 3 } }] },
      { kind: "reply", text: "Part 3 is fine." },
    );
    await session.send("Check part 3.").result();
    const { entries } = await readTranscript(session.transcriptPath, { quarantine: false });
    expect(entries.some((entry) => entry.type === "layer_decision")).toBe(true);
    expect(entries.some((entry) => entry.type === "compact_boundary")).toBe(true);

    await mkdir(copy, { recursive: true });
    await copyFile(session.transcriptPath, join(copy, `${session.sessionId}.jsonl`));
    suite.fake.enqueue({ kind: "reply", text: "Next." });
    await session.send("What next?").result();
    const expected = modelCalls(suite.fake).at(-1);
    await session.close();

    const resumed = await createAgentSession(options(copy, { resume: session.sessionId }));
    expect(resumed.sessionId).toBe(session.sessionId);
    suite.fake.enqueue({ kind: "reply", text: "Next." });
    await resumed.send("What next?").result();
    expect(JSON.stringify(modelCalls(suite.fake).at(-1))).toBe(JSON.stringify(expected));
    await resumed.close();
  });

  it("a session cut off while a tool ran resumes with that call answered as interrupted", async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const original = join(suite.dir.path, "original");
    const copy = join(suite.dir.path, "copy");
    const session = await createAgentSession(
      options(original, { tools: [waitForAbortTool(() => started())] }),
    );
    suite.fake.enqueue({ kind: "reply", toolCalls: [{ id: "w", name: "wait", input: {} }] });
    const turn = session.send("Wait.");
    await running;
    // The process dies here: what is on disk is the transcript up to the tool_use.
    await mkdir(copy, { recursive: true });
    await copyFile(session.transcriptPath, join(copy, `${session.sessionId}.jsonl`));
    session.interrupt();
    await turn.result();
    await session.close();

    const sources: string[] = [];
    const plugin: HookPlugin = {
      name: "sources",
      apply(hooks) {
        hooks.sessionStart.tapPromise("sources", async (attachments, event) => {
          sources.push(event.source);
          return attachments;
        });
      },
    };
    const resumed = await createAgentSession(
      options(copy, {
        resume: session.sessionId,
        tools: [waitForAbortTool(() => {})],
        hooks: { plugins: [plugin] },
      }),
    );
    suite.fake.enqueue({ kind: "reply", text: "It was interrupted; I will retry later." });
    const result = await resumed.send("What happened?").result();
    expect(result.text).toBe("It was interrupted; I will retry later.");
    expect(sources).toEqual(["resume"]);
    const { messages, violations } = await transcriptViolations(resumed.transcriptPath);
    expect(violations).toEqual([]);
    expect(JSON.stringify(messages)).toContain("did not complete");
    await resumed.close();
  });

  it("resuming an id that has no transcript is a SessionNotFoundError", async () => {
    await expect(
      createAgentSession(options(suite.dir.path, { resume: "no-such-session" })),
    ).rejects.toBeInstanceOf(SessionNotFoundError);
  });
});
