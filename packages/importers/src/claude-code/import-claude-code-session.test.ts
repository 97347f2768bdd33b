import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findToolPairViolations } from "@unforget/core";
import { afterEach, describe, expect, it } from "vitest";
import { ImportError } from "../shared/session-errors.ts";
import { importClaudeCodeSession } from "./import-claude-code-session.ts";
import { readClaudeCodeSessionDir } from "./read-claude-code-session-dir.ts";

const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;
let second = 0;
const at = () => `2025-09-01T10:00:${String(second++ % 60).padStart(2, "0")}.000Z`;
const line = (
  type: "user" | "assistant",
  uuid: string,
  parentUuid: string | null,
  message: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => ({ type, uuid, parentUuid, sessionId: "main-1", timestamp: at(), message, ...extra });
const task = (id: string, prompt: string) => ({
  type: "tool_use",
  id,
  name: "Task",
  input: { description: "explore", prompt, subagent_type: "general-purpose" },
});

/** A main session that spawns two subagents: one named by its Task result's agentId, one only by its prompt. */
function mainSession(): string {
  return jsonl([
    line("user", "u1", null, { role: "user", content: "Survey the repo" }),
    line("assistant", "a1", "u1", {
      id: "resp1",
      role: "assistant",
      content: [task("task-1", "List the packages"), task("task-2", "Count the tests")],
    }),
    line(
      "user",
      "r1",
      "a1",
      { role: "user", content: [{ type: "tool_result", tool_use_id: "task-1", content: "3 packages" }] },
      { toolUseResult: { status: "completed", agentId: "aaa111", totalTokens: 900 } },
    ),
    line("user", "r2", "r1", {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "task-2", content: "40 tests" }],
    }),
    line("assistant", "a2", "r2", {
      id: "resp2",
      role: "assistant",
      content: [{ type: "text", text: "Done" }],
    }),
  ]);
}

function subagent(agentId: string, prompt: string, answer: string): string {
  const extra = { isSidechain: true, agentId };
  return jsonl([
    line("user", `${agentId}-u`, null, { role: "user", content: prompt }, extra),
    line(
      "assistant",
      `${agentId}-a`,
      `${agentId}-u`,
      { id: `${agentId}-resp`, role: "assistant", content: [{ type: "text", text: answer }] },
      extra,
    ),
  ]);
}

const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

describe("importClaudeCodeSession", () => {
  it("imports subagents as separate conversations linked to the Task that spawned them", () => {
    const imported = importClaudeCodeSession({
      main: mainSession(),
      subagents: [
        { agentId: "bbb222", text: subagent("bbb222", "Count the tests", "40") },
        { agentId: "aaa111", text: subagent("aaa111", "List the packages", "core, testing, tokens") },
        { agentId: "ccc333", text: subagent("ccc333", "Something else", "?") },
      ],
    });
    expect(imported.main.messages.map((message) => message.id)).toEqual(["u1", "a1", "r1", "a2"]);
    expect(imported.main.report.counts.sidechainSkipped).toBe(0);
    expect(
      imported.subagents.map(({ agentId, parentToolUseId, parentMessageId, linkedBy }) => ({
        agentId,
        parentToolUseId,
        parentMessageId,
        linkedBy,
      })),
    ).toEqual([
      { agentId: "bbb222", parentToolUseId: "task-2", parentMessageId: "a1", linkedBy: "prompt" },
      { agentId: "aaa111", parentToolUseId: "task-1", parentMessageId: "a1", linkedBy: "agent_id" },
      { agentId: "ccc333", parentToolUseId: undefined, parentMessageId: undefined, linkedBy: undefined },
    ]);
    const first = imported.subagents[1]!.result;
    // The sidechain lines of a subagent file are its conversation, not skipped.
    expect(first.messages.map((message) => message.id)).toEqual(["aaa111-u", "aaa111-a"]);
    expect(first.report.counts.sidechainSkipped).toBe(0);
    expect(findToolPairViolations(first.messages)).toEqual([]);
    expect(first.entries[0]).toMatchObject({
      type: "metadata",
      data: {
        agentId: "aaa111",
        parentSessionId: "main-1",
        parentToolUseId: "task-1",
        parentMessageId: "a1",
      },
    });
    expect(imported.subagents[2]!.result.report.problems).toEqual([
      expect.objectContaining({ kind: "unlinked_subagent" }),
    ]);
  });

  it("rejects input that is not a session source", () => {
    expect(() => importClaudeCodeSession({} as never)).toThrow(ImportError);
  });
});

describe("readClaudeCodeSessionDir", () => {
  async function sessionOnDisk(): Promise<{ file: string; folder: string; main: string }> {
    const project = await mkdtemp(join(tmpdir(), "unforget-claude-session-"));
    folders.push(project);
    const file = join(project, "main-1.jsonl");
    const folder = join(project, "main-1");
    const main = mainSession();
    await writeFile(file, main);
    await mkdir(join(folder, "subagents"), { recursive: true });
    await mkdir(join(folder, "tool-results"), { recursive: true });
    await writeFile(join(folder, "tool-results", "x.txt"), "big output");
    await writeFile(
      join(folder, "subagents", "agent-bbb222.jsonl"),
      subagent("bbb222", "Count the tests", "40"),
    );
    await writeFile(
      join(folder, "subagents", "agent-aaa111.jsonl"),
      subagent("aaa111", "List the packages", "3"),
    );
    await writeFile(
      join(folder, "subagents", "agent-aaa111.meta.json"),
      JSON.stringify({ agentType: "Explore" }),
    );
    await writeFile(join(folder, "subagents", "agent-bbb222.meta.json"), "{not json");
    return { file, folder, main };
  }

  it("reads the main file and every subagent file, from the session file or its folder", async () => {
    const { file, folder, main } = await sessionOnDisk();
    const fromFile = await readClaudeCodeSessionDir(file);
    const fromFolder = await readClaudeCodeSessionDir(`${folder}/`);
    expect(fromFolder).toEqual(fromFile);
    expect(fromFile.main).toBe(main);
    expect(fromFile.subagents?.map(({ agentId, meta }) => ({ agentId, meta }))).toEqual([
      { agentId: "aaa111", meta: { agentType: "Explore" } },
      { agentId: "bbb222", meta: undefined },
    ]);
    const imported = importClaudeCodeSession(fromFile);
    expect(imported.subagents.map((item) => [item.agentId, item.parentToolUseId])).toEqual([
      ["aaa111", "task-1"],
      ["bbb222", "task-2"],
    ]);
    expect(imported.subagents[0]!.meta).toEqual({ agentType: "Explore" });
  });

  it("reads a session without a folder as one without subagents, and fails clearly when the file is missing", async () => {
    const project = await mkdtemp(join(tmpdir(), "unforget-claude-session-"));
    folders.push(project);
    await writeFile(join(project, "solo.jsonl"), mainSession());
    expect((await readClaudeCodeSessionDir(join(project, "solo.jsonl"))).subagents).toEqual([]);
    await expect(readClaudeCodeSessionDir(join(project, "missing"))).rejects.toThrow(
      /missing\.jsonl could not be read/,
    );
  });

  it("an unreadable subagent file is an ImportError naming it, not a bare Node error", async () => {
    const { file, folder } = await sessionOnDisk();
    await mkdir(join(folder, "subagents", "agent-ccc333.jsonl"));
    const error = await readClaudeCodeSessionDir(file).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ImportError);
    expect((error as Error).message).toContain("agent-ccc333.jsonl");
  });
});
