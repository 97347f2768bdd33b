import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage } from "@unforget/core";
import { applyPlugins, createSessionHooks } from "@unforget/hooks";
import { describe, expect, it } from "vitest";
import { useFakeProvider } from "./__fixtures__/use-fake-provider.ts";
import { attachMemory } from "./attach-memory.ts";
import { createDreamJob } from "./dream.ts";
import { createMemoryDir } from "./memory-dir.ts";
import { formatMemoryFile } from "./memory-frontmatter.ts";
import { getMemoryHooks, type MemoryProposedEvent } from "./memory-hooks.ts";
import { createProposalQueue } from "./memory-proposals.ts";

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

      currentFake().enqueue({
        kind: "reply",
        toolCalls: [{ name: "select_memories", input: { names: ["deploy.md"] } }],
      });
      const recalled = await hooks.userPromptSubmit.promise([], {
        sessionId: "s1",
        prompt: "when do we deploy to staging?",
      });
      expect(recalled[0]?.kind).toBe("memory");
      expect(String(recalled[0]?.content)).toContain('<memory-data name="deploy.md"');

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
});
