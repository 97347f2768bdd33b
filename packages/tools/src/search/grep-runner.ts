import * as nodeFs from "node:fs";
import { availableParallelism } from "node:os";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Worker } from "node:worker_threads";
import { ToolCallError } from "../tool-errors.ts";
import { type GrepScanJob, type GrepScanResult, SCAN_HELPERS, scanFiles } from "./grep-scan.ts";

const BATCH_FILES = 256;
/** Idle workers are ended after this long without a search (they hold 10–20 MB each). */
const IDLE_MS = 60_000;

/**
 * Reads a whole file and its modification time with one open, one fstat and its reads, or undefined when it
 * is over `maxBytes`. It is
 * sent to the worker as text with `scanFiles`, so it is self-contained too.
 */
function readBounded(
  fs: typeof nodeFs,
  path: string,
  maxBytes: number,
): { bytes: Uint8Array; mtimeMs: number } | undefined {
  // A FIFO or a symlink swapped in after the walk must not block the open, nor lead elsewhere.
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
  const descriptor = fs.openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    // On Linux, the kernel's record of what was opened: a folder on the way swapped for a symlink after the
    // walk listed the file would show here (see checkOpenedPath in @unforget/files).
    let opened: string | undefined;
    try {
      opened = fs.readlinkSync(`/proc/self/fd/${descriptor}`);
    } catch {
      opened = undefined;
    }
    if (opened !== undefined && opened !== path) throw new Error("the file moved while it was opened");
    const stats = fs.fstatSync(descriptor);
    if (!stats.isFile()) throw new Error("not a regular file");
    const { size, mtimeMs } = stats;
    if (size > maxBytes) return undefined;
    const bytes = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const read = fs.readSync(descriptor, bytes, filled, size - filled, filled);
      if (read === 0) break;
      filled += read;
    }
    return { bytes: filled === size ? bytes : bytes.subarray(0, filled), mtimeMs };
  } finally {
    fs.closeSync(descriptor);
  }
}

const MAIN_THREAD_IO = { read: (path: string, maxBytes: number) => readBounded(nodeFs, path, maxBytes) };

/** The workers' program: `scanFiles`, its helpers and `readBounded` sent as text, fed batches of files. */
const WORKER_SOURCE = `"use strict";
const { parentPort } = require("node:worker_threads");
const fs = require("node:fs");
// A transform that keeps function names (esbuild's keepNames) may have put calls to this helper in the source.
var __name = (target) => target;
${SCAN_HELPERS.map((helper) => helper.toString()).join("\n")}
const scanFiles = (${scanFiles.toString()});
const readBounded = (${readBounded.toString()});
const io = { read: (path, maxBytes) => readBounded(fs, path, maxBytes) };
parentPort.on("message", (job) => {
  try {
    parentPort.postMessage({ ok: true, result: scanFiles(job, io) });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String((error && error.message) || error) });
  }
});
`;

export interface GrepRun extends GrepScanResult {
  /** Set when the search ended before every file was searched. */
  stopped?: "timeout" | "aborted";
}

export interface GrepRunOptions {
  signal: AbortSignal;
  timeoutMs: number;
  /** Lines (matches and context) to collect in all; matches are counted past them. */
  maxLines: number;
}

/** Runs searches on worker threads, kept between searches. */
export interface GrepPool {
  /**
   * Searches `files` in batches until every file is searched, `timeoutMs` passes or `signal` aborts, and
   * returns what was found until then, in the order of `files`.
   */
  run(
    job: Omit<GrepScanJob, "files" | "maxLinesPerFile">,
    files: readonly string[],
    options: GrepRunOptions,
  ): Promise<GrepRun>;
}

/** One worker: a batch at a time. */
interface SearchWorker {
  batch(job: GrepScanJob): Promise<GrepScanResult>;
  /** Ends the worker (a runaway expression stops with it). */
  end(): void;
  /** Lets the process exit while the worker waits for work, or keeps it alive while it works. */
  hold(held: boolean): void;
}

function startWorker(): SearchWorker | undefined {
  let worker: Worker;
  try {
    // worker_threads loads with the first search worker, not with the tools (start-up).
    const { Worker: SearchThread } = process.getBuiltinModule("node:worker_threads");
    worker = new SearchThread(WORKER_SOURCE, {
      eval: true,
      // The worker reads files only: it needs none of the process's variables (credentials among them).
      env: {},
      execArgv: [],
      stdout: true,
      stderr: true,
      // A deeply nested expression needs more stack to compile than a worker has by default.
      resourceLimits: { stackSizeMb: 8 },
    });
  } catch {
    return undefined;
  }
  let pending: { resolve(result: GrepScanResult): void; reject(error: Error): void } | undefined;
  let failure: Error | undefined;
  const fail = (error: Error) => {
    failure ??= error;
    pending?.reject(error);
    pending = undefined;
  };
  worker.on("message", (message: { ok: boolean; result?: GrepScanResult; message?: string }) => {
    const waiting = pending;
    pending = undefined;
    if (message.ok && message.result !== undefined) waiting?.resolve(message.result);
    else waiting?.reject(new ToolCallError(`Grep failed: ${message.message ?? "the search stopped"}.`));
  });
  worker.on("error", fail);
  worker.on("exit", (code) => fail(new ToolCallError(`Grep failed: its worker exited (code ${code}).`)));
  return {
    batch: (job) =>
      new Promise<GrepScanResult>((resolve, reject) => {
        if (failure !== undefined) {
          reject(failure);
          return;
        }
        pending = { resolve, reject };
        worker.postMessage(job);
      }),
    end() {
      failure ??= new ToolCallError("Grep's worker was ended.");
      worker.removeAllListeners("exit");
      void worker.terminate();
    },
    hold(held) {
      if (held) worker.ref();
      else worker.unref();
    },
  };
}

