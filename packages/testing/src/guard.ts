import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { ConfigurationError, UnforgetError } from "@unforget/core";

/**
 * Hang guards that can fail. A test of hostile input (a pattern that makes a backtracking matcher run for
 * minutes, a text that makes a scanner quadratic) cannot guard itself: synchronous work holds the event loop
 * that the test's timer and vitest's own timeout both need, so a hang hangs the suite. `createHangGuard` runs
 * the exports of one module in a worker thread instead; the test's thread stays free, and a call that does not
 * finish within the deadline terminates the worker and rejects with a `HangError` that names the call.
 */

/** A deadline generous enough for any honest call on a loaded machine, and well inside vitest's 30 s. */
export const DEFAULT_HANG_DEADLINE_MS = 20_000;

/** A guarded call did not finish within its deadline; the worker running it was terminated. */
export class HangError extends UnforgetError {
  /** The export called. */
  readonly call: string;
  readonly deadlineMs: number;

  constructor(module: string, call: string, deadlineMs: number) {
    super(
      "test_hang",
      `${call}() in ${module} did not finish within ${deadlineMs / 1_000} s: ` +
        "the worker running it was terminated. Something in it does not settle on this input (a backtracking " +
        "pattern, a quadratic scan, a wait that never ends): make that work bounded.",
    );
    this.call = call;
    this.deadlineMs = deadlineMs;
  }
}

/** A guarded call could not run: the module or export is missing, or an argument or result cannot be copied. */
export class GuardedCallError extends UnforgetError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("guarded_call_failed", message, options);
  }
}

export interface HangGuardOptions {
  /** How long one call may run, counted from when the worker starts it (ms); 20 s by default. */
  deadlineMs?: number;
}

type Callable = (...args: never[]) => unknown;

/** The exports of `M` that are functions, by name. */
export type GuardedExports<M> = { [K in keyof M & string]: M[K] extends Callable ? K : never }[keyof M &
  string];

export interface HangGuard<M = Record<string, Callable>> {
  /**
   * Calls the module's export `name` with `args` in the worker (arguments and result are copied with the
   * structured clone algorithm) and resolves with its result, awaited. Rejects with what the export threw (its
   * name, message and stack), with a `HangError` when it ran past the deadline (the worker is terminated; the
   * next call starts a new one), or with a `GuardedCallError` when it could not run. Calls run one at a time.
   */
  call<K extends GuardedExports<M>>(
    name: K,
    ...args: M[K] extends (...parameters: infer P) => unknown ? P : never
  ): Promise<M[K] extends (...parameters: never[]) => infer R ? Awaited<R> : never>;
  /** Terminates the worker, if one is running; a later call starts a new one. */
  close(): Promise<void>;
}

