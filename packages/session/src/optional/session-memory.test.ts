import { join } from "node:path";
import type { Message } from "@unforget/core";
import {
  createMemoryDir,
  createProposalQueue,
  createSessionMemory,
  formatMemoryFile,
  SESSION_NOTES_EDIT_TOOL,
} from "@unforget/memory";
import type { FakeStep } from "@unforget/testing/fakes";
import { describe, expect, it } from "vitest";
import { anthropicSuite, modelCalls } from "../__fixtures__/session-kit.ts";
import { createAgentSession } from "../loop/agent-session.ts";

const suite = anthropicSuite("memory");

const MODEL = "claude-sonnet-4-6";

/**
 * Memory's own model calls, answered by content: the retrieval selector picks the release memory; an
 * extraction lists the memories in its first turn and writes one in its second.
 */
function memoryResponder(body: unknown): FakeStep | undefined {
  const text = JSON.stringify(body);
  if (text.includes("You choose which stored memories")) {
    return {
      kind: "reply",
      toolCalls: [{ name: "select_memories", input: { names: ["project_release.md"] } }],
    };
  }
  if (text.includes("[unforget memory extraction]")) {
    if (!text.includes("tool_result"))
      return { kind: "reply", toolCalls: [{ name: "memory_list", input: {} }] };
    return {
      kind: "reply",
      toolCalls: [
        {
          name: "memory_write",
          input: {
            name: "user_prefers_pnpm.md",
            content: formatMemoryFile(
              {
                name: "user_prefers_pnpm",
                description: "The user builds with pnpm, never npm",
                type: "feedback",
              },
              "Use pnpm for every install and script.\n",
            ),
          },
        },
      ],
    };
  }
  return undefined;
}

describe("memory", () => {
  it("brings the MEMORY.md index at start and the relevant memories per prompt, compacts from the session notes, and extracts at the end", async () => {
    const store = await createMemoryDir({ root: join(suite.dir.path, "memory") });
    await store.write(
      "project_release.md",
      formatMemoryFile(
        { name: "release", description: "Release day and version of the parser port", type: "project" },
        "The parser port ships as 2.4.1 on Friday.\n",
      ),
    );
    let messages: readonly Message[] = [];
    const notes = await createSessionMemory({
      directory: join(suite.dir.path, "notes"),
      provider: suite.provider,
      model: MODEL,
      getMessages: () => messages,
    });
    // Memory's calls are answered by content; the session's own, in order, from `main`.
    const main: FakeStep[] = [];
    suite.fake.setResponder((request) => memoryResponder(request.body) ?? main.shift());
    const session = await createAgentSession({
      provider: suite.provider,
      model: MODEL,
      sessionsDir: join(suite.dir.path, "sessions"),
      memory: { store, consent: "auto", sessionNotes: notes },
      // A small window, so that the notes stand for most of the history and a recent part stays verbatim.
      context: { limits: { contextWindow: 32_000, maxOutputTokens: 4_000 } },
    });
    messages = session.messages;

    // A long first answer: the notes stand for it, so that the compaction frees more than they and the recent part take.
    main.push({ kind: "reply", text: `Friday. ${"details ".repeat(1_500)}` });
    await session.send(`When does the parser port release? ${"context ".repeat(300)}`).result();
    const first = JSON.stringify(modelCalls(suite.fake).at(-1));
    expect(first).toContain("Memory index (MEMORY.md");
    expect(first).toContain("The parser port ships as 2.4.1 on Friday.");
    for (let index = 0; index < 3; index++) {
      main.push({ kind: "reply", text: `Step ${index}. ${"details ".repeat(300)}` });
      await session
        .send(`Go on with step ${index}. I always build with pnpm. ${"context ".repeat(300)}`)
        .result();
    }

    // The notes are kept by their own model call (scripted here), then stand in for the history.
    main.push(
      {
        kind: "reply",
        toolCalls: [
          {
            name: SESSION_NOTES_EDIT_TOOL,
            input: {
              path: notes.notesPath,
              old_string: "# Current State\n",
              new_string: "# Current State\nPorting the parser; release 2.4.1 on Friday; steps 0-2 done.\n",
            },
          },
        ],
      },
      { kind: "reply", text: "Notes updated." },
    );
    expect((await notes.update(session.messages)).changed).toBe(true);
    // The session's own calls: a memory extraction runs in the background after each turn and may come last.
    const mainCalls = () =>
      modelCalls(suite.fake).filter((body) => !JSON.stringify(body).includes("[unforget memory extraction]"));
    const before = mainCalls().length;
    const report = await session.compact();
    expect(report.actions.map((action) => action.layer)).toEqual(["session-memory"]);
    const after = mainCalls().length;
    expect(after).toBe(before);

    main.push({ kind: "reply", text: "Next." });
    await session.send("What is the state?").result();
    expect(JSON.stringify(mainCalls().at(-1))).toContain("steps 0-2 done");

    await session.close();
    const catalog = await store.catalog();
    expect(catalog.map((entry) => entry.name).sort()).toEqual(["project_release.md", "user_prefers_pnpm.md"]);
  });

  it("extracts a stretch of conversation once: a resumed session that adds nothing makes no extraction", async () => {
    const store = await createMemoryDir({ root: join(suite.dir.path, "memory-once") });
    const proposals = createProposalQueue(join(suite.dir.path, "proposals-once"));
    suite.fake.setResponder((request) => memoryResponder(request.body) ?? { kind: "reply", text: "Sure." });
    const options = {
      provider: suite.provider,
      model: MODEL,
      sessionsDir: join(suite.dir.path, "sessions-once"),
      memory: { store, proposals, consent: "propose" as const, recall: "off" as const },
    };
    const extractions = () =>
      modelCalls(suite.fake).filter((body) => JSON.stringify(body).includes("[unforget memory extraction]"))
        .length;
    const session = await createAgentSession(options);
    await session.send("I always build with pnpm.").result();
    const sessionId = session.sessionId;
    // A /compact that does nothing new and the end: the stretch is read once.
    await session.compact().catch(() => undefined);
    await session.close();
    const once = extractions();
    expect(once).toBeGreaterThan(0);
    expect(await proposals.list()).toHaveLength(1);
    const resumed = await createAgentSession({ ...options, resume: sessionId });
    await resumed.close();
    expect(extractions()).toBe(once);
    expect(await proposals.list()).toHaveLength(1);
  });
});
