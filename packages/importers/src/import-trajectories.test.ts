import { findToolPairViolations, getMessageText } from "@unforget/core";
import { loadCorpusFile, sampleCorpus } from "@unforget/testing/corpus";
import { describe, expect, it } from "vitest";
import { describeObservationsAsUserText } from "./__fixtures__/corpus-checks.ts";
import {
  importOpenHandsEvaluationOutput,
  importOpenHandsTrajectory,
} from "./openhands/import-openhands-trajectory.ts";
import { ImportError } from "./shared/session-errors.ts";
import { importMiniSweAgentTrajectory } from "./swe-agent/import-mini-swe-agent-trajectory.ts";
import { importSweAgentTrajectory } from "./swe-agent/import-swe-agent-trajectory.ts";

const call = (id: string, name: string, args: string) => ({
  id,
  type: "function",
  function: { name, arguments: args },
});

describe("importSweAgentTrajectory", () => {
  const trajectory = {
    history: [
      { role: "system", content: "You are an autonomous programmer.", message_type: "system_prompt" },
      { role: "user", content: "Here is a demonstration.", is_demo: true },
      { role: "user", content: "Fix bug 12." },
      {
        role: "assistant",
        content: "Look first.",
        thought: "Look first.",
        action: "ls",
        tool_calls: [call("c1", "bash", '{"command":"ls"}')],
      },
      { role: "tool", content: "a.py", tool_call_ids: ["c1"] },
      { role: "assistant", content: "", tool_calls: [call("c2", "edit", "{broken")] },
    ],
    info: { exit_status: "submitted" },
  };

  it("converts tool calls and results, takes the system prompt out and marks demonstrations", () => {
    const result = importSweAgentTrajectory(JSON.stringify(trajectory));
    expect(result.system).toBe("You are an autonomous programmer.");
    expect(findToolPairViolations(result.messages)).toEqual([]);
    const [demonstration, task, second, third] = result.messages;
    expect(demonstration).toMatchObject({
      isMeta: true,
      metadata: { isDemonstration: true },
      content: [{ type: "text", text: "Here is a demonstration." }],
    });
    expect(task).toMatchObject({ content: [{ type: "text", text: "Fix bug 12." }] });
    expect(task?.isMeta).toBeUndefined();
    expect(second).toMatchObject({
      role: "assistant",
      content: [
        { type: "text", text: "Look first." },
        { type: "tool_use", id: "c1", name: "bash", input: { command: "ls" } },
      ],
      metadata: { thought: "Look first.", action: "ls" },
    });
    expect(third?.content).toEqual([{ type: "tool_result", tool_use_id: "c1", content: "a.py" }]);
    expect(result.messages[4]?.content).toEqual([
      { type: "tool_use", id: "c2", name: "edit", input: { raw: "{broken" } },
    ]);
    expect(result.report.problems).toEqual([
      expect.objectContaining({ kind: "unparsed_arguments", location: { index: 5 } }),
    ]);
    // The demonstration stays its own meta message: only the lost result of the last call is repaired.
    expect(result.report.repairs.map((repair) => [repair.kind, repair.location.index])).toEqual([
      ["added_missing_tool_result", 5],
    ]);
    expect(result.report.counts).toMatchObject({ sourceItems: 6, toolPairs: 2, repairs: 1, metaMessages: 2 });
  });

  it("keeps demonstrations apart from the task in a whole run: filtering them keeps the task", () => {
    const result = importSweAgentTrajectory(
      loadCorpusFile("sweagent/sample/tinytime__tinytime-17.traj", sampleCorpus().dir),
    );
    const demonstrations = result.messages.filter((message) => message.metadata?.isDemonstration === true);
    expect(demonstrations).toHaveLength(1);
    expect(demonstrations[0]).toMatchObject({ isMeta: true, role: "user" });
    // The task is not inside the demonstration but in the message after it.
    const issue = "ISSUE:\nparse_duration rejects durations written with a space";
    expect(getMessageText(demonstrations[0]!)).not.toContain(issue);
    const rest = result.messages.filter((message) => message.metadata?.isDemonstration !== true);
    expect(rest[0]?.role).toBe("user");
    expect(getMessageText(rest[0]!)).toContain(issue);
    expect(findToolPairViolations(rest)).toEqual([]);
    expect(result.report.repairs.filter((repair) => repair.kind === "merged_messages")).toEqual([]);
  });

  it("accepts a parsed object and converts a steps-only trajectory", () => {
    const result = importSweAgentTrajectory({
      trajectory: [{ response: "I will run ls", action: "ls", observation: "a.py", thought: "t" }],
    });
    expect(result.messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
    expect(result.report.repairs[0]?.kind).toBe("inserted_leading_user_message");
  });

  it("throws ImportError for input that is not a trajectory", () => {
    expect(() => importSweAgentTrajectory("not json")).toThrow(ImportError);
    expect(() => importSweAgentTrajectory({ foo: 1 })).toThrow(/SWE-agent trajectory/);
    expect(() => importSweAgentTrajectory([1, 2])).toThrow(ImportError);
  });
});

describe("importMiniSweAgentTrajectory", () => {
  it("imports a bare message list and an object with messages", () => {
    const messages = [
      { role: "system", content: "Reply with one bash block." },
      { role: "user", content: "Solve it" },
      { role: "assistant", content: "```bash\nls\n```" },
      { role: "user", content: [{ type: "text", text: "<output>a.py</output>" }] },
    ];
    for (const input of [messages, { messages, info: {} }, JSON.stringify(messages)]) {
      const result = importMiniSweAgentTrajectory(input);
      expect(result.system).toBe("Reply with one bash block.");
      expect(result.messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
      expect(result.messages[2]?.content).toEqual([{ type: "text", text: "<output>a.py</output>" }]);
      expect(result.report.repairs).toEqual([]);
    }
    expect(() => importMiniSweAgentTrajectory({})).toThrow(ImportError);
  });
});

const response = (id: string, text: string, calls: ReturnType<typeof call>[]) => ({
  id,
  model: "claude-3-5-sonnet",
  choices: [
    { finish_reason: "tool_calls", message: { role: "assistant", content: text, tool_calls: calls } },
  ],
  usage: {
    prompt_tokens: 120,
    completion_tokens: 30,
    cache_read_input_tokens: 100,
    cache_creation_input_tokens: 0,
  },
});

describe("importOpenHandsTrajectory", () => {
  const parallel = response("resp-1", "Two reads at once.", [
    call("tc1", "read", '{"path":"a"}'),
    call("tc2", "read", '{"path":"b"}'),
  ]);
  const finish = response("resp-2", "", [call("tc3", "finish", "{}")]);
  const events = [
    { id: 0, source: "agent", action: "system", args: { content: "You are OpenHands." } },
    { id: 1, source: "environment", observation: "agent_state_changed", content: "", extras: {} },
    { id: 2, source: "user", action: "message", args: { content: "Read a and b" } },
    {
      id: 3,
      source: "agent",
      action: "read",
      args: { path: "a" },
      tool_call_metadata: { tool_call_id: "tc1", function_name: "read", model_response: parallel },
    },
    {
      id: 4,
      source: "agent",
      action: "read",
      args: { path: "b" },
      tool_call_metadata: { tool_call_id: "tc2", function_name: "read", model_response: parallel },
    },
    {
      id: 5,
      source: "agent",
      observation: "read",
      cause: 3,
      content: "A",
      tool_call_metadata: { tool_call_id: "tc1" },
    },
    { id: 6, source: "agent", observation: "error", cause: 4, content: "No such file b" },
    {
      id: 7,
      source: "agent",
      action: "finish",
      args: { final_thought: "done" },
      tool_call_metadata: { tool_call_id: "tc3", function_name: "finish", model_response: finish },
    },
  ];

  it("builds one assistant message per model response and links observations by tool call id or cause", () => {
    const result = importOpenHandsTrajectory(events);
    expect(result.system).toBe("You are OpenHands.");
    expect(findToolPairViolations(result.messages)).toEqual([]);
    const [task, reads, results] = result.messages;
    expect(task?.content).toEqual([{ type: "text", text: "Read a and b" }]);
    expect(reads).toMatchObject({
      role: "assistant",
      responseId: "resp-1",
      usage: { inputTokens: 20, outputTokens: 30, cacheReadInputTokens: 100 },
      content: [
        { type: "text", text: "Two reads at once." },
        { type: "tool_use", id: "tc1", input: { path: "a" } },
        { type: "tool_use", id: "tc2", input: { path: "b" } },
      ],
    });
    expect(results?.content).toEqual([
      { type: "tool_result", tool_use_id: "tc1", content: "A" },
      { type: "tool_result", tool_use_id: "tc2", content: "No such file b", is_error: true },
    ]);
    // finish is a tool call that OpenHands never answers: the missing result is added and reported.
    expect(result.report.repairs).toEqual([
      expect.objectContaining({
        kind: "added_missing_tool_result",
        toolUseId: "tc3",
        location: expect.objectContaining({ eventId: 7 }),
      }),
    ]);
    expect(result.report.counts).toMatchObject({
      sourceItems: 8,
      toolPairs: 3,
      mergedSourceItems: 2,
      skippedByType: { "environment:observation:agent_state_changed": 1 },
    });
  });

  it("pairs actions and observations of older logs without ids or tool call metadata", () => {
    const result = importOpenHandsTrajectory([
      { action: "message", content: "License it" },
      { action: "run", command: "touch LICENSE", thought: "Create it." },
      { observation: "run", content: "ok", command: "touch LICENSE", exit_code: 0 },
      { action: "finish", thought: "All done." },
    ]);
    expect(findToolPairViolations(result.messages)).toEqual([]);
    expect(result.report.repairs).toEqual([]);
    expect(result.messages[1]?.content).toEqual([
      { type: "text", text: "Create it." },
      { type: "tool_use", id: "openhands-1", name: "run", input: { command: "touch LICENSE" } },
    ]);
    expect(result.messages[2]?.content).toEqual([
      { type: "tool_result", tool_use_id: "openhands-1", content: "ok" },
    ]);
    expect(result.messages[3]?.content).toEqual([{ type: "text", text: "All done." }]);
  });

  it("imports every instance of evaluation output, and reports the extra ones when importing one", () => {
    const line = (instance: string) =>
      JSON.stringify({
        instance_id: instance,
        history: [{ id: 1, source: "user", action: "message", args: { content: `task ${instance}` } }],
      });
    const text = `${line("a")}\n${line("b")}\n`;
    const all = importOpenHandsEvaluationOutput(text);
    expect(all.map((item) => [item.line, item.instanceId, item.result.messages.length])).toEqual([
      [1, "a", 1],
      [2, "b", 1],
    ]);
    const first = importOpenHandsTrajectory(text);
    expect(first.messages[0]?.content).toEqual([{ type: "text", text: "task a" }]);
    expect(first.report.problems).toEqual([
      expect.objectContaining({ kind: "additional_instances", location: { line: 2 } }),
    ]);
  });

  it("turns a condensation with a summary into a boundary, a summary and a summary message", () => {
    const run = (id: number, toolCallId: string) => ({
      id,
      source: "agent",
      action: "run",
      args: { command: `step ${id}` },
      tool_call_metadata: {
        tool_call_id: toolCallId,
        function_name: "execute_bash",
        model_response: response(`resp-${id}`, "", [
          call(toolCallId, "execute_bash", `{"command":"step ${id}"}`),
        ]),
      },
    });
    const output = (id: number, cause: number, toolCallId: string) => ({
      id,
      source: "agent",
      observation: "run",
      cause,
      content: `output ${cause}`,
      tool_call_metadata: { tool_call_id: toolCallId },
    });
    const result = importOpenHandsTrajectory([
      { id: 1, source: "user", action: "message", args: { content: "Fix the build" } },
      run(2, "tc2"),
      output(3, 2, "tc2"),
      run(4, "tc4"),
      output(5, 4, "tc4"),
      { id: 6, source: "agent", action: "condensation_request", args: {} },
      {
        id: 7,
        source: "agent",
        action: "condensation",
        message: "Summary: Ran two builds",
        args: {
          forgotten_event_ids: null,
          forgotten_events_start_id: 2,
          forgotten_events_end_id: 5,
          summary: "Ran two builds; both failed on lint.",
          summary_offset: 1,
        },
      },
      {
        id: 8,
        source: "agent",
        observation: "condensation",
        content: "Ran two builds; both failed on lint.",
      },
      run(9, "tc9"),
      output(10, 9, "tc9"),
      {
        id: 11,
        source: "agent",
        action: "condensation",
        args: { forgotten_event_ids: [9, 10], summary: null },
      },
      { id: 12, source: "agent", action: "message", args: { content: "The build is green." } },
    ]);
    expect(result.entries.map((entry) => (entry.type === "message" ? entry.id : entry.type))).toEqual([
      "openhands-1",
      "openhands-2",
      "openhands-3",
      "openhands-4",
      "openhands-5",
      "compact_boundary",
      "summary",
      "openhands-7",
      "openhands-9",
      "openhands-10",
      "layer_decision",
      "openhands-12",
    ]);
    expect(result.entries[5]).toMatchObject({
      type: "compact_boundary",
      layer: "openhands",
      messagesSummarized: 4,
      logicalParentId: "openhands-5",
      preservedSegment: { anchorId: "openhands-7", messageIds: ["openhands-1"] },
    });
    expect(result.entries[6]).toMatchObject({
      type: "summary",
      kind: "compact",
      text: "Ran two builds; both failed on lint.",
      boundaryId: result.entries[5]!.id,
    });
    expect(result.messages[0]).toMatchObject({
      id: "openhands-7",
      role: "user",
      isMeta: true,
      isCompactSummary: true,
      content: [{ type: "text", text: "Ran two builds; both failed on lint." }],
    });
    expect(result.entries[10]).toMatchObject({
      type: "layer_decision",
      layer: "openhands-condenser",
      edits: [{ kind: "forget_events", messageIds: ["openhands-9", "openhands-10"] }],
    });
    expect(findToolPairViolations(result.messages)).toEqual([]);
    expect(result.report.repairs).toEqual([]);
    expect(result.report.counts).toMatchObject({
      boundaries: 1,
      summaries: 1,
      liveMessages: 4,
      skippedByType: {
        "agent:action:condensation_request": 1,
        "agent:action:condensation(no summary)": 1,
      },
    });
  });

  it("accepts the older condensation observation that carries the summary as content", () => {
    const result = importOpenHandsTrajectory([
      { id: 1, source: "user", action: "message", args: { content: "Start" } },
      { id: 2, source: "agent", action: "message", args: { content: "Working" } },
      { id: 3, source: "user", observation: "condensation", content: "The user asked to start; work began." },
      { id: 4, source: "agent", action: "message", args: { content: "Still working" } },
    ]);
    expect(result.report.counts.boundaries).toBe(1);
    expect(result.messages.map((message) => [message.role, message.isCompactSummary ?? false])).toEqual([
      ["user", true],
      ["assistant", false],
    ]);
  });

  it("throws ImportError for input without events", () => {
    expect(() => importOpenHandsTrajectory("nothing here")).toThrow(ImportError);
    expect(() => importOpenHandsTrajectory({ history: [] })).toThrow(/OpenHands event stream/);
  });
});

describeObservationsAsUserText(sampleCorpus());
