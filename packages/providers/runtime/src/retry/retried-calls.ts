import {
  type ModelStreamEvent,
  PromptTooLongError,
  type RequestOptions,
  UnforgetError,
} from "@unforget/core";
import { truncatedStreamError } from "../errors/unexpected-response.ts";
import type { ProviderRuntimeSettings } from "../provider-settings.ts";
import {
  type AttemptContext,
  type AttemptOwner,
  type ProviderAttempt,
  startProviderAttempt,
} from "./provider-attempt.ts";
import { DEFAULT_MAX_RETRIES, type RetryOptions, throwIfAborted, withRetries } from "./retry.ts";

/** Who calls: the provider as messages name it, its settings and its error mapping. */
export interface RetriedCallOwner extends AttemptOwner {
  settings: ProviderRuntimeSettings;
  /** Per-attempt timeout when neither the call nor the settings give one. */
  defaultTimeoutMs?: number;
}

/** Runs provider calls under the shared rules: retries, per-attempt timeout, abort, error mapping. */
export interface RetriedCalls<Client> {
  /** One call, each attempt raced against the attempt's signal; the last failure, typed, if none succeeds. */
  call<T>(options: RequestOptions, run: (client: Client, attempt: AttemptContext) => Promise<T>): Promise<T>;
  /**
   * A stream: opening it and its first event are retried as one unit, since nothing has reached the caller
   * yet; after that, events pass through, each wait bounded by the timeout, and nothing is retried.
   */
  stream(
    options: RequestOptions,
    open: (client: Client, attempt: AttemptContext) => AsyncIterable<ModelStreamEvent>,
  ): AsyncGenerator<ModelStreamEvent>;
}

/** Binds the rules to one provider: `client` is called before every attempt (it connects once). */
export function createRetriedCalls<Client>(
  owner: RetriedCallOwner,
  client: () => Promise<Client>,
): RetriedCalls<Client> {
  const { settings } = owner;
  const retryOptions = (options: RequestOptions): RetryOptions => ({
    maxRetries: options.maxRetries ?? settings.maxRetries ?? DEFAULT_MAX_RETRIES,
    ...(settings.initialRetryDelayMs === undefined ? {} : { initialDelayMs: settings.initialRetryDelayMs }),
    ...(settings.maxRetryDelayMs === undefined ? {} : { maxDelayMs: settings.maxRetryDelayMs }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const start = async (options: RequestOptions, number: number) => {
    const connected = await client().catch((error: unknown) => {
      throw error instanceof UnforgetError ? error : owner.toError(error, { phase: "request" });
    });
    const attempt = startProviderAttempt(
      owner,
      options.signal,
      options.timeoutMs ?? settings.timeoutMs ?? owner.defaultTimeoutMs,
    );
    const context: AttemptContext = { signal: attempt.signal, headers: options.headers, attempt: number };
    return { connected, attempt, context };
  };

  const call = <T>(options: RequestOptions, run: (client: Client, attempt: AttemptContext) => Promise<T>) =>
    withRetries(async (number) => {
      const { connected, attempt, context } = await start(options, number);
      try {
        return await attempt.race(run(connected, context));
      } catch (error) {
        throw attempt.toError(error, { phase: "request" });
      } finally {
        attempt.dispose();
      }
    }, retryOptions(options));

  const openStream = (
    options: RequestOptions,
    open: (client: Client, attempt: AttemptContext) => AsyncIterable<ModelStreamEvent>,
  ) =>
    withRetries(async (number) => {
      const { connected, attempt, context } = await start(options, number);
      let iterator: AsyncIterator<ModelStreamEvent> | undefined;
      try {
        iterator = open(connected, context)[Symbol.asyncIterator]();
        const first = await attempt.race(iterator.next());
        attempt.stopWait();
        // An empty stream is a dropped connection: nothing reached the caller, so it may be retried.
        if (first.done) throw truncatedStreamError(owner, 0);
        return { attempt, iterator, first };
      } catch (error) {
        attempt.dispose();
        abandon(iterator);
        throw attempt.toError(error, { phase: "request" });
      }
    }, retryOptions(options));

  async function* stream(
    options: RequestOptions,
    open: (client: Client, attempt: AttemptContext) => AsyncIterable<ModelStreamEvent>,
  ): AsyncGenerator<ModelStreamEvent> {
    throwIfAborted(options.signal);
    const { attempt, iterator, first } = await openStream(options, open);
    yield* deliver(owner, options, attempt, iterator, first);
  }

  return { call, stream };
}

/** The rest of a stream once its first event arrived: no retries, each wait bounded, aborts honoured. */
async function* deliver(
  owner: RetriedCallOwner,
  options: RequestOptions,
  attempt: ProviderAttempt,
  iterator: AsyncIterator<ModelStreamEvent>,
  first: IteratorResult<ModelStreamEvent>,
): AsyncGenerator<ModelStreamEvent> {
  let next = first;
  let delivered = 0;
  let ended = false;
  try {
    while (!next.done) {
      const event = next.value;
      // One wire event may become several of ours; none is delivered once the caller aborted.
      throwIfAborted(options.signal);
      if (event.type === "message_delta" && event.stopReason === "model_context_window_exceeded") {
        throw contextWindowExceeded(owner, event.rawStopReason);
      }
      if (event.type === "message_stop") ended = true;
      yield event;
      delivered += 1;
      attempt.startWait();
      next = await attempt.race(iterator.next());
      attempt.stopWait();
    }
    // Some SDKs end an aborted stream quietly; the caller must still learn that it was cut short.
    throwIfAborted(options.signal);
    if (!ended) throw truncatedStreamError(owner, delivered);
  } catch (error) {
    throw attempt.toError(error, { phase: "stream" });
  } finally {
    attempt.dispose();
    if (!next.done) abandon(iterator);
  }
}

/**
 * A response stopped because the context window filled up. It is an overflow like an error response, so it
 * surfaces as the same typed error (without numbers: no provider states them here).
 */
export function contextWindowExceeded(
  owner: { providerId: string; displayName: string },
  rawStopReason: string | undefined,
  response?: unknown,
): PromptTooLongError {
  return new PromptTooLongError(
    `${owner.displayName} stopped the response with ${rawStopReason ?? "model_context_window_exceeded"}: the prompt plus the output filled the model's context window. Compact the conversation and retry.`,
    {
      providerId: owner.providerId,
      source: "stop-reason",
      ...(response === undefined ? {} : { cause: response }),
    },
  );
}

/** Lets go of a stream without waiting: `return()` may wait for a read an SDK cannot cancel. */
function abandon(iterator: AsyncIterator<unknown> | undefined): void {
  void iterator?.return?.()?.catch?.(() => {});
}
