import {
  type ContentBlock,
  createUsage,
  InvalidOperationError,
  type ModelResponse,
  type ModelStream,
  type ModelStreamEvent,
  type Usage,
} from "@unforget/core";

/**
 * Builds a `ModelResponse` from normalised stream events. Providers feed it their translated events;
 * tool input JSON is parsed once its block stops. An unparseable tool input is kept as `{ _raw: text }`
 * rather than dropped.
 */
export class ModelResponseAccumulator {
  private id = "";
  private model = "";
  private readonly blocks: ContentBlock[] = [];
  private readonly partialJson = new Map<number, string>();
  private usage: Usage = createUsage();
  private response: Partial<ModelResponse> = {};
  private started = false;

  /** Applies one event. */
  push(event: ModelStreamEvent): void {
    switch (event.type) {
      case "message_start":
        this.started = true;
        this.id = event.id;
        this.model = event.model;
        this.usage = { ...event.usage };
        break;
      case "block_start":
        this.blocks[event.index] = structuredClone(event.block);
        if (event.block.type === "tool_use") this.partialJson.set(event.index, "");
        break;
      case "text_delta": {
        const block = this.blocks[event.index];
        if (block?.type === "text") block.text += event.text;
        break;
      }
      case "thinking_delta": {
        const block = this.blocks[event.index];
        if (block?.type === "thinking") block.thinking += event.thinking;
        break;
      }
      case "signature_delta": {
        const block = this.blocks[event.index];
        if (block?.type === "thinking") block.signature = (block.signature ?? "") + event.signature;
        break;
      }
      case "tool_input_delta":
        this.partialJson.set(event.index, (this.partialJson.get(event.index) ?? "") + event.partialJson);
        break;
      case "block_stop":
        this.finishToolInput(event.index);
        break;
      case "message_delta":
        if (event.stopReason !== undefined) this.response.stopReason = event.stopReason;
        if (event.rawStopReason !== undefined) this.response.rawStopReason = event.rawStopReason;
        if (event.stopSequence !== undefined) this.response.stopSequence = event.stopSequence;
        if (event.appliedContextEdits !== undefined)
          this.response.appliedContextEdits = event.appliedContextEdits;
        if (event.usage) {
          const usage = this.usage as unknown as Record<string, unknown>;
          for (const [key, value] of Object.entries(event.usage)) {
            if (value !== undefined) usage[key] = value;
          }
        }
        break;
      case "message_stop":
        break;
    }
  }

  /** True once `message_start` was seen. */
  get hasStarted(): boolean {
    return this.started;
  }

  /** The response assembled so far; call after the stream ends. */
  finish(): ModelResponse {
    for (const index of [...this.partialJson.keys()]) this.finishToolInput(index);
    const response: ModelResponse = {
      id: this.id,
      model: this.model,
      role: "assistant",
      content: this.blocks.filter((block): block is ContentBlock => block !== undefined),
      stopReason: this.response.stopReason ?? "other",
      usage: { ...this.usage },
    };
    if (this.response.rawStopReason !== undefined) response.rawStopReason = this.response.rawStopReason;
    if (this.response.stopSequence !== undefined) response.stopSequence = this.response.stopSequence;
    if (this.response.appliedContextEdits !== undefined) {
      response.appliedContextEdits = this.response.appliedContextEdits;
    }
    return response;
  }

  private finishToolInput(index: number): void {
    const json = this.partialJson.get(index);
    if (json === undefined) return;
    this.partialJson.delete(index);
    const block = this.blocks[index];
    if (block?.type !== "tool_use") return;
    if (json.trim() === "") {
      if (block.input === undefined) block.input = {};
      return;
    }
    try {
      block.input = JSON.parse(json);
    } catch {
      block.input = { _raw: json };
    }
  }
}

/**
 * Wraps an async generator of normalised events as a `ModelStream`. The source runs once; iterating and
 * `finalResponse()` share it, and errors reach both.
 */
export function createModelStream(source: () => AsyncIterable<ModelStreamEvent>): ModelStream {
  const accumulator = new ModelResponseAccumulator();
  let iterated = false;
  let final: Promise<ModelResponse> | undefined;
  let resolveFinal!: (response: ModelResponse) => void;
  let rejectFinal!: (error: unknown) => void;
  const finalPromise = new Promise<ModelResponse>((resolve, reject) => {
    resolveFinal = resolve;
    rejectFinal = reject;
  });
  // Avoid an unhandled rejection when only the iterator is used.
  finalPromise.catch(() => {});

  async function* run(): AsyncGenerator<ModelStreamEvent> {
    try {
      for await (const event of source()) {
        accumulator.push(event);
        yield event;
      }
      resolveFinal(accumulator.finish());
    } catch (error) {
      rejectFinal(error);
      throw error;
    }
  }

  return {
    [Symbol.asyncIterator]() {
      if (iterated)
        throw new InvalidOperationError(
          "A ModelStream can be iterated only once; use finalResponse() for the result.",
        );
      iterated = true;
      return run();
    },
    finalResponse() {
      if (final) return final;
      if (!iterated) {
        iterated = true;
        final = (async () => {
          for await (const _event of run()) {
            // drain
          }
          return finalPromise;
        })();
        return final;
      }
      final = finalPromise;
      return final;
    },
  };
}
