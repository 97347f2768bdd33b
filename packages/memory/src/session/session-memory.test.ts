import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage, type Message } from "@unforget/core";
import { describeSessionMemorySourceContract } from "@unforget/testing/contract";
import { describe, expect, it } from "vitest";
import { useFakeProvider } from "../__fixtures__/use-fake-provider.ts";
import { createSessionMemory, SESSION_NOTES_EDIT_TOOL, type SessionMemory } from "./session-memory.ts";
import {
  decideSessionMemoryUpdate,
  INITIAL_TRIGGER_STATE,
  type SessionMemoryTriggerState,
} from "./session-memory-trigger.ts";
import {
  DEFAULT_SESSION_NOTES_TEMPLATE,
  isEmptyNotes,
  notesBudgetReminders,
  SESSION_NOTES_TRUNCATION_MARKER,
  truncateForCompact,
} from "./session-notes.ts";

const { fake: currentFake, provider } = useFakeProvider();

async function temporaryDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "session-memory-"));
}

function conversation(): Message[] {
  return [
    createMessage("user", "Rewrite the tokenizer without regular expressions.", { id: "m1" }),
    createMessage(
      "assistant",
      [{ type: "tool_use", id: "toolu_1", name: "Read", input: { path: "src/tokenizer.ts" } }],
      {
        id: "m2",
      },
    ),
  ];
}

describe("decideSessionMemoryUpdate", () => {
  const run = (turns: Array<[number, number]>, thresholds = {}) => {
    let state: SessionMemoryTriggerState = { ...INITIAL_TRIGGER_STATE };
    return turns.map(([contextTokens, toolCalls]) => {
      const decision = decideSessionMemoryUpdate(state, { contextTokens, toolCalls }, thresholds);
      state = decision.state;
      return decision.update;
    });
  };

  it("waits for the initial threshold, then needs growth AND (tool calls OR a natural break)", () => {
    expect(run([[9_999, 0]])).toEqual([false]);
    expect(run([[10_000, 0]])).toEqual([true]);
    expect(run([[10_000, 1]])).toEqual([false]);
    expect(run([[10_000, 3]])).toEqual([true]);
    // Updated at 10,000; 14,999 is not enough growth even at a natural break; 15,000 is.
    expect(
      run([
        [10_000, 0],
        [14_999, 0],
        [15_000, 0],
      ]),
    ).toEqual([true, false, true]);
    // Enough growth mid tool chain: wait for the third tool call or for a break.
    expect(
      run([
        [10_000, 0],
        [16_000, 1],
        [17_000, 1],
        [18_000, 1],
      ]),
    ).toEqual([true, false, false, true]);
    expect(
      run([
        [10_000, 0],
        [16_000, 1],
        [17_000, 0],
      ]),
    ).toEqual([true, false, true]);
    // Tool calls alone never trigger without growth.
    expect(
      run([
        [10_000, 0],
        [11_000, 5],
        [12_000, 5],
      ]),
    ).toEqual([true, false, false]);
  });

  it("counts growth from the smaller size after a compaction, and honours custom thresholds", () => {
    expect(
      run([
        [50_000, 0],
        [20_000, 0],
        [24_000, 0],
        [25_000, 0],
      ]),
    ).toEqual([true, false, false, true]);
    expect(
      run(
        [
          [500, 0],
          [1_000, 0],
          [1_200, 0],
        ],
        { initTokens: 1_000, minTokensBetweenUpdates: 100 },
      ),
    ).toEqual([false, true, true]);
  });
});

