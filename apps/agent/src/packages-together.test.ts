import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCallbackProvider, createContextManager } from "@unforget/compact";
import {
  contentBlocks,
  createMessage,
  findToolPairViolations,
  type Message,
  type RequestMessage,
} from "@unforget/core";
import { createSessionMemory, SESSION_NOTES_EDIT_TOOL } from "@unforget/memory";
import { createAnthropicProvider } from "@unforget/provider-anthropic";
import { createTaskManager, renderTaskStatus } from "@unforget/tasks";
import { startAnthropicFake } from "@unforget/testing/fakes";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/**
 * The packages as the app assembles them: @unforget/memory keeps the session notes (a real update call through
 * the Anthropic SDK against the fake), @unforget/compact compacts from those notes without a model call, and
 * @unforget/tasks' status of a running background task comes back after the compaction.
 */
describe("compact, memory and tasks together", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "unforget-together-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("compacts from the session notes and re-injects the running task", async () => {
    const fake = await startAnthropicFake();
    const tasks = await createTaskManager({ dir: join(dir, "tasks") });
    try {
      const provider = createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: fake.url });
      const conversation: Message[] = [
        createMessage("user", "Port the parser to the new tokenizer; run the build in the background."),
      ];
      const notes = await createSessionMemory({
        directory: join(dir, "session"),
        provider,
        model: "claude-sonnet-4-6",
      });
      const taskId = await tasks.start({
        type: "local_bash",
        command: "sleep 30",
        description: "build the parser",
      });
      const manager = createContextManager({
        model: "claude-sonnet-4-6",
        limits: { contextWindow: 32_000, maxOutputTokens: 4_000 },
        sessionMemory: notes,
        config: { earlyMark: false, collapse: false, microcompact: false },
        attachments: [
          createCallbackProvider("tasks", "task-status", async () => renderTaskStatus(await tasks.list())),
        ],
      });

      let request: RequestMessage[] = [];
      for (let turn = 0; turn < 40 && manager.status().compactions === 0; turn++) {
        const id = `toolu_${turn}`;
        conversation.push(
          createMessage("assistant", [{ type: "tool_use", id, name: "Task", input: { part: turn } }]),
        );
        conversation.push(
          createMessage("user", [
            {
              type: "tool_result",
              tool_use_id: id,
              content: Array.from({ length: 120 }, (_, line) => `part ${turn}: finding ${line}`).join("\n"),
            },
          ]),
        );
        if (turn === 10) {
          // The notes are updated by the model through their one permitted tool: editing that file.
          fake.enqueue(
            {
              kind: "reply",
              toolCalls: [
                {
                  name: SESSION_NOTES_EDIT_TOOL,
                  input: {
                    path: notes.notesPath,
                    old_string: "# Current State\n",
                    new_string:
                      "# Current State\nPorting the parser: parts 0-10 done; the build runs as a background task.\n",
                  },
                },
              ],
            },
            { kind: "reply", text: "Notes updated." },
          );
          const update = await notes.update(conversation);
          expect(update.changed).toBe(true);
        }
        request = (await manager.prepare(conversation)).messages;
      }

      expect(
        manager.entries.some(
          (entry) => entry.type === "compact_boundary" && entry.layer === "session-memory",
        ),
      ).toBe(true);
      const sent = JSON.stringify(request);
      expect(sent.includes("parts 0-10 done"), "the notes stand for the earlier part").toBe(true);
      expect(
        sent.includes(`${taskId} (local_bash) build the parser`),
        "the running task is re-injected",
      ).toBe(true);
      expect(sent.includes("Port the parser to the new tokenizer"), "the user's request is kept").toBe(true);
      expect(
        findToolPairViolations(
          request.map((message, index) => ({
            ...message,
            content: contentBlocks(message.content),
            id: `m${index}`,
            timestamp: "",
          })),
        ),
      ).toEqual([]);
      // No summary call was made: the only model calls were the notes update's.
      expect(fake.requests.filter((call) => call.operation !== "count_tokens")).toHaveLength(2);
      expect(await readFile(join(dir, "session", "session-memory.md"), "utf8")).toContain("parts 0-10 done");
    } finally {
      await tasks.stop((await tasks.list())[0]!.id).catch(() => undefined);
      await tasks.close();
      await fake.close();
    }
  });
});