/** Searches a batch on this thread: where no worker can start, a runaway expression cannot be cut short. */
async function searchOnThisThread(job: GrepScanJob): Promise<GrepScanResult> {
  await yieldToEventLoop();
  return scanFiles(job, MAIN_THREAD_IO);
}

/** The pool's workers between searches, and whether this process can start any. */
interface PoolState {
  threads: number;
  idle: SearchWorker[];
  idleTimer: NodeJS.Timeout | undefined;
  workersUnavailable: boolean;
}

/** Puts a worker back to wait for the next search; idle workers are ended after `IDLE_MS`. */
function releaseWorker(pool: PoolState, worker: SearchWorker): void {
  worker.hold(false);
  pool.idle.push(worker);
  clearTimeout(pool.idleTimer);
  pool.idleTimer = setTimeout(() => {
    for (const each of pool.idle.splice(0)) each.end();
  }, IDLE_MS);
  pool.idleTimer.unref();
}

/** An idle or a new worker, or undefined where no worker can start (the batches then run on this thread). */
function acquireWorker(pool: PoolState): SearchWorker | undefined {
  if (pool.workersUnavailable) return undefined;
  const worker = pool.idle.pop() ?? startWorker();
  if (worker === undefined) pool.workersUnavailable = true;
  worker?.hold(true);
  return worker;
}

/** One search in progress: its batches, the next one to take, and what the finished ones found. */
interface SearchState {
  job: Omit<GrepScanJob, "files" | "maxLinesPerFile">;
  files: readonly string[];
  maxLines: number;
  run: GrepRun;
  outcomes: GrepScanResult[];
  batchCount: number;
  next: number;
  lines: number;
  /** Resolves when the search is stopped (timeout or abort). */
  stopped: Promise<"timeout" | "aborted">;
}

/** The batch at `index`, told how many more lines the search still collects. */
function batchAt(search: SearchState, index: number): GrepScanJob {
  return {
    ...search.job,
    files: search.files.slice(index * BATCH_FILES, (index + 1) * BATCH_FILES),
    maxLinesPerFile: Math.max(0, search.maxLines - search.lines),
  };
}

/** Takes batches in order until none is left or the search stops; each lane has its own worker. */
async function searchLane(pool: PoolState, search: SearchState): Promise<void> {
  let worker = acquireWorker(pool);
  let busy = false;
  try {
    while (search.run.stopped === undefined && search.next < search.batchCount) {
      const index = search.next++;
      const batch = batchAt(search, index);
      busy = true;
      let outcome: GrepScanResult | "timeout" | "aborted";
      try {
        outcome = await Promise.race([
          worker === undefined ? searchOnThisThread(batch) : worker.batch(batch),
          search.stopped,
        ]);
      } catch (error) {
        // A worker that cannot run a batch (no threads here, a bundler that broke its source): this
        // thread takes over.
        if (worker === undefined) throw error;
        worker.end();
        worker = undefined;
        pool.workersUnavailable = true;
        outcome = await Promise.race([searchOnThisThread(batch), search.stopped]);
      }
      if (outcome === "timeout" || outcome === "aborted") return;
      busy = false;
      search.outcomes[index] = outcome;
      for (const result of outcome.results) search.lines += result.lines.length;
    }
  } finally {
    if (worker !== undefined) {
      if (busy) worker.end();
      else releaseWorker(pool, worker);
    }
  }
}

/** Adds the finished batches' outcomes to the run, in the order of the files. */
function collectOutcomes(run: GrepRun, outcomes: readonly (GrepScanResult | undefined)[]): GrepRun {
  for (const outcome of outcomes) {
    if (outcome === undefined) continue;
    run.results.push(...outcome.results);
    run.skippedBinary += outcome.skippedBinary;
    run.skippedLarge += outcome.skippedLarge;
    run.unreadable += outcome.unreadable;
  }
  return run;
}

/** Searches `files` in batches on the pool's lanes until done, the timeout or the abort. */
async function runSearch(
  pool: PoolState,
  job: SearchState["job"],
  files: readonly string[],
  options: GrepRunOptions,
): Promise<GrepRun> {
  const run: GrepRun = { results: [], skippedBinary: 0, skippedLarge: 0, unreadable: 0 };
  if (files.length === 0) return run;
  let stop: (reason: "timeout" | "aborted") => void = () => undefined;
  const stopped = new Promise<"timeout" | "aborted">((resolve) => {
    stop = (reason) => {
      run.stopped ??= reason;
      resolve(reason);
    };
  });
  const search: SearchState = {
    job,
    files,
    maxLines: options.maxLines,
    run,
    outcomes: [],
    batchCount: Math.ceil(files.length / BATCH_FILES),
    next: 0,
    lines: 0,
    stopped,
  };
  const timer = setTimeout(() => stop("timeout"), options.timeoutMs);
  const onAbort = () => stop("aborted");
  options.signal.addEventListener("abort", onAbort, { once: true });
  if (options.signal.aborted) stop("aborted");
  try {
    const lanes = Math.min(pool.threads, search.batchCount);
    await Promise.all(Array.from({ length: lanes }, () => searchLane(pool, search)));
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onAbort);
  }
  return collectOutcomes(run, search.outcomes);
}

/**
 * A pool of up to `threads` search workers (default: the machine's parallelism, at most 4), started on
 * first use and kept between searches: a worker stuck in a runaway expression is ended, never reused.
 */
export function createGrepPool(threads = Math.min(4, availableParallelism())): GrepPool {
  const pool: PoolState = { threads, idle: [], idleTimer: undefined, workersUnavailable: false };
  return { run: (job, files, options) => runSearch(pool, job, files, options) };
}