describe("session notes", () => {
  it("knows the empty template, reminds about budgets, and cuts sections for compaction with headers kept", () => {
    expect(isEmptyNotes(DEFAULT_SESSION_NOTES_TEMPLATE, DEFAULT_SESSION_NOTES_TEMPLATE)).toBe(true);
    const filled = DEFAULT_SESSION_NOTES_TEMPLATE.replace(
      "# Current State\n",
      "# Current State\nEditing parser.ts\n",
    );
    expect(isEmptyNotes(filled, DEFAULT_SESSION_NOTES_TEMPLATE)).toBe(false);

    const big = DEFAULT_SESSION_NOTES_TEMPLATE.replace(
      "# Worklog\n",
      `# Worklog\n${"- did a thing\n".repeat(2_000)}`,
    );
    const reminders = notesBudgetReminders(big, { sectionTokens: 2_000, totalTokens: 12_000 });
    expect(reminders).toMatch(/"Worklog" \(~\d+ tokens\)/);
    expect(notesBudgetReminders(big, { totalTokens: 1_000 })).toMatch(
      /CRITICAL: the notes are about \d+ tokens, over the 1000-token limit/,
    );
    expect(notesBudgetReminders(filled)).toBe("");

    const cut = truncateForCompact(big, 8_000);
    expect(cut).toContain(SESSION_NOTES_TRUNCATION_MARKER);
    for (const header of DEFAULT_SESSION_NOTES_TEMPLATE.split("\n").filter((line) => line.startsWith("# "))) {
      expect(cut).toContain(header);
    }
    expect((cut.split("# Worklog")[1] ?? "").length).toBeLessThan(8_200);
    expect(truncateForCompact(filled)).toBe(filled);
  });
});

