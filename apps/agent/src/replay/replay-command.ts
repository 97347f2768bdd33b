import { stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { createExtractiveSummarizer, createModelSummarizer, type Summarizer } from "@unforget/compact";
import type { ModelRequest } from "@unforget/core";
import { writeFileAtomic } from "@unforget/files";
import { convertToAnthropicRequest } from "@unforget/provider-anthropic";
import { loadSession } from "../load-session.ts";
import { formatWindow, parseWindow } from "../parse-window.ts";
import { recordingProvider } from "../recording-provider.ts";
import { openRequestDump, type RequestDump } from "../request-dump.ts";
import { resolveSession } from "../resolve-session.ts";
import { OptionValueError, OutputError } from "./replay-errors.ts";
import { createReplayProgress } from "./replay-progress.ts";
import { renderReplayReport } from "./replay-report.ts";
import {
  countCompactions,
  DEFAULT_WINDOW,
  replaySession,
  requestBody,
  requestShape,
  type SessionReplay,
} from "./replay-session.ts";
import { renderReplayTable } from "./replay-table.ts";

/** The options of `unforget replay`, as the command line gives them. */
export interface ReplayCommandOptions {
  /** Replay the demo session that ships with the app, whatever sessions the machine has. */
  demo?: boolean;
  window?: string;
  /** The prompt cache's lifetime: "5m" (default) or "1h". */
  cacheTtl?: string;
  summarizer?: string;
  /** The model that writes the summaries (with `summarizer: "model"`) and whose prices they are billed at. */
  summarizerModel?: string;
  json?: boolean;
  report?: string;
  dumpRequests?: string;
}

/** Where the command writes: stdout for the table or JSON, stderr for progress and notes. */
export interface CommandOutput {
  stdout: { write(text: string): unknown };
  /** A terminal (`isTTY`) gets a progress bar; anything else plain lines. */
  stderr: { write(text: string): unknown; isTTY?: boolean };
  env: Record<string, string | undefined>;
}

/** Exit code of a replay whose requests went over the window. */
export const EXIT_OVERFLOW = 3;
/** Exit code of a replay that broke an invariant (a bug in unforget). */
export const EXIT_VIOLATION = 4;

/**
 * `unforget replay`: replays a session through the ladder and prints the table (or JSON), report and dumps
 * on request. Resolves to the exit code: 0, `EXIT_OVERFLOW` when requests went over the window, or
 * `EXIT_VIOLATION` when an invariant broke (everything is still printed and written first).
 */
export async function runReplayCommand(
  sessionArgument: string | undefined,
  options: ReplayCommandOptions,
  output: CommandOutput,
): Promise<number> {
  if (options.demo === true && sessionArgument !== undefined && sessionArgument.length > 0) {
    throw new OptionValueError(
      "--demo",
      `--demo replays the demo session, so it takes no SESSION (${sessionArgument} was given): drop one or the other.`,
    );
  }
  const window = options.window === undefined ? DEFAULT_WINDOW : parseWindow(options.window);
  const summarizerChoice = options.summarizer ?? "offline";
  const cacheTtl = options.cacheTtl ?? "5m";
  if (cacheTtl !== "5m" && cacheTtl !== "1h") {
    throw new OptionValueError(
      "--cache-ttl",
      `--cache-ttl ${JSON.stringify(cacheTtl)} is not a cache lifetime: use "5m" (the default, as the API) or "1h" (cache writes then cost twice the input price).`,
    );
  }
  if (summarizerChoice !== "offline" && summarizerChoice !== "model") {
    throw new OptionValueError(
      "--summarizer",
      `--summarizer ${JSON.stringify(summarizerChoice)} is not a summariser: use "offline" (the default, no model calls) or "model" (the configured provider).`,
    );
  }
  const resolved = await resolveSession(options.demo === true ? { demo: true } : sessionArgument, output.env);
  const session = await loadSession(resolved.path);
  const label = resolved.source === "demo" ? "demo session" : resolved.path;
  const note = (line: string) => output.stderr.write(`${line}\n`);
  if (resolved.source === "claude-code") note(`Replaying your newest Claude Code session: ${resolved.path}`);
  if (resolved.source === "demo" && options.demo !== true) {
    note(
      "No session given and no Claude Code session found: replaying the demo session that ships with unforget.",
    );
  }
  const shape = requestShape(session, window);
  if (session.problems.length > 0) {
    note(
      `The importer worked around ${session.problems.length} defect${session.problems.length === 1 ? "" : "s"} in the file; replaying what is readable. First: ${session.problems[0]}`,
    );
  }
  const pendingSummaries: ModelRequest[] = [];
  const summarizer = await chooseSummarizer(
    summarizerChoice,
    output.env,
    (request) => {
      pendingSummaries.push(request);
    },
    options.summarizerModel,
  );
  if (options.report !== undefined) await checkReportFolder(options.report);
  const dump = options.dumpRequests === undefined ? undefined : await openRequestDump(options.dumpRequests);
  // Said once everything the replay needs is in place, so that a failure before it stays one line.
  if (shape.modelNote !== undefined) note(shape.modelNote);
  const progress = createReplayProgress(output.stderr);
  let replay: SessionReplay;
  try {
    replay = await replaySession(session, {
      window,
      summarizer,
      ...(options.summarizerModel !== undefined ? { summarizerModel: options.summarizerModel } : {}),
      cacheTtl,
      onCall: async (call, done, total) => {
        progress.update(done, total);
        if (!dump) return;
        await writeSummaryRequests(dump, call.index, pendingSummaries.splice(0));
        await dump.writeCall(call.index, requestBody(shape, call));
      },
    });
  } finally {
    progress.stop();
  }
  if (options.report !== undefined) await writeReport(options.report, replay, label);
  if (options.json) output.stdout.write(`${JSON.stringify(jsonSummary(replay), null, 2)}\n`);
  else output.stdout.write(renderReplayTable(replay, label));
  if (options.report !== undefined) note(`Report written to ${resolve(options.report)}`);
  if (dump) note(`${replay.calls.length} requests written to ${resolve(dump.directory)}`);
  const { exitCode, line } = replayOutcome(replay.stats);
  if (line !== undefined) note(line);
  return exitCode;
}

/** The exit code of a finished replay, and the line for stderr that says why when it is not 0. */
export function replayOutcome(stats: SessionReplay["stats"]): { exitCode: number; line?: string } {
  if (stats.violations.length > 0) {
    const count = stats.violations.length;
    return {
      exitCode: EXIT_VIOLATION,
      line: `unforget: the replay broke ${count} invariant${count === 1 ? "" : "s"} (listed with the results): that is a bug in unforget, please report it with the session (exit code ${EXIT_VIOLATION}).`,
    };
  }
  if (stats.overflows > 0) {
    return {
      exitCode: EXIT_OVERFLOW,
      line: `unforget: ${stats.overflows} of ${stats.calls} requests ${stats.overflows === 1 ? "was" : "were"} over the ${formatWindow(stats.window)}-token window: the ladder could not keep this session inside it; replay at a larger --window (exit code ${EXIT_OVERFLOW}).`,
    };
  }
  return { exitCode: 0 };
}

async function chooseSummarizer(
  choice: "offline" | "model",
  env: Record<string, string | undefined>,
  record: (request: ModelRequest) => void,
  summarizerModel: string | undefined,
): Promise<Summarizer> {
  if (choice === "offline") return createExtractiveSummarizer();
  // Loaded only here: the provider SDKs are large and an offline replay never needs them.
  const { createProviderFromEnv } = await import("@unforget/providers");
  // Throws ConfigurationError saying what to set when no provider is configured.
  const { provider, model } = await createProviderFromEnv({ env });
  return createModelSummarizer({
    provider: recordingProvider(provider, record),
    model: summarizerModel ?? model,
  });
}

async function writeSummaryRequests(
  dump: RequestDump,
  call: number,
  requests: ModelRequest[],
): Promise<void> {
  let attempt = 0;
  for (const request of requests) {
    attempt++;
    await dump.writeSummarizerCall(call, attempt, convertToAnthropicRequest(request).body);
  }
}

/** Refuses a report path whose folder is missing before the replay runs, rather than after. */
async function checkReportFolder(path: string): Promise<void> {
  const folder = dirname(resolve(path));
  const info = await stat(folder).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new OutputError(
      `--report ${path}: the folder ${folder} does not exist. Create it or choose another path.`,
      {
        path,
      },
    );
  }
}

