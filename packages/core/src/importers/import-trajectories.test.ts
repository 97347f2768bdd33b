import { describe, expect, it } from "vitest";
import { ImportError } from "../errors.ts";
import { findToolPairViolations } from "../tool-pairs.ts";
import { importMiniSweAgentTrajectory } from "./import-mini-swe-agent-trajectory.ts";
import { importOpenHandsEvaluationOutput, importOpenHandsTrajectory } from "./import-openhands-trajectory.ts";
import { importSweAgentTrajectory } from "./import-swe-agent-trajectory.ts";

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
      { role: "user", content: "Fix issue 12." },
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
    const [first, second, third] = result.messages;
    expect(first?.content[0]).toEqual({ type: "text", text: "Here is a demonstration." });
    expect(second).toMatchObject({
      role: "assistant",
      content: [
        { type: "text", text: "Look first." },
        { type: "tool_use", id: "c1", name: "bash", input: { command: "ls" } },
      ],
      metadata: { thought: "Look first.", action: "ls" },
    });
    expect(third?.content).toEqual([{ type: "tool_result", tool_use_id: "c1", content: "a.py" }]);
    expect(result.messages[3]?.content).toEqual([
      { type: "tool_use", id: "c2", name: "edit", input: { raw: "{broken" } },
    ]);
    expect(result.report.problems).toEqual([
      expect.objectContaining({ kind: "unparsed_arguments", location: { index: 5 } }),
    ]);
    // The demonstration and the task are consecutive user messages: merged, and reported as a repair.
    expect(result.report.repairs.map((repair) => [repair.kind, repair.location.index])).toEqual([
      ["merged_messages", 1],
      ["added_missing_tool_result", 5],
    ]);
    expect(result.report.counts).toMatchObject({ sourceItems: 6, toolPairs: 2, repairs: 2 });
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

  it("throws ImportError for input without events", () => {
    expect(() => importOpenHandsTrajectory("nothing here")).toThrow(ImportError);
    expect(() => importOpenHandsTrajectory({ history: [] })).toThrow(/OpenHands event stream/);
  });
});
