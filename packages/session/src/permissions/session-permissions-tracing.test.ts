import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import type { ModelProvider, Tool } from "@unforget/core";
import type { AnthropicFakeServer } from "@unforget/testing/fakes";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { anthropicSetup, collect, echoTool, modelCalls, tempDir } from "../__fixtures__/session-kit.ts";
import { createAgentSession } from "../loop/agent-session.ts";
import { createOpenTelemetryTracer } from "../telemetry/telemetry.ts";
import { createPermissionGate } from "./permission-gate.ts";
import type { CanUseToolOptions } from "./permission-types.ts";

let fake: AnthropicFakeServer;
let provider: ModelProvider;
let dir: { path: string; cleanup(): Promise<void> };

beforeAll(async () => {
  ({ fake, provider } = await anthropicSetup());
});
afterAll(async () => {
  await fake.close();
});
beforeEach(async () => {
  fake.reset();
  dir = await tempDir("permissions");
});
afterEach(async () => {
  await dir.cleanup();
});

const MODEL = "claude-sonnet-4-6";

/** A tool that changes something (not read-only): a note in memory. */
function noteTool(notes: string[]): Tool {
  return {
    name: "note",
    description: "Writes a note.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    async execute(input) {
      notes.push(String(input.text));
      return { content: "noted", isError: false };
    },
  };
}

describe("permissions in a session", () => {
  it("canUseTool is asked about what the defaults do not allow; an always-answer lasts for the session", async () => {
    const notes: string[] = [];
    const asked: { name: string; options: CanUseToolOptions }[] = [];
    const session = await createAgentSession({
      provider,
      model: MODEL,
      tools: [echoTool, noteTool(notes)],
      sessionsDir: dir.path,
      cwd: dir.path,
      canUseTool: async (tool, _input, options) => {
        asked.push({ name: tool.name, options });
        return { behavior: "allow", updatedPermissions: options.suggestions };
      },
    });
    fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          { id: "e", name: "echo", input: { text: "hi" } },
          { id: "n1", name: "note", input: { text: "first" } },
        ],
      },
      { kind: "reply", toolCalls: [{ id: "n2", name: "note", input: { text: "second" } }] },
      { kind: "reply", text: "Done." },
    );
    const events = await collect(session.send("Echo, then note twice."));
    expect(notes).toEqual(["first", "second"]);
    expect(asked.map((entry) => entry.name)).toEqual(["note"]);
    expect(asked[0]?.options.suggestions).toEqual([{ type: "addRules", behavior: "allow", rules: ["note"] }]);
    expect(events.filter((event) => event.type === "permission-request")).toHaveLength(1);
    await session.close();
  });

  it("a rule's denial reaches the model as an error result naming the rule; plan mode refuses what writes", async () => {
    const notes: string[] = [];
    const gate = createPermissionGate({ cwd: dir.path, mode: "plan", rules: { deny: ["echo"] } });
    const session = await createAgentSession({
      provider,
      model: MODEL,
      tools: [echoTool, noteTool(notes)],
      sessionsDir: dir.path,
      cwd: dir.path,
      permissions: gate.authorize,
    });
    fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          { id: "e", name: "echo", input: { text: "hi" } },
          { id: "n", name: "note", input: { text: "x" } },
        ],
      },
      { kind: "reply", text: "Understood." },
    );
    await collect(session.send("Try."));
    expect(notes).toEqual([]);
    const sent = JSON.stringify(modelCalls(fake).at(-1)?.messages);
    expect(sent).toContain('Permission denied: echo is refused by the deny rule \\"echo\\" (options rules)');
    expect(sent).toContain("plan mode allows read-only tools only");
    await session.close();
  });
});

describe("tracing a session", () => {
  it("records the turn, its model calls and its tool call as OpenTelemetry spans", async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const session = await createAgentSession({
      provider,
      model: MODEL,
      tools: [echoTool],
      sessionsDir: dir.path,
      cwd: dir.path,
      tracer: createOpenTelemetryTracer({ tracer: tracerProvider.getTracer("test") }),
    });
    fake.enqueue(
      { kind: "reply", toolCalls: [{ id: "e", name: "echo", input: { text: "hi" } }] },
      { kind: "reply", text: "Done." },
    );
    await collect(session.send("Echo."));
    await session.close();
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name).sort()).toEqual([
      "chat claude-sonnet-4-6",
      "chat claude-sonnet-4-6",
      "execute_tool echo",
      "invoke_agent unforget",
    ]);
    const turn = spans.find((span) => span.name === "invoke_agent unforget")!;
    for (const span of spans.filter((span) => span !== turn))
      expect(span.parentSpanContext?.spanId).toBe(turn.spanContext().spanId);
    const call = spans.find((span) => span.name === "chat claude-sonnet-4-6")!;
    expect(call.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": MODEL,
      "gen_ai.usage.output_tokens": expect.any(Number),
    });
  });
});