async function writeReport(path: string, replay: SessionReplay, label: string): Promise<void> {
  try {
    await writeFileAtomic(path, renderReplayReport(replay, label));
  } catch (error) {
    throw new OutputError(
      `--report ${path}: the report could not be written (${error instanceof Error ? error.message : String(error)}). Check that its folder exists and is writable.`,
      { path, cause: error },
    );
  }
}

/** The `--json` document (schema in the README): the replay's statistics and what was replayed. */
export function jsonSummary(replay: SessionReplay): Record<string, unknown> {
  const { stats } = replay;
  return {
    calls: stats.calls,
    peakTokens: stats.peakTokens,
    window: stats.window,
    overflows: stats.overflows,
    layers: stats.layers,
    summarizerCalls: stats.summarizerCalls,
    summarizerInputTokens: stats.summarizerInputTokens,
    prefixReuse: Math.round(stats.prefixReuse * 10_000) / 10_000,
    cacheReadTokens: stats.cacheReadTokens,
    cacheWriteTokens: stats.cacheWriteTokens,
    uncachedInputTokens: stats.uncachedInputTokens,
    summarizerOutputTokens: stats.summarizerOutputTokens,
    inputCostUsd: roundUsd(stats.inputCostUsd),
    inputCost: stats.inputCost,
    slidingWindowInputCostUsd: roundUsd(stats.slidingWindowInputCostUsd),
    slidingWindowInputCost: stats.slidingWindowInputCost,
    errorCodes: stats.errorCodes,
    pricing: {
      model: replay.pricing.model,
      known: replay.pricing.known,
      input: replay.pricing.input,
      output: replay.pricing.output,
      cacheWrite: replay.cacheTtl === "1h" ? replay.pricing.cacheWrite1h : replay.pricing.cacheWrite5m,
      cacheRead: replay.pricing.cacheRead,
      cacheTtl: replay.cacheTtl,
      summaries: {
        model: replay.summaryPricing.model,
        known: replay.summaryPricing.known,
        input: replay.summaryPricing.input,
        output: replay.summaryPricing.output,
      },
    },
    violations: stats.violations,
    compactions: countCompactions(replay),
    layerActions: replay.actions.length,
    summarizer: replay.summarizer,
    model: replay.model,
    session: {
      format: replay.session.format,
      messages: replay.session.messages.length,
      ...(replay.session.instance ? { line: replay.session.instance.line } : {}),
    },
  };
}

/** Dollars to a hundredth of a cent, so the JSON is stable across platforms' float printing. */
function roundUsd(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