// The worker, from its source text (CommonJS, self-contained): it loads the module, then answers each call with
// `started` (so the deadline counts the call, not the queue before it) and `done`.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
function describe(error) {
  if (error instanceof Error) return { name: error.name, message: error.message, stack: error.stack, code: error.code };
  return { name: "Error", message: String(error) };
}
const loading = (async () => {
  if (workerData.loader) await (await import(workerData.loader)).register();
  return import(workerData.module);
})();
loading.then(
  () => parentPort.postMessage({ kind: "loaded" }),
  (error) => parentPort.postMessage({ kind: "load-failed", error: describe(error) }),
);
parentPort.on("message", async ({ id, name, args }) => {
  const exports = await loading;
  parentPort.postMessage({ kind: "started", id });
  if (typeof exports[name] !== "function") {
    parentPort.postMessage({ kind: "missing", id });
    return;
  }
  let outcome;
  try {
    outcome = { kind: "done", id, value: await exports[name](...args) };
  } catch (error) {
    outcome = { kind: "threw", id, error: describe(error) };
  }
  try {
    parentPort.postMessage(outcome);
  } catch (error) {
    parentPort.postMessage({ kind: "uncloneable", id, error: describe(error) });
  }
});
`;

interface WorkerError {
  name: string;
  message: string;
  stack?: string;
  code?: unknown;
}

type FromWorker =
  | { kind: "loaded" }
  | { kind: "load-failed"; error: WorkerError }
  | { kind: "started"; id: number }
  | { kind: "missing"; id: number }
  | { kind: "done"; id: number; value: unknown }
  | { kind: "threw"; id: number; error: WorkerError }
  | { kind: "uncloneable"; id: number; error: WorkerError };

function moduleUrl(module: string | { href: string }): string {
  const text = typeof module === "string" ? module : module.href;
  if (text.startsWith("file:")) return text;
  if (isAbsolute(text)) return pathToFileURL(text).href;
  throw new ConfigurationError(
    `createHangGuard needs the module as a file URL or an absolute path (e.g. new URL("./cases.ts", import.meta.url)), not ${JSON.stringify(text)}.`,
  );
}

/** tsx's ESM loader for a TypeScript module (every supported Node, the same way), or undefined for JavaScript. */
function loaderFor(url: string): string | undefined {
  if (!/\.[cm]?ts$/.test(new URL(url).pathname)) return undefined;
  try {
    return import.meta.resolve("tsx/esm/api");
  } catch (cause) {
    throw new ConfigurationError(
      `createHangGuard loads TypeScript modules with tsx, which is not installed: add it (pnpm add -D tsx), or guard the built JavaScript instead of ${url}.`,
      { cause },
    );
  }
}

function rebuilt(error: WorkerError): Error {
  const copy = new Error(error.message);
  copy.name = error.name;
  if (error.stack !== undefined) copy.stack = error.stack;
  if (error.code !== undefined) Object.assign(copy, { code: error.code });
  return copy;
}

/** What one hang guard holds: the module it runs, its worker (while one runs) and its queue of calls. */
interface GuardState {
  readonly url: string;
  readonly loader: string | undefined;
  readonly deadlineMs: number;
  worker: Worker | undefined;
  loaded: Promise<void> | undefined;
  queue: Promise<unknown>;
  nextId: number;
}

/**
 * A hang guard over one module's exports: `await guard.call("matchAll", pattern, names)` runs `matchAll` in a
 * worker thread, so a call that never settles fails the test with a `HangError` after the deadline instead of
 * blocking it. TypeScript modules are loaded with tsx (an optional peer). Close the guard in `afterAll`.
 */
export function createHangGuard<M = Record<string, Callable>>(
  module: string | { href: string },
  options: HangGuardOptions = {},
): HangGuard<M> {
  const url = moduleUrl(module);
  const state: GuardState = {
    url,
    loader: loaderFor(url),
    deadlineMs: options.deadlineMs ?? DEFAULT_HANG_DEADLINE_MS,
    worker: undefined,
    loaded: undefined,
    queue: Promise.resolve(),
    nextId: 0,
  };
  // Loading starts now, beside whatever the test prepares before its first call.
  startWorker(state);
  return {
    call(name, ...args) {
      const result = state.queue.then(() => runCall(state, name, args));
      state.queue = result.catch(() => undefined);
      return result as never;
    },
    async close() {
      // A call still running is stopped with its worker (it rejects with a GuardedCallError).
      await stopWorker(state);
      await state.queue;
    },
  };
}

async function stopWorker(state: GuardState): Promise<void> {
  const running = state.worker;
  state.worker = undefined;
  state.loaded = undefined;
  if (running !== undefined) await running.terminate();
}

/** The guard's worker, started (and its module loading) if none runs. */
function startWorker(state: GuardState): { worker: Worker; loaded: Promise<void> } {
  if (state.worker !== undefined && state.loaded !== undefined)
    return { worker: state.worker, loaded: state.loaded };
  const { url, loader } = state;
  const started = new Worker(WORKER_SOURCE, { eval: true, workerData: { module: url, loader } });
  // A worker waiting for calls must not keep the process alive; one running a call does (see `runCall`).
  started.unref();
  // Loading has no deadline of its own: it runs beside the test's thread, under the test's own timeout.
  const ready = new Promise<void>((resolve, reject) => {
    const onMessage = (message: FromWorker) => {
      if (message.kind === "loaded") {
        cleanup();
        resolve();
      } else if (message.kind === "load-failed") {
        cleanup();
        void stopWorker(state);
        reject(
          new GuardedCallError(`${url} could not be loaded: ${message.error.message}`, {
            cause: rebuilt(message.error),
          }),
        );
      }
    };
    const onError = (cause: Error) => {
      cleanup();
      void stopWorker(state);
      reject(new GuardedCallError(`The worker loading ${url} failed: ${cause.message}`, { cause }));
    };
    const onExit = () => {
      cleanup();
      reject(new GuardedCallError(`The worker loading ${url} was stopped before it loaded.`));
    };
    const cleanup = () => {
      started.off("message", onMessage);
      started.off("error", onError);
      started.off("exit", onExit);
    };
    started.on("message", onMessage);
    started.on("error", onError);
    started.on("exit", onExit);
  });
  // Nobody may be waiting yet (the guard starts loading when it is created): a failure is reported to the call.
  ready.catch(() => undefined);
  state.worker = started;
  state.loaded = ready;
  return { worker: started, loaded: ready };
}

/** Runs one call in the guard's worker; past the deadline it rejects with a `HangError` and stops the worker. */
async function runCall(state: GuardState, name: string, args: unknown[]): Promise<unknown> {
  const { url, deadlineMs } = state;
  const current = startWorker(state);
  await current.loaded;
  const id = state.nextId++;
  current.worker.ref();
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const settle = (outcome: () => void) => {
      clearTimeout(timer);
      current.worker.off("message", onMessage);
      current.worker.off("error", onError);
      current.worker.off("exit", onExit);
      current.worker.unref();
      outcome();
    };
    const onMessage = (message: FromWorker) => {
      if (!("id" in message) || message.id !== id) return;
      switch (message.kind) {
        case "started":
          timer = setTimeout(() => {
            settle(() => reject(new HangError(url, name, deadlineMs)));
            void stopWorker(state);
          }, deadlineMs);
          return;
        case "done":
          return settle(() => resolve(message.value));
        case "threw":
          return settle(() => reject(rebuilt(message.error)));
        case "missing":
          return settle(() => reject(new GuardedCallError(`${url} has no exported function ${name}.`)));
        case "uncloneable":
          return settle(() =>
            reject(
              new GuardedCallError(
                `${name}() in ${url} returned a value that cannot be copied out of its worker (${message.error.message}): return plain data.`,
              ),
            ),
          );
      }
    };
    const onError = (cause: Error) => {
      settle(() =>
        reject(new GuardedCallError(`The worker running ${name}() failed: ${cause.message}`, { cause })),
      );
      void stopWorker(state);
    };
    const onExit = (code: number) => {
      settle(() =>
        reject(
          new GuardedCallError(`The worker running ${name}() exited (code ${code}) before it finished.`),
        ),
      );
      if (state.worker === current.worker) {
        state.worker = undefined;
        state.loaded = undefined;
      }
    };
    current.worker.on("message", onMessage);
    current.worker.on("error", onError);
    current.worker.on("exit", onExit);
    try {
      current.worker.postMessage({ id, name, args });
    } catch (cause) {
      settle(() =>
        reject(
          new GuardedCallError(
            `The arguments of ${name}() cannot be copied into its worker: pass plain data.`,
            {
              cause,
            },
          ),
        ),
      );
    }
  });
}
