import { createRequire } from "node:module";
import { isUnforgetError } from "@unforget/core";
import { errorText } from "../loop/session-errors.ts";
import {
  noopTracer,
  type SessionSpan,
  type SessionSpanEnd,
  type SessionSpanStart,
  type SessionTracer,
} from "./session-tracer.ts";

type OpenTelemetryApi = typeof import("@opentelemetry/api");
type AttributeValue = string | number | boolean | string[];

/** The part of an OpenTelemetry `Span` this module calls (a real one fits). */
export interface OpenTelemetrySpan {
  setAttributes(attributes: Record<string, AttributeValue>): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): unknown;
  end(): unknown;
}

/** The part of an OpenTelemetry `Tracer` this module calls (a real one fits). */
export interface OpenTelemetryTracer {
  startSpan(
    name: string,
    options?: { kind?: number; attributes?: Record<string, AttributeValue>; startTime?: number },
    context?: unknown,
  ): OpenTelemetrySpan;
}

export interface OpenTelemetryTracerOptions {
  /** Where spans go; default: the tracer named "@unforget/session" of the globally registered provider. */
  tracer?: OpenTelemetryTracer;
  /** `gen_ai.agent.name` of turn spans; default "unforget". */
  agentName?: string;
}

/** OpenTelemetry's `SpanKind` and `SpanStatusCode` values (stable in the API since 1.0). */
const SPAN_KIND = { internal: 0, client: 2 } as const;
const STATUS_ERROR = 2;

/** `gen_ai.provider.name` values of the semantic conventions for this repository's providers. */
const PROVIDER_NAMES: Record<string, string> = {
  anthropic: "anthropic",
  bedrock: "aws.bedrock",
  vertex: "gcp.vertex_ai",
};

let loaded: OpenTelemetryApi | null | undefined;

/** The API package when it is installed (an optional peer), loaded once; null when it is not. */
function loadApi(): OpenTelemetryApi | null {
  if (loaded === undefined) {
    try {
      loaded = createRequire(import.meta.url)("@opentelemetry/api") as OpenTelemetryApi;
    } catch {
      loaded = null;
    }
  }
  return loaded;
}

/** The span's name, kind and attributes, named as the GenAI semantic conventions name them. */
function describeStart(start: SessionSpanStart, agentName: string) {
  const conversation = { "gen_ai.conversation.id": start.sessionId };
  switch (start.kind) {
    case "turn":
      return {
        name: `invoke_agent ${agentName}`,
        kind: SPAN_KIND.internal,
        attributes: {
          ...conversation,
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.name": agentName,
          "gen_ai.provider.name": PROVIDER_NAMES[start.providerId] ?? start.providerId,
          "gen_ai.request.model": start.model,
        },
      };
    case "model-call":
      return {
        name: `chat ${start.model}`,
        kind: SPAN_KIND.client,
        attributes: {
          ...conversation,
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": PROVIDER_NAMES[start.providerId] ?? start.providerId,
          "gen_ai.request.model": start.model,
          "gen_ai.request.max_tokens": start.maxTokens,
          "unforget.turn.model_call": start.turn,
        },
      };
    case "tool-call":
      return {
        name: `execute_tool ${start.toolName}`,
        kind: SPAN_KIND.internal,
        attributes: {
          ...conversation,
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": start.toolName,
          "gen_ai.tool.call.id": start.toolUseId,
          "gen_ai.tool.type": start.toolName.startsWith("mcp__") ? "extension" : "function",
        },
      };
    case "compaction":
      return {
        name: `compaction ${start.layer}`,
        kind: SPAN_KIND.internal,
        startTime: start.startTime,
        attributes: {
          ...conversation,
          "unforget.compaction.layer": start.layer,
          "unforget.compaction.trigger": start.trigger,
        },
      };
  }
}