describe("createSessionMemory", () => {
  it("updates the notes through a forked call whose only permitted tool edits that one file", async () => {
    const directory = await temporaryDir();
    try {
      const memory = await createSessionMemory({
        directory,
        provider: provider(),
        model: "claude-haiku-4-5",
      });
      currentFake().enqueue(
        {
          kind: "reply",
          toolCalls: [
            {
              name: SESSION_NOTES_EDIT_TOOL,
              input: {
                path: memory.notesPath,
                old_string: "# Current State\n",
                new_string: "# Current State\nRewriting the tokenizer.\n",
              },
            },
            {
              name: SESSION_NOTES_EDIT_TOOL,
              input: { path: "/etc/passwd", old_string: "root", new_string: "x" },
            },
            { name: "Bash", input: { command: "rm -rf /" } },
            {
              name: SESSION_NOTES_EDIT_TOOL,
              input: { path: memory.notesPath, old_string: "absent text", new_string: "x" },
            },
          ],
        },
        { kind: "reply", text: "Done." },
      );
      const before = currentFake().requests.length;
      const result = await memory.update(conversation());
      expect(result).toEqual({ changed: true, edits: 1, refused: 3, lastSummarizedMessageId: "m2" });
      const notes = await readFile(memory.notesPath, "utf8");
      expect(notes).toContain("# Current State\nRewriting the tokenizer.\n");
      expect(notes).toContain("# Worklog");

      const [first, second] = currentFake()
        .requests.slice(before)
        .map((request) => request.body as Record<string, never>);
      const tools = (first?.tools ?? []) as Array<{ name: string }>;
      expect(tools.map((tool) => tool.name)).toEqual([SESSION_NOTES_EDIT_TOOL]);
      const firstMessages = first?.messages as unknown as Array<{
        role: string;
        content: Array<Record<string, unknown>>;
      }>;
      // The unanswered tool call of the conversation got a result, so the request is valid.
      expect(firstMessages[2]?.content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_1" });
      const prompt = String(firstMessages.at(-1)?.content.at(-1)?.text ?? "");
      expect(prompt).toContain(`<current_notes>\n${DEFAULT_SESSION_NOTES_TEMPLATE}`);
      expect(prompt).toContain(memory.notesPath);
      const secondMessages = (second?.messages ?? []) as unknown as Array<{ content: unknown[] }>;
      const results = (secondMessages.at(-1)?.content ?? []) as Array<{
        is_error?: boolean;
        content: string;
      }>;
      expect(results.map((entry) => entry.is_error ?? false)).toEqual([false, true, true, true]);
      expect(results[2]?.content).toMatch(/Permission denied: only edit_session_notes/);
    } finally {
      await rm(directory, { recursive: true, force: true, maxRetries: 5 });
    }
  });

  it("updates in the background when the trigger fires, survives a resume, and reads custom templates", async () => {
    const directory = await temporaryDir();
    const configDir = join(directory, "config");
    try {
      await mkdir(configDir);
      await writeFile(
        join(configDir, "template.md"),
        "# Goal\n_What we are doing._\n\n# Notes\n_Anything else._\n",
      );
      await writeFile(join(configDir, "prompt.md"), "Edit {{notesPath}} now. Current: {{currentNotes}}");
      const messages = conversation();
      const memory = await createSessionMemory({
        directory,
        provider: provider(),
        model: "m",
        configDir,
        getMessages: () => messages,
      });
      expect(await memory.readNotes()).toBeUndefined();
      expect(memory.observe({ contextTokens: 4_000, toolCalls: 0 })).toBe(false);
      currentFake().enqueue(
        {
          kind: "reply",
          toolCalls: [
            {
              name: SESSION_NOTES_EDIT_TOOL,
              input: {
                path: memory.notesPath,
                old_string: "# Goal\n_What we are doing._\n",
                new_string: "# Goal\n_What we are doing._\nFaster tokenizer.\n",
              },
            },
          ],
        },
        { kind: "reply", text: "ok" },
      );
      const before = currentFake().requests.length;
      expect(memory.observe({ contextTokens: 12_000, toolCalls: 0 })).toBe(true);
      await memory.waitForPendingExtraction({ timeoutMs: 20_000 });
      const prompt = JSON.stringify(currentFake().requests[before]?.body);
      expect(prompt).toContain("Edit ");
      expect(prompt).toContain("Current: # Goal");
      const notes = await memory.readNotes();
      expect(notes?.text).toContain("Faster tokenizer.");
      expect(notes?.lastSummarizedMessageId).toBe("m2");
      expect(notes?.path).toBe(memory.notesPath);

      const resumed = await createSessionMemory({
        directory,
        provider: provider(),
        model: "m",
        configDir,
        getMessages: () => messages,
      });
      expect((await resumed.readNotes())?.text).toBe(notes?.text);
      expect((await resumed.readNotes())?.lastSummarizedMessageId).toBe("m2");
      // The trigger state came back too: 13,000 is not 5,000 more than the 12,000 of the last update.
      expect(resumed.observe({ contextTokens: 13_000, toolCalls: 0 })).toBe(false);
    } finally {
      await rm(directory, { recursive: true, force: true, maxRetries: 5 });
    }
  });

  it("never starts an update without a provider, and reports background failures to onError", async () => {
    const directory = await temporaryDir();
    try {
      const offline = await createSessionMemory({ directory, getMessages: conversation });
      expect(offline.observe({ contextTokens: 50_000, toolCalls: 0 })).toBe(false);
      const errors: unknown[] = [];
      const failing = await createSessionMemory({
        directory,
        provider: provider(),
        model: "m",
        getMessages: conversation,
        onError: (error) => errors.push(error),
      });
      currentFake().enqueue({ kind: "error", error: "invalid_request" });
      failing.requestUpdate?.("before-compaction");
      await failing.waitForPendingExtraction({ timeoutMs: 20_000 });
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(errors).toHaveLength(1);
      expect(await failing.readNotes()).toBeUndefined();
    } finally {
      await rm(directory, { recursive: true, force: true, maxRetries: 5 });
    }
  });
});

describeSessionMemorySourceContract({
  name: "createSessionMemory",
  async create() {
    const directory = await temporaryDir();
    const memory: SessionMemory = await createSessionMemory({ directory, provider: provider(), model: "m" });
    return {
      source: memory,
      template: DEFAULT_SESSION_NOTES_TEMPLATE,
      async setNotes(markdown, lastMessageId) {
        const current = await memory.readRaw();
        currentFake().enqueue(
          {
            kind: "reply",
            toolCalls: [
              {
                name: SESSION_NOTES_EDIT_TOOL,
                input: { path: memory.notesPath, old_string: current, new_string: markdown },
              },
            ],
          },
          { kind: "reply", text: "ok" },
        );
        await memory.update([createMessage("user", "work", { id: lastMessageId })]);
      },
      async startExtraction(outcome, minimumMs) {
        currentFake().enqueue(
          outcome === "success"
            ? { kind: "reply", text: "nothing to change", delayMs: minimumMs }
            : { kind: "error", error: "invalid_request", delayMs: minimumMs },
        );
        const finished = memory.update([createMessage("user", "work", { id: "m9" })]).then(
          () => undefined,
          () => undefined,
        );
        return { finished };
      },
      cleanup: () => rm(directory, { recursive: true, force: true, maxRetries: 5 }),
    };
  },
});
