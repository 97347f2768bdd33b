import { join } from "node:path";
import type { Tool } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { anthropicSuite, collect, modelCalls } from "../__fixtures__/session-kit.ts";
import { type AgentSessionOptions, createAgentSession } from "../index.ts";

const suite = anthropicSuite("permissions");

const ran: string[] = [];

/** Tools shaped like Read, Write and Bash: what a rule matches comes from their permission subject. */
function tools(): Tool[] {
  const run = (name: string) => async (input: Record<string, unknown>) => {
    ran.push(`${name} ${String(input.file_path ?? input.command)}`);
    return { content: `${name} ok`, isError: false };
  };
  return [
    {
      name: "Read",
      description: "Reads a file.",
      inputSchema: { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] },
      readOnly: true,
      concurrencySafe: true,
      permissionSubject: (input) => ({ kind: "path", path: String(input.file_path), access: "read" }),
      execute: run("Read"),
    },
    {
      name: "Write",
      description: "Writes a file.",
      inputSchema: { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] },
      permissionSubject: (input) => ({ kind: "path", path: String(input.file_path), access: "write" }),
      execute: run("Write"),
    },
    {
      name: "Bash",
      description: "Runs a command.",
      inputSchema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
      permissionSubject: (input) => ({ kind: "command", command: String(input.command) }),
      execute: run("Bash"),
    },
  ];
}

function options(extra: Partial<AgentSessionOptions>): AgentSessionOptions {
  return {
    provider: suite.provider,
    model: "claude-sonnet-4-6",
    tools: tools(),
    sessionsDir: join(suite.dir.path, "sessions"),
    cwd: suite.dir.path,
    ...extra,
  };
}

/** One turn in which the model calls Read, Write and Bash; what ran, and what the model was told. */
async function attempt(extra: Partial<AgentSessionOptions>) {
  ran.length = 0;
  const session = await createAgentSession(options(extra));
  suite.fake.enqueue(
    {
      kind: "reply",
      toolCalls: [
        { id: "read", name: "Read", input: { file_path: join(suite.dir.path, "a.txt") } },
        { id: "write", name: "Write", input: { file_path: join(suite.dir.path, "b.txt") } },
        { id: "bash", name: "Bash", input: { command: "rm -rf build" } },
      ],
    },
    { kind: "reply", text: "Done." },
  );
  const events = await collect(session.send("Do all three."));
  const sessionRules = (session.permissions?.rules() ?? [])
    .filter((rule) => rule.source.name === "session")
    .map((rule) => rule.text);
  await session.close();
  const sent = modelCalls(suite.fake).at(-1)?.messages as {
    content: { tool_use_id?: string; content?: unknown }[];
  }[];
  const results = Object.fromEntries(
    (sent.at(-1)?.content ?? []).flatMap((block) =>
      block.tool_use_id ? [[block.tool_use_id, String(block.content)]] : [],
    ),
  );
  return { ran: [...ran], results, events, sessionRules };
}

describe("permissions, in each mode", () => {
  it("default mode with no one to ask: read-only tools inside the working directory run, the rest is denied", async () => {
    const outcome = await attempt({});
    expect(outcome.ran).toEqual([`Read ${join(suite.dir.path, "a.txt")}`]);
    expect(outcome.results.write).toContain("There is no one to ask");
    expect(outcome.results.bash).toContain("There is no one to ask");
  });

  it("default mode asks canUseTool, with a permission-request event; an 'always' answer adds a session rule", async () => {
    const asked: string[] = [];
    const outcome = await attempt({
      canUseTool: async (tool, _input, question) => {
        asked.push(tool.name);
        return tool.name === "Bash"
          ? { behavior: "deny", message: "Not today." }
          : {
              behavior: "allow",
              updatedPermissions: question.suggestions.filter((s) => s.type === "addRules"),
            };
      },
    });
    expect(asked).toEqual(["Write", "Bash"]);
    expect(outcome.ran).toEqual([
      `Read ${join(suite.dir.path, "a.txt")}`,
      `Write ${join(suite.dir.path, "b.txt")}`,
    ]);
    expect(outcome.results.bash).toBe("Not today.");
    expect(outcome.sessionRules).toEqual([expect.stringMatching(/^Edit\(/)]);
    expect(
      outcome.events
        .filter((event) => event.type === "permission-request")
        .map((event) => event.type === "permission-request" && event.name),
    ).toEqual(["Write", "Bash"]);
    expect(
      outcome.events
        .filter((event) => event.type === "permission-decision")
        .map((event) => event.type === "permission-decision" && `${event.name} ${event.behavior}`),
    ).toEqual(["Write allow", "Bash deny"]);
    // Each call ends once, a denied one too (a second tool-end drew the denied call twice in the app).
    expect(
      outcome.events
        .filter((event) => event.type === "tool-end")
        .map((event) => event.type === "tool-end" && `${event.name} ${event.status}`),
    ).toEqual(["Read completed", "Write completed", "Bash denied"]);
  });

  it("acceptEdits lets file writes inside the working directory through and still asks about commands", async () => {
    const outcome = await attempt({ permissions: { mode: "acceptEdits" } });
    expect(outcome.ran).toEqual([
      `Read ${join(suite.dir.path, "a.txt")}`,
      `Write ${join(suite.dir.path, "b.txt")}`,
    ]);
    expect(outcome.results.bash).toContain("Permission denied");
  });

  it("plan mode runs read-only tools only", async () => {
    const outcome = await attempt({ permissions: { mode: "plan" } });
    expect(outcome.ran).toEqual([`Read ${join(suite.dir.path, "a.txt")}`]);
    expect(outcome.results.write).toContain("plan mode allows read-only tools only");
  });

  it("bypassPermissions runs everything but what a deny rule catches: deny beats allow", async () => {
    const outcome = await attempt({
      permissions: { mode: "bypassPermissions", rules: { deny: ["Bash(rm:*)"], allow: ["Bash"] } },
    });
    expect(outcome.ran).toEqual([
      `Read ${join(suite.dir.path, "a.txt")}`,
      `Write ${join(suite.dir.path, "b.txt")}`,
    ]);
    expect(outcome.results.bash).toContain('the deny rule "Bash(rm:*)"');
  });

  it("paths outside the working directories need permission even for reading", async () => {
    ran.length = 0;
    const session = await createAgentSession(options({}));
    suite.fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "out", name: "Read", input: { file_path: "/etc/hostname" } }] },
      { kind: "reply", text: "Done." },
    );
    await session.send("Read it.").result();
    await session.close();
    expect(ran).toEqual([]);
    expect(JSON.stringify(modelCalls(suite.fake).at(-1))).toContain("outside the working directories");
  });
});