/** What the loop learned by the end, as attributes. */
function describeEnd(end: SessionSpanEnd): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  if (end.usage !== undefined) {
    const usage = end.usage;
    // The conventions count every prompt token in input_tokens; Anthropic's input_tokens leaves the cached ones out.
    attributes["gen_ai.usage.input_tokens"] =
      usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
    attributes["gen_ai.usage.output_tokens"] = usage.outputTokens;
    attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cacheReadInputTokens;
    attributes["gen_ai.usage.cache_creation.input_tokens"] = usage.cacheCreationInputTokens;
  }
  if (end.stopReason !== undefined) attributes["gen_ai.response.finish_reasons"] = [end.stopReason];
  if (end.responseId !== undefined) attributes["gen_ai.response.id"] = end.responseId;
  if (end.turns !== undefined) attributes["unforget.turn.model_calls"] = end.turns;
  if (end.tokensBefore !== undefined) attributes["unforget.compaction.tokens_before"] = end.tokensBefore;
  if (end.tokensAfter !== undefined) attributes["unforget.compaction.tokens_after"] = end.tokensAfter;
  return attributes;
}

function errorType(error: unknown): string {
  if (isUnforgetError(error)) return error.code;
  return error instanceof Error ? error.name : "error";
}

/** Where `@opentelemetry/api` 1.x keeps what was registered globally (a tracer provider, a context manager, …). */
const OPENTELEMETRY_GLOBAL = Symbol.for("opentelemetry.js.api.1");

/**
 * The session's default tracer: OpenTelemetry's global tracer (as `createOpenTelemetryTracer()`) once something has
 * registered OpenTelemetry globally, such as an SDK's `register()`, checked at each span. Until then spans are
 * no-ops and `@opentelemetry/api` is not even loaded, so a program that does not use OpenTelemetry never pays for
 * it at start-up.
 */
export function createGlobalOpenTelemetryTracer(): SessionTracer {
  let tracer: SessionTracer | undefined;
  return {
    startSpan(start, parent) {
      if (tracer === undefined && (globalThis as Record<symbol, unknown>)[OPENTELEMETRY_GLOBAL] === undefined)
        return noopTracer.startSpan(start);
      tracer ??= createOpenTelemetryTracer();
      return tracer.startSpan(start, parent);
    },
  };
}

/**
 * A `SessionTracer` that records OpenTelemetry spans: `invoke_agent` for a turn, `chat` for each model call,
 * `execute_tool` for each tool call (with the GenAI semantic conventions' attribute names) and `compaction` for
 * each layer that acted. `@opentelemetry/api` is an optional peer: without it this is the no-op tracer, and with
 * it but no SDK registered the spans are the API's no-ops. Never throws into the loop.
 */
export function createOpenTelemetryTracer(options: OpenTelemetryTracerOptions = {}): SessionTracer {
  const api = loadApi();
  if (api === null) return noopTracer;
  const tracer: OpenTelemetryTracer = options.tracer ?? api.trace.getTracer("@unforget/session");
  const agentName = options.agentName ?? "unforget";
  const spans = new WeakMap<SessionSpan, OpenTelemetrySpan>();

  return {
    startSpan(start, parent) {
      let span: OpenTelemetrySpan;
      try {
        const { name, kind, attributes, startTime } = describeStart(start, agentName);
        const parentSpan = parent === undefined ? undefined : spans.get(parent);
        const context =
          parentSpan === undefined
            ? api.context.active()
            : api.trace.setSpan(
                api.context.active(),
                parentSpan as Parameters<OpenTelemetryApi["trace"]["setSpan"]>[1],
              );
        span = tracer.startSpan(
          name,
          { kind, attributes, ...(startTime === undefined ? {} : { startTime }) },
          context,
        );
      } catch {
        return noopTracer.startSpan(start);
      }
      let ended = false;
      const handle: SessionSpan = {
        end(outcome = {}) {
          if (ended) return;
          ended = true;
          try {
            span.setAttributes(describeEnd(outcome));
            if (outcome.error !== undefined) {
              const error = outcome.error;
              span.recordException(error instanceof Error ? error : String(error));
              span.setAttributes({ "error.type": errorType(error) });
              span.setStatus({
                code: STATUS_ERROR,
                message: errorText(error),
              });
            } else if (outcome.isError === true) {
              span.setAttributes({ "error.type": "tool_error" });
              span.setStatus({ code: STATUS_ERROR });
            }
            span.end();
          } catch {
            // A broken exporter or processor is the application's to see, never the loop's.
          }
        },
      };
      spans.set(handle, span);
      return handle;
    },
  };
}
