import type { StopReason, Usage } from "@unforget/core";

/** What a span is about, with what the loop knows when it starts; a tracer maps it to its attribute names. */
export type SessionSpanStart =
  | { kind: "turn"; sessionId: string; model: string; providerId: string }
  | {
      kind: "model-call";
      sessionId: string;
      model: string;
      providerId: string;
      maxTokens: number;
      turn: number;
    }
  | { kind: "tool-call"; sessionId: string; toolName: string; toolUseId: string }
  | {
      kind: "compaction";
      sessionId: string;
      layer: string;
      trigger: string;
      /** When the layer started (epoch ms): compaction spans are recorded once the layer has reported. */
      startTime: number;
    };

/** What the loop knows when a span ends. */
export interface SessionSpanEnd {
  /** The call or turn failed (a tool error result counts). */
  error?: unknown;
  isError?: boolean;
  usage?: Usage;
  stopReason?: StopReason | "max_turns" | "aborted" | "blocked" | "compacted";
  /** The provider's response id (model calls). */
  responseId?: string;
  /** Model calls in the turn (turn spans). */
  turns?: number;
  tokensBefore?: number;
  tokensAfter?: number;
}

/** A started span; ended exactly once. */
export interface SessionSpan {
  /** Called once when the work ends (successfully or not). */
  end(outcome?: SessionSpanEnd): void;
}

/**
 * The small interface the loop creates spans through: a turn (one `send`), each model call and tool call under
 * it, and each compaction layer that acted. Never throws into the loop (the session guards it anyway).
 */
export interface SessionTracer {
  /** Called when the work starts; `parent` is the enclosing turn span, when there is one. */
  startSpan(start: SessionSpanStart, parent?: SessionSpan): SessionSpan;
}

const NOOP_SPAN: SessionSpan = { end() {} };

/** The tracer used when none is given: spans cost nothing. */
export const noopTracer: SessionTracer = { startSpan: () => NOOP_SPAN };
