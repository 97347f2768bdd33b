import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { importSessionFile } from "@unforget/importers";
import { createTaskManager } from "@unforget/tasks";
import type { FakeStep } from "@unforget/testing/fakes";
import { describe, expect, it } from "vitest";
import { anthropicSuite, collect, echoTool, modelCalls, toolNames } from "../__fixtures__/session-kit.ts";
import { type AgentSessionOptions, createAgentSession } from "../index.ts";

const suite = anthropicSuite("agents");

const LEAD = "You are the lead engineer.";
const RESEARCHER = "You research questions and report briefly.";

/** The lead's replies and the researcher's, each in order, told apart by their system prompts. */
function script(lead: FakeStep[], researcher: FakeStep[]) {
  suite.fake.setResponder((request) => {
    const text = JSON.stringify(request.body);
    return (text.includes(RESEARCHER) ? researcher : lead).shift();
  });
}

function options(extra: Partial<AgentSessionOptions> = {}): AgentSessionOptions {
  return {
    provider: suite.provider,
    model: "claude-sonnet-4-6",
    system: LEAD,
    tools: [echoTool],
    sessionsDir: join(suite.dir.path, "sessions"),
    agents: { researcher: { description: "Looks things up.", prompt: RESEARCHER, tools: ["echo"] } },
    ...extra,
  };
}

const callAgent = (extra: Record<string, unknown> = {}): FakeStep => ({
  kind: "reply",
  toolCalls: [
    {
      id: "agent_1",
      name: "Agent",
      input: { description: "Find the answer", prompt: "What is X?", subagent_type: "researcher", ...extra },
    },
  ],
});

describe("the Agent tool", () => {
  it("runs a child session in the foreground: only its final report enters the parent, its transcript is a sidechain", async () => {
    script(
      [callAgent(), { kind: "reply", text: "X is 42, says the researcher." }],
      [
        { kind: "reply", toolCalls: [{ name: "echo", input: { text: "intermediate finding" } }] },
        { kind: "reply", text: "Report: X is 42." },
      ],
    );
    const session = await createAgentSession(options());
    const events = await collect(session.send("Find out what X is."));
    expect(events.at(-1)).toMatchObject({ stopReason: "end_turn", text: "X is 42, says the researcher." });
    const lead = modelCalls(suite.fake).filter((body) => !JSON.stringify(body).includes(RESEARCHER));
    const sent = JSON.stringify(lead.at(-1));
    expect(sent).toContain("Report: X is 42.");
    expect(sent).not.toContain("intermediate finding");
    expect(events.some((event) => event.type === "subagent" && event.event.type === "tool-end")).toBe(true);

    const child = modelCalls(suite.fake).find((body) => JSON.stringify(body).includes(RESEARCHER));
    expect(toolNames(child)).toEqual(["echo"]);

    const folder = join(suite.dir.path, "sessions", session.sessionId, "subagents");
    // Beside the transcript, the child's folder holds the outputs it saved (its tool is not reproducible).
    const file = (await readdir(folder)).find((name) => name.endsWith(".jsonl"));
    expect(file).toMatch(/^agent-.+\.jsonl$/);
    const imported = await importSessionFile(join(folder, file!));
    expect(imported.format).toBe("unforget");
    expect(JSON.stringify(imported.messages)).toContain("intermediate finding");
    expect(JSON.stringify(imported.entries)).toContain('"sidechain":true');
    await session.close();
  });

  it("a child cannot start a child beyond the configured depth", async () => {
    script([callAgent(), { kind: "reply", text: "Done." }], [{ kind: "reply", text: "Report." }]);
    const shallow = await createAgentSession(options());
    await shallow.send("Go.").result();
    const child = modelCalls(suite.fake).find((body) => JSON.stringify(body).includes(RESEARCHER));
    expect(toolNames(child)).not.toContain("Agent");
    await shallow.close();

    suite.fake.reset();
    script([callAgent(), { kind: "reply", text: "Done." }], [{ kind: "reply", text: "Report." }]);
    const deep = await createAgentSession(
      options({
        maxAgentDepth: 2,
        agents: { researcher: { description: "Looks things up.", prompt: RESEARCHER } },
      }),
    );
    await deep.send("Go.").result();
    const nested = modelCalls(suite.fake).find((body) => JSON.stringify(body).includes(RESEARCHER));
    expect(toolNames(nested)).toContain("Agent");
    await deep.close();
  });

  it("runs in the background as a local_agent task whose report reaches the model on the next turn", async () => {
    const tasks = await createTaskManager({ dir: join(suite.dir.path, "tasks") });
    try {
      script(
        [
          callAgent({ run_in_background: true }),
          { kind: "reply", text: "It runs." },
          { kind: "reply", text: "42." },
        ],
        [{ kind: "reply", text: "Report: X is 42 (from the background)." }],
      );
      const session = await createAgentSession(options({ tasks }));
      const first = await session.send("Research X in the background.").result();
      expect(JSON.stringify(first.messages)).toContain("in the background as task");
      const [task] = await tasks.list();
      expect(task?.type).toBe("local_agent");
      await tasks.wait(task!.id, { timeoutMs: 20_000 });
      await session.send("Any news?").result();
      expect(JSON.stringify(modelCalls(suite.fake).at(-1))).toContain(
        "Report: X is 42 (from the background).",
      );
      await session.close();
    } finally {
      await tasks.close();
    }
  });
});
