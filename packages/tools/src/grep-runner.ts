import { readFileSync, statSync } from "node:fs";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { Worker } from "node:worker_threads";
import { type GrepFileResult, type GrepScanJob, type GrepScanResult, scanFiles } from "./grep-scan.ts";
import { ToolCallError } from "./tool-errors.ts";

/** The worker's program: `scanFiles` sent as text, fed batches of files. */
const WORKER_SOURCE = `"use strict";
const { parentPort } = require("node:worker_threads");
const fs = require("node:fs");
// A transform that keeps function names (esbuild's keepNames) may have put calls to this helper in the source.
var __name = (target) => target;
const scanFiles = (${scanFiles.toString()});
const io = { size: (path) => fs.statSync(path).size, read: (path) => fs.readFileSync(path) };
parentPort.on("message", (job) => {
  try {
    parentPort.postMessage({ ok: true, result: scanFiles(job, io) });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String((error && error.message) || error) });
  }
});
`;

const BATCH_FILES = 256;
const MAIN_THREAD_IO = {
  size: (path: string) => statSync(path).size,
  read: (path: string) => readFileSync(path),
};

export interface GrepRun extends GrepScanResult {
  /** Set when the search ended before every file was searched. */
  stopped?: "timeout" | "aborted";
}

type Batch = (job: GrepScanJob) => Promise<GrepScanResult>;

/**
 * Starts a worker thread for one search: a regular expression that backtracks for minutes blocks the worker,
 * not the session, and terminating the worker ends it. Resolves undefined where no worker can start.
 */
async function startWorker(): Promise<{ batch: Batch; close(): Promise<void> } | undefined> {
  let worker: Worker;
  try {
    worker = new Worker(WORKER_SOURCE, {
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
    async close() {
      worker.removeAllListeners("exit");
      await worker.terminate();
    },
  };
}

/**
 * Searches `files` in batches, on a worker thread where one can start and on this thread otherwise, until
 * every file is searched, `timeoutMs` passes or `signal` aborts; returns what was found until then. Lines
 * are collected up to `maxLines` in all; matches are counted past that.
 */
export async function runGrep(
  job: Omit<GrepScanJob, "files" | "maxLinesPerFile">,
  files: readonly string[],
  options: { signal: AbortSignal; timeoutMs: number; maxLines: number },
): Promise<GrepRun> {
  const run: GrepRun = { results: [], skippedBinary: 0, skippedLarge: 0, unreadable: 0 };
  const worker = await startWorker();
  let batch: Batch =
    worker?.batch ??
    (async (each) => {
      await yieldToEventLoop();
      return scanFiles(each, MAIN_THREAD_IO);
    });
  let stop: (reason: "timeout" | "aborted") => void = () => undefined;
  const stopped = new Promise<"timeout" | "aborted">((resolve) => {
    stop = resolve;
  });
  const timer = setTimeout(() => stop("timeout"), options.timeoutMs);
  const onAbort = () => stop("aborted");
  options.signal.addEventListener("abort", onAbort, { once: true });
  if (options.signal.aborted) stop("aborted");
  let lines = 0;
  try {
    for (let start = 0; start < files.length; start += BATCH_FILES) {
      const each: GrepScanJob = {
        ...job,
        files: files.slice(start, start + BATCH_FILES),
        maxLinesPerFile: Math.max(0, options.maxLines - lines),
      };
      let outcome: GrepScanResult | "timeout" | "aborted";
      try {
        outcome = await Promise.race([batch(each), stopped]);
      } catch (error) {
        // A worker that could not run the first batch (no threads here, a bundler that broke its source):
        // search on this thread instead, where a runaway expression cannot be cut short.
        if (start !== 0 || worker === undefined) throw error;
        batch = async (again) => scanFiles(again, MAIN_THREAD_IO);
        outcome = await Promise.race([batch(each), stopped]);
      }
      if (outcome === "timeout" || outcome === "aborted") {
        run.stopped = outcome;
        break;
      }
      for (const result of outcome.results) lines += result.lines.length;
      run.results.push(...(outcome.results satisfies GrepFileResult[]));
      run.skippedBinary += outcome.skippedBinary;
      run.skippedLarge += outcome.skippedLarge;
      run.unreadable += outcome.unreadable;
    }
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onAbort);
    await worker?.close();
  }
  return run;
}
