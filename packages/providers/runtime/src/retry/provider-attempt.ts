import { AbortedError, ProviderRequestError, UnforgetError } from "@unforget/core";

/** What a provider's SDK call receives for one attempt. */
export interface AttemptContext {
  /**
   * Fires when the caller aborts or the attempt's time runs out. Pass it to an SDK that takes a signal, so the
   * request is cancelled on the wire; an SDK that takes none is abandoned instead (the runtime stops waiting).
   */
  readonly signal: AbortSignal;
  /** Extra HTTP headers for this call (`RequestOptions.headers`). */
  readonly headers: Readonly<Record<string, string>> | undefined;
  /** 0 for the first attempt, 1 for the first retry, … */
  readonly attempt: number;
}

/** Where a failure happened, for the provider's error mapping. */
export interface ErrorContext {
  /** "request" until an event reached the caller; "stream" once one has (the call is then never retried). */
  phase: "request" | "stream";
}

/** Who the attempt is for, as messages name it. */
export interface AttemptOwner {
  providerId: string;
  /** How messages name the provider: "The Anthropic API", "Bedrock", "Vertex AI". */
  displayName: string;
  /** Maps what the SDK threw; called only for errors that are not already typed and not an abort or timeout. */
  toError(error: unknown, context: ErrorContext): UnforgetError;
}

/**
 * One attempt of a provider call: the caller's signal plus the per-attempt timer, both folded into one
 * signal. The timer bounds each wait (the answer; for a stream its first event, then each next one) and is
 * stopped while the caller holds an event, so a slow reader is never cut off.
 */
export interface ProviderAttempt {
  readonly signal: AbortSignal;
  /** Settles with `promise`, or rejects with the typed abort or timeout error as soon as the signal fires. */
  race<T>(promise: Promise<T>): Promise<T>;
  /** Starts the timer for the next wait (no-op without a timeout). */
  startWait(): void;
  /** Stops the timer: the wait is over. */
  stopWait(): void;
  /** The typed error for a failure of this attempt: the abort or timeout when the signal fired, else the mapping. */
  toError(error: unknown, context: ErrorContext): UnforgetError;
  /** Releases the timer and the listener on the caller's signal. */
  dispose(): void;
}

const TIMED_OUT = Symbol("timed out");

/** Starts an attempt; its timer runs from now, for the first wait. */
export function startProviderAttempt(
  owner: AttemptOwner,
  callerSignal: AbortSignal | undefined,
  timeoutMs: number | undefined,
): ProviderAttempt {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let answers = 0;
  const onCallerAbort = () => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted) onCallerAbort();
  else callerSignal?.addEventListener("abort", onCallerAbort, { once: true });

  const stopWait = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  const startWait = () => {
    stopWait();
    if (timeoutMs === undefined || controller.signal.aborted) return;
    timer = setTimeout(() => controller.abort(TIMED_OUT), timeoutMs);
  };

  const stopped = (): UnforgetError => {
    if (controller.signal.reason === TIMED_OUT) {
      const waitedFor = answers === 0 ? "did not answer" : "sent nothing more";
      return new ProviderRequestError(
        `${owner.displayName} ${waitedFor} within ${timeoutMs} ms; the attempt was cancelled. Raise timeoutMs if the model needs longer.`,
        { providerId: owner.providerId, retryable: true, providerErrorType: "timeout" },
      );
    }
    return new AbortedError(
      `${owner.displayName}: the request was aborted by its AbortSignal; nothing more will be sent.`,
      { cause: controller.signal.reason },
    );
  };

  startWait();
  return {
    signal: controller.signal,
    race(promise) {
      if (controller.signal.aborted) {
        promise.catch(() => {});
        return Promise.reject(stopped());
      }
      return new Promise((resolve, reject) => {
        const onStop = () => {
          // The SDK call may still settle later; its outcome no longer matters.
          promise.catch(() => {});
          reject(stopped());
        };
        controller.signal.addEventListener("abort", onStop, { once: true });
        promise.then(
          (value) => {
            controller.signal.removeEventListener("abort", onStop);
            answers += 1;
            resolve(value);
          },
          (error: unknown) => {
            controller.signal.removeEventListener("abort", onStop);
            reject(error);
          },
        );
      });
    },
    startWait,
    stopWait,
    toError(error, context) {
      // Whatever the SDK raised once the signal fired, the signal's own reason says more.
      if (controller.signal.aborted) return stopped();
      if (error instanceof UnforgetError) return error;
      return owner.toError(error, context);
    },
    dispose() {
      stopWait();
      callerSignal?.removeEventListener("abort", onCallerAbort);
    },
  };
}
