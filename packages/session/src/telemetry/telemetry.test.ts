import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { ProviderRequestError, type Usage } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { noopTracer } from "./session-tracer.ts";
import { createOpenTelemetryTracer } from "./telemetry.ts";

const usage: Usage = {
  inputTokens: 100,
  outputTokens: 20,
  cacheReadInputTokens: 1000,
  cacheCreationInputTokens: 50,
};

function recorded() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: createOpenTelemetryTracer({ tracer: provider.getTracer("test") }) };
}

describe("createOpenTelemetryTracer", () => {
  it("records a turn with its model call, tool call and compaction, named and nested by the GenAI conventions", () => {
    const { exporter, tracer } = recorded();
    const turn = tracer.startSpan({
      kind: "turn",
      sessionId: "s1",
      model: "claude-sonnet-4-5",
      providerId: "bedrock",
    });
    const call = tracer.startSpan(
      {
        kind: "model-call",
        sessionId: "s1",
        model: "claude-sonnet-4-5",
        providerId: "bedrock",
        maxTokens: 8192,
        turn: 1,
      },
      turn,
    );
    call.end({ usage, stopReason: "tool_use", responseId: "msg_1" });
    const tool = tracer.startSpan(
      { kind: "tool-call", sessionId: "s1", toolName: "Bash", toolUseId: "toolu_1" },
      turn,
    );
    tool.end({ isError: false });
    const mcp = tracer.startSpan(
      { kind: "tool-call", sessionId: "s1", toolName: "mcp__github__get_issue", toolUseId: "toolu_2" },
      turn,
    );
    mcp.end({ isError: true });
    const compaction = tracer.startSpan(
      {
        kind: "compaction",
        sessionId: "s1",
        layer: "microcompact",
        trigger: "proactive",
        startTime: Date.UTC(2026, 0, 1),
      },
      turn,
    );
    compaction.end({ tokensBefore: 30_000, tokensAfter: 12_000 });
    turn.end({ stopReason: "end_turn", turns: 2 });

    const spans = exporter.getFinishedSpans();
    const byName = Object.fromEntries(spans.map((span) => [span.name, span]));
    expect(Object.keys(byName).sort()).toEqual([
      "chat claude-sonnet-4-5",
      "compaction microcompact",
      "execute_tool Bash",
      "execute_tool mcp__github__get_issue",
      "invoke_agent unforget",
    ]);
    const root = byName["invoke_agent unforget"]!;
    for (const span of spans.filter((span) => span !== root)) {
      expect(span.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(root.spanContext().traceId);
    }
    expect(root.attributes).toEqual({
      "gen_ai.conversation.id": "s1",
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "unforget",
      "gen_ai.provider.name": "aws.bedrock",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.response.finish_reasons": ["end_turn"],
      "unforget.turn.model_calls": 2,
    });
    expect(byName["chat claude-sonnet-4-5"]!.kind).toBe(2);
    expect(byName["chat claude-sonnet-4-5"]!.attributes).toEqual({
      "gen_ai.conversation.id": "s1",
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "aws.bedrock",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.request.max_tokens": 8192,
      "unforget.turn.model_call": 1,
      "gen_ai.usage.input_tokens": 1150,
      "gen_ai.usage.output_tokens": 20,
      "gen_ai.usage.cache_read.input_tokens": 1000,
      "gen_ai.usage.cache_creation.input_tokens": 50,
      "gen_ai.response.finish_reasons": ["tool_use"],
      "gen_ai.response.id": "msg_1",
    });
    expect(byName["execute_tool Bash"]!.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "Bash",
      "gen_ai.tool.call.id": "toolu_1",
      "gen_ai.tool.type": "function",
    });
    expect(byName["execute_tool Bash"]!.status.code).toBe(0);
    expect(byName["execute_tool mcp__github__get_issue"]!.attributes).toMatchObject({
      "gen_ai.tool.type": "extension",
      "error.type": "tool_error",
    });
    expect(byName["execute_tool mcp__github__get_issue"]!.status.code).toBe(2);
    expect(byName["compaction microcompact"]!.attributes).toMatchObject({
      "unforget.compaction.layer": "microcompact",
      "unforget.compaction.trigger": "proactive",
      "unforget.compaction.tokens_before": 30_000,
      "unforget.compaction.tokens_after": 12_000,
    });
    expect(byName["compaction microcompact"]!.startTime).toEqual([Date.UTC(2026, 0, 1) / 1000, 0]);
  });

  it("records a failed model call with its error type, and ends a span once", () => {
    const { exporter, tracer } = recorded();
    const call = tracer.startSpan({
      kind: "model-call",
      sessionId: "s",
      model: "m",
      providerId: "anthropic",
      maxTokens: 1,
      turn: 1,
    });
    call.end({
      error: new ProviderRequestError("overloaded", {
        providerId: "anthropic",
        status: 529,
        retryable: true,
      }),
    });
    call.end({ usage });
    const [span] = exporter.getFinishedSpans();
    expect(exporter.getFinishedSpans()).toHaveLength(1);
    expect(span?.status).toEqual({ code: 2, message: "overloaded" });
    expect(span?.attributes["error.type"]).toBe("provider_request");
    expect(span?.events.map((event) => event.name)).toEqual(["exception"]);
    expect(span?.attributes["gen_ai.usage.input_tokens"]).toBeUndefined();
  });

  it("uses the global provider by default: with none registered, spans are no-ops", () => {
    const tracer = createOpenTelemetryTracer();
    expect(tracer).not.toBe(noopTracer);
    const span = tracer.startSpan({ kind: "turn", sessionId: "s", model: "m", providerId: "vertex" });
    expect(() => span.end({ stopReason: "end_turn" })).not.toThrow();
    expect(trace.getActiveSpan()).toBeUndefined();
  });

  it("a tracer that throws never reaches the loop", () => {
    const tracer = createOpenTelemetryTracer({
      tracer: {
        startSpan() {
          throw new Error("exporter down");
        },
      },
    });
    expect(() =>
      tracer.startSpan({ kind: "turn", sessionId: "s", model: "m", providerId: "x" }).end(),
    ).not.toThrow();
  });

  it("the session's default loads nothing until OpenTelemetry is registered, then records to the global provider", async () => {
    const module = fileURLToPath(new URL("./telemetry.ts", import.meta.url));
    // A process of its own: a clean global registry and module cache.
    const script = `
      const { createRequire } = await import("node:module");
      const { createGlobalOpenTelemetryTracer } = await import(${JSON.stringify(module)});
      const require = createRequire(${JSON.stringify(module)});
      const tracer = createGlobalOpenTelemetryTracer();
      tracer.startSpan({ kind: "turn", sessionId: "s", model: "m", providerId: "x" }).end();
      const loadedBefore = Object.keys(require.cache).some((file) => file.includes("@opentelemetry"));
      const { trace } = require("@opentelemetry/api");
      const sdk = require("@opentelemetry/sdk-trace-base");
      const exporter = new sdk.InMemorySpanExporter();
      trace.setGlobalTracerProvider(
        new sdk.BasicTracerProvider({ spanProcessors: [new sdk.SimpleSpanProcessor(exporter)] }),
      );
      tracer.startSpan({ kind: "turn", sessionId: "s", model: "m", providerId: "x" }).end();
      console.log(JSON.stringify({ loadedBefore, spans: exporter.getFinishedSpans().map((span) => span.name) }));`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { cwd: fileURLToPath(new URL("../..", import.meta.url)) },
    );
    expect(JSON.parse(stdout)).toEqual({ loadedBefore: false, spans: ["invoke_agent unforget"] });
  });

  it("is the no-op tracer when @opentelemetry/api is not installed at all", async () => {
    const hide = fileURLToPath(new URL("../__fixtures__/hide-opentelemetry.cjs", import.meta.url));
    const module = fileURLToPath(new URL("./telemetry.ts", import.meta.url));
    const tracerModule = fileURLToPath(new URL("./session-tracer.ts", import.meta.url));
    const script = `
      const { createOpenTelemetryTracer } = await import(${JSON.stringify(module)});
      const { noopTracer } = await import(${JSON.stringify(tracerModule)});
      const tracer = createOpenTelemetryTracer();
      tracer.startSpan({ kind: "turn", sessionId: "s", model: "m", providerId: "x" }).end();
      console.log(tracer === noopTracer ? "noop" : "real");`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--require", hide, "--import", "tsx", "--input-type=module", "-e", script],
      { cwd: fileURLToPath(new URL("../..", import.meta.url)) },
    );
    expect(stdout.trim()).toBe("noop");
  });
});
