import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage } from "@unforget/core";
import { applyPlugins, createSessionHooks } from "@unforget/hooks";
import { describe, expect, it } from "vitest";
import { useFakeProvider } from "./__fixtures__/use-fake-provider.ts";
import { attachMemory } from "./attach-memory.ts";
import { createMemoryDir } from "./dir/memory-dir.ts";
import { createDreamJob } from "./dream/dream.ts";
import { getMemoryHooks, type MemoryProposedEvent } from "./memory-hooks.ts";
import { formatMemoryFile } from "./store/memory-frontmatter.ts";
import { createProposalQueue } from "./store/memory-proposals.ts";

const { fake: currentFake, provider } = useFakeProvider();

describe("attachMemory", () => {
  it("loads the index at start, recalls for a prompt, extracts at the end with consent, and announces proposals", async () => {
    const parent = await mkdtemp(join(tmpdir(), "memory-attach-"));
    try {
      const store = await createMemoryDir({ root: join(parent, "memory") });
      await store.write(
        "deploy.md",
        formatMemoryFile(
          { name: "deploy", description: "Staging deploys run on Fridays", type: "project" },
          "Fridays.\n",
        ),
      );
      const proposals = createProposalQueue(join(store.storeFolder, "proposals"));
      const dream = createDreamJob({ store, stateFolder: join(store.storeFolder, "dream"), proposals });
      const proposed: MemoryProposedEvent[] = [];
      const hooks = createSessionHooks({ sessionId: "s1" });
      applyPlugins(hooks, [
        {
          name: "audit",
          apply(view) {
            getMemoryHooks(view).memoryProposed.tapPromise("audit", async (event) => {
              proposed.push(event);
            });
          },
        },
      ]);
      const messages = [createMessage("user", "Remember: I review every PR on Mondays.", { id: "u1" })];
      const session = attachMemory(hooks, {
        sessionId: "s1",
        store,
        proposals,
        dream,
        provider: provider(),
        model: "claude-haiku-4-5",
        getMessages: () => messages,
      });

      const start = await hooks.sessionStart.promise([], { sessionId: "s1", source: "startup" });
      expect(start[0]?.kind).toBe("memory-index");
      expect(String(start[0]?.content)).toContain("- [deploy](deploy.md) — Staging deploys run on Fridays");

      // One small memory: attached whole, with no selector call.
      const before = currentFake().requests.length;
      const recalled = await hooks.userPromptSubmit.promise([], {
        sessionId: "s1",
        prompt: "when do we deploy to staging?",
      });
      expect(recalled[0]?.kind).toBe("memory");
      expect(String(recalled[0]?.content)).toContain('<memory-data name="deploy.md"');
      expect(currentFake().requests.length).toBe(before);

      currentFake().enqueue(
        {
          kind: "reply",
          toolCalls: [
            {
              name: "memory_write",
              input: {
                name: "user_reviews.md",
                content: formatMemoryFile(
                  { name: "reviews", description: "User reviews every PR on Mondays", type: "user" },
                  "Mondays.\n",
                ),
              },
            },
          ],
        },
        { kind: "reply", text: "Done." },
      );
      await hooks.sessionEnd.promise({ sessionId: "s1", reason: "prompt_input_exit" });
      await session.idle();
      expect(session.extractions[0]?.saved).toEqual(["user_reviews.md"]);
      expect(proposed).toHaveLength(1);
      expect(proposed[0]).toMatchObject({ sessionId: "s1", names: ["user_reviews.md"] });
      // Consent defaults to propose: nothing was written behind the user's back.
      expect((await store.list()).map((entry) => entry.name)).toEqual(["deploy.md"]);
      expect(await proposals.list()).toHaveLength(1);
      expect((await dream.due()).reason).toBe("1 of 5 sessions since the last dream");
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });

  it("extracts in parallel with an auto compaction (auto consent writes and announces), never for a reactive one", async () => {
    const parent = await mkdtemp(join(tmpdir(), "memory-attach-"));
    try {
      const store = await createMemoryDir({ root: join(parent, "memory") });
      const written: string[][] = [];
      const hooks = createSessionHooks({ sessionId: "s2" });
      getMemoryHooks(hooks).memoryWritten.tapPromise("test", async (event) => {
        written.push(event.names);
      });
      const session = attachMemory(hooks, {
        sessionId: "s2",
        store,
        consent: "auto",
        provider: provider(),
        model: "m",
        recall: "off",
        getMessages: () => [createMessage("user", "Our staging database is Postgres 16.", { id: "u1" })],
      });
      const requests = currentFake().requests.length;
      await hooks.preCompact.promise(
        { instructions: "" },
        { sessionId: "s2", trigger: "reactive", tokens: 200_000, threshold: 167_000 },
      );
      await session.idle();
      expect(currentFake().requests.length).toBe(requests);
      currentFake().enqueue(
        {
          kind: "reply",
          toolCalls: [
            {
              name: "memory_write",
              input: {
                name: "project_staging_db.md",
                content: formatMemoryFile(
                  { name: "staging db", description: "Staging runs Postgres 16", type: "project" },
                  "Postgres 16.\n",
                ),
              },
            },
          ],
        },
        { kind: "reply", text: "Done." },
      );
      const result = await hooks.preCompact.promise(
        { instructions: "keep the schema" },
        { sessionId: "s2", trigger: "auto", tokens: 170_000, threshold: 167_000 },
      );
      expect(result.instructions).toBe("keep the schema");
      await session.idle();
      expect(written).toEqual([["project_staging_db.md"]]);
      expect((await store.list()).map((entry) => entry.name)).toEqual(["project_staging_db.md"]);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });

  it("extracts each new stretch once, never an unchanged one, and does not propose what waits for review", async () => {
    const parent = await mkdtemp(join(tmpdir(), "memory-attach-"));
    try {
      const store = await createMemoryDir({ root: join(parent, "memory") });
      const proposals = createProposalQueue(join(store.storeFolder, "proposals"));
      const hooks = createSessionHooks({ sessionId: "s3" });
      const messages = [createMessage("user", "Remember: I review every PR on Mondays.", { id: "u1" })];
      const cursors: string[] = [];
      const session = attachMemory(hooks, {
        sessionId: "s3",
        store,
        proposals,
        provider: provider(),
        model: "m",
        recall: "off",
        getMessages: () => messages,
        onExtracted: (through) => {
          cursors.push(through);
        },
      });
      const reviews = {
        kind: "reply" as const,
        toolCalls: [
          {
            name: "memory_write",
            input: {
              name: "user_reviews.md",
              content: formatMemoryFile(
                { name: "reviews", description: "User reviews every PR on Mondays", type: "user" },
                "Mondays.\n",
              ),
            },
          },
        ],
      };
      const compaction = { sessionId: "s3", trigger: "auto" as const, tokens: 170_000, threshold: 167_000 };
      currentFake().enqueue(reviews, { kind: "reply", text: "Done." });
      await hooks.preCompact.promise({ instructions: "" }, compaction);
      await session.idle();
      expect(await proposals.list()).toHaveLength(1);
      const requests = currentFake().requests.length;
      // Nothing new: a compaction that did nothing and the session's end make no call.
      await hooks.preCompact.promise({ instructions: "" }, { ...compaction, trigger: "manual" });
      await hooks.sessionEnd.promise({ sessionId: "s3", reason: "other" });
      await session.idle();
      expect(currentFake().requests.length).toBe(requests);
      // The user says it again: only the new stretch is read, and the same memory is not proposed twice.
      messages.push(
        createMessage("assistant", "Noted.", { id: "a1" }),
        createMessage("user", "As I said, PR reviews happen on Mondays.", { id: "u2" }),
      );
      currentFake().enqueue(reviews, { kind: "reply", text: "Done." });
      await hooks.sessionEnd.promise({ sessionId: "s3", reason: "other" });
      await session.idle();
      expect(await proposals.list()).toHaveLength(1);
      expect(session.extractions[1]?.skipped).toEqual([
        { name: "user_reviews.md", reason: expect.stringMatching(/^already proposed in /) },
      ]);
      const prompt = JSON.stringify(currentFake().requests[requests]?.body);
      expect(prompt).toContain("As I said, PR reviews happen on Mondays.");
      expect(prompt).not.toContain("Remember: I review every PR on Mondays.");
      expect(prompt).toContain("Already proposed and waiting for the user's review");
      expect(cursors).toEqual(["u1", "u2"]);
      // A resumed session starts after its cursor: nothing to extract.
      const resumedHooks = createSessionHooks({ sessionId: "s3" });
      const resumed = attachMemory(resumedHooks, {
        sessionId: "s3",
        store,
        proposals,
        provider: provider(),
        model: "m",
        recall: "off",
        getMessages: () => messages,
        extractedThrough: "u2",
      });
      const after = currentFake().requests.length;
      await resumedHooks.sessionEnd.promise({ sessionId: "s3", reason: "other" });
      await resumed.idle();
      expect(currentFake().requests.length).toBe(after);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});
