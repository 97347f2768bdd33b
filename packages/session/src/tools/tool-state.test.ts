import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createBuiltinTools } from "@unforget/tools";
import { describe, expect, it } from "vitest";
import { anthropicSuite, modelCalls, summaryText } from "../__fixtures__/session-kit.ts";
import { createAgentSession } from "../loop/agent-session.ts";

const suite = anthropicSuite("tool-state");

/** The content of the tool result that answers `toolUseId` in the last request. */
function resultOf(toolUseId: string): string {
  const messages = modelCalls(suite.fake).at(-1)?.messages as {
    content: { tool_use_id?: string; content?: unknown }[];
  }[];
  const block = messages.flatMap((message) => message.content).find((part) => part.tool_use_id === toolUseId);
  return JSON.stringify(block?.content ?? "");
}

describe("the tools' session state across a compaction", () => {
  it("brings back the todo list, and a re-read returns the file again instead of 'unchanged'", async () => {
    const workspace = join(suite.dir.path, "workspace");
    await mkdir(workspace, { recursive: true });
    const notes = join(workspace, "notes.md");
    await writeFile(notes, "# Notes\nThe parser ships as 2.4.1 on Friday.\n");
    const session = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      tools: createBuiltinTools({ bash: { outputDir: join(suite.dir.path, "bash-output") } }),
      sessionsDir: join(suite.dir.path, "sessions"),
      cwd: workspace,
      permissions: { mode: "bypassPermissions" },
    });
    const read = (id: string) => ({
      kind: "reply" as const,
      toolCalls: [{ id, name: "Read", input: { file_path: notes } }],
    });
    suite.fake.enqueue(
      read("read_1"),
      // A long output, so that a summary is smaller than the conversation (the user's own message is kept whole,
      // and the file read comes back after the compaction).
      { kind: "reply", toolCalls: [{ id: "bash_1", name: "Bash", input: { command: "seq 1 1500" } }] },
      {
        kind: "reply",
        toolCalls: [
          {
            id: "todo_1",
            name: "TodoWrite",
            input: {
              todos: [
                { content: "Ship the parser", status: "in_progress", activeForm: "Shipping the parser" },
              ],
            },
          },
        ],
      },
      { kind: "reply", text: "Read." },
    );
    await session.send("Read the notes.").result();
    expect(resultOf("read_1")).toContain("2.4.1 on Friday");

    suite.fake.enqueue({ kind: "reply", text: summaryText("The user asked to read the notes.") });
    await session.compact();
    // Without the compaction this re-read would answer "unchanged"; the content it points to is gone now.
    suite.fake.enqueue(read("read_2"), { kind: "reply", text: "Done." });
    await session.send("Read them once more.").result();
    const sent = JSON.stringify(modelCalls(suite.fake).at(-1));
    expect(sent).toContain("Ship the parser");
    expect(resultOf("read_2")).toContain("2.4.1 on Friday");
    await session.close();
  });

  it("a folder the user grants in a permission answer is one the tools may then use", async () => {
    const workspace = join(suite.dir.path, "workspace");
    const elsewhere = join(suite.dir.path, "elsewhere");
    await mkdir(workspace, { recursive: true });
    await mkdir(elsewhere, { recursive: true });
    const outside = join(elsewhere, "notes.md");
    await writeFile(outside, "Kept outside the project.\n");
    const asked: string[] = [];
    const session = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      tools: createBuiltinTools({ bash: { outputDir: join(suite.dir.path, "bash-output") } }),
      sessionsDir: join(suite.dir.path, "sessions"),
      cwd: workspace,
      canUseTool: async (_tool, _input, question) => {
        asked.push(question.blockedPath ?? "");
        return { behavior: "allow", updatedPermissions: question.suggestions };
      },
    });
    suite.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "read_out", name: "Read", input: { file_path: outside } }] },
      { kind: "reply", text: "Read it." },
    );
    await session.send("Read the notes next door.").result();
    expect(asked).toEqual([outside]);
    expect(resultOf("read_out")).toContain("Kept outside the project.");
    await session.close();
  });

  it("after a resume, files read before it may be edited, unless they changed on disk since", async () => {
    const workspace = join(suite.dir.path, "resume-workspace");
    await mkdir(workspace, { recursive: true });
    const plan = join(workspace, "plan.md");
    const log = join(workspace, "log.md");
    await writeFile(plan, "Ship on Friday.\n");
    await writeFile(log, "Nothing yet.\n");
    const options = {
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      tools: createBuiltinTools({ bash: { outputDir: join(suite.dir.path, "bash-output") } }),
      sessionsDir: join(suite.dir.path, "resume-sessions"),
      cwd: workspace,
      permissions: { mode: "bypassPermissions" as const },
    };
    const session = await createAgentSession(options);
    suite.fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          { id: "read_plan", name: "Read", input: { file_path: plan } },
          { id: "read_log", name: "Read", input: { file_path: log } },
        ],
      },
      { kind: "reply", toolCalls: [{ id: "bash_long", name: "Bash", input: { command: "seq 1 1500" } }] },
      { kind: "reply", text: "Read both." },
    );
    await session.send("Read the plan and the log.").result();
    // A compaction takes the Read results out of the context; the read state must not depend on them.
    suite.fake.enqueue({ kind: "reply", text: summaryText("The plan and the log were read.") });
    await session.compact();
    await session.close();
    // Someone changes the log while no session runs.
    await writeFile(log, "Changed by hand.\n");

    const resumed = await createAgentSession({ ...options, resume: session.sessionId });
    const edit = (id: string, path: string) => ({
      kind: "reply" as const,
      toolCalls: [
        { id, name: "Edit", input: { file_path: path, old_string: "Ship", new_string: "Release" } },
      ],
    });
    suite.fake.enqueue(edit("edit_plan", plan), edit("edit_log", log), { kind: "reply", text: "Done." });
    await resumed.send("Say release instead of ship.").result();
    expect(resultOf("edit_plan")).toContain("Edited");
    expect(await readFile(plan, "utf8")).toBe("Release on Friday.\n");
    expect(resultOf("edit_log")).toContain("has changed on disk since you read it");
    expect(await readFile(log, "utf8")).toBe("Changed by hand.\n");
    await resumed.close();
  });
});
