import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UnforgetError } from "@unforget/core";
import { type Corpus, loadCorpusFile } from "@unforget/testing/corpus";
import { parseTranscript, readTranscript, streamTranscript } from "@unforget/transcript";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importClaudeCodeSession } from "../claude-code/import-claude-code-session.ts";
import { importClaudeCodeTranscript } from "../claude-code/import-claude-code-transcript.ts";
import {
  importOpenHandsEvaluationOutput,
  importOpenHandsTrajectory,
} from "../openhands/import-openhands-trajectory.ts";
import { importSessionFile } from "../session/import-session-file.ts";
import { importSessionText } from "../session/import-session-text.ts";
import { exceedsNesting, MAX_NESTING } from "../shared/nesting.ts";
import { importMiniSweAgentTrajectory } from "../swe-agent/import-mini-swe-agent-trajectory.ts";
import { importSweAgentTrajectory } from "../swe-agent/import-swe-agent-trajectory.ts";
import { importUnforgetTranscript } from "../unforget/import-unforget-transcript.ts";

// Mutated sessions fed to every reader and importer: each must return (its problems reported) or throw an
// UnforgetError, and what it returns must stay linear in the input. Sizes are bounded so a run takes seconds.
// The unit suite runs it on the sample corpus (fuzz.test.ts), the evaluation suite on the third-party corpus
// (fuzz.eval.test.ts).

/** Raise to hunt longer than CI does: `UNFORGET_FUZZ_RUNS=50 pnpm test` runs 50 times as many cases. */
const scale = Math.max(1, Number(process.env.UNFORGET_FUZZ_RUNS ?? 1) || 1);

const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;
/** Shapes the corpus lacks but the importers handle: a Claude Code rewind with two branches, OpenHands condensations. */
const SHAPES = [
  jsonl([
    {
      type: "user",
      uuid: "u1",
      parentUuid: null,
      sessionId: "s",
      timestamp: "2025-01-01T00:00:00Z",
      message: { role: "user", content: "a" },
    },
    {
      type: "assistant",
      uuid: "a1",
      parentUuid: "u1",
      timestamp: "2025-01-01T00:00:01Z",
      message: {
        id: "r1",
        role: "assistant",
        content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } }],
      },
    },
    {
      type: "user",
      uuid: "r1",
      parentUuid: "a1",
      timestamp: "2025-01-01T00:00:02Z",
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "x" }] },
      toolUseResult: { stdout: "x" },
    },
    {
      type: "user",
      uuid: "u2",
      parentUuid: "r1",
      timestamp: "2025-01-01T00:00:03Z",
      message: { role: "user", content: "first try" },
    },
    {
      type: "user",
      uuid: "u3",
      parentUuid: "r1",
      timestamp: "2025-01-01T00:00:04Z",
      message: { role: "user", content: "second try" },
    },
    {
      type: "attachment",
      uuid: "x1",
      parentUuid: "u3",
      timestamp: "2025-01-01T00:00:05Z",
      attachment: { type: "file", content: ["a", "b"], filename: "f" },
    },
    {
      type: "system",
      subtype: "compact_boundary",
      uuid: "b1",
      parentUuid: null,
      logicalParentUuid: "u3",
      timestamp: "2025-01-01T00:00:06Z",
      compactMetadata: {
        trigger: "auto",
        preTokens: 10,
        preservedMessages: { anchorUuid: "u3", uuids: ["u3"] },
      },
    },
    { type: "summary", summary: "Title", leafUuid: "u3" },
  ]),
  JSON.stringify([
    { id: 1, source: "user", action: "message", args: { content: "go" }, timestamp: "2025-01-01T00:00:00" },
    {
      id: 2,
      source: "agent",
      action: "run",
      args: { command: "ls" },
      tool_call_metadata: {
        tool_call_id: "c2",
        function_name: "run",
        model_response: {
          id: "r2",
          model: "m",
          choices: [
            {
              message: {
                content: "",
                tool_calls: [{ id: "c2", function: { name: "run", arguments: "{}" } }],
              },
            },
          ],
        },
      },
    },
    {
      id: 3,
      source: "agent",
      observation: "run",
      cause: 2,
      content: "out",
      tool_call_metadata: { tool_call_id: "c2" },
    },
    { id: 4, source: "agent", action: "condensation", args: { forgotten_event_ids: [2, 3], summary: null } },
    {
      id: 5,
      source: "agent",
      action: "condensation",
      args: { forgotten_events_start_id: 1, forgotten_events_end_id: 3, summary: "did ls" },
    },
    { id: 6, source: "agent", action: "run", args: { command: "pwd", thought: "where" } },
    { id: 7, observation: "run", content: "/" },
  ]),
];

/** Corpus sessions small enough to mutate many times, plus Unforget transcripts made from some of them. */
function sourcesOf(corpus: Corpus): string[] {
  const texts = corpus.sessions
    .map((session) => loadCorpusFile(session.path))
    .filter((text) => text.length <= 130_000);
  const transcripts = texts.slice(0, 12).map((text) =>
    importSessionText(text)
      .entries.map((entry) => `${JSON.stringify(entry)}\n`)
      .join(""),
  );
  return [...texts, ...transcripts, ...SHAPES];
}

/** Every importer, each given the same text whatever its format: the wrong format must also fail cleanly. */
const importers: ((text: string) => unknown)[] = [
  (text) => importSessionText(text),
  importClaudeCodeTranscript,
  (text) => importClaudeCodeSession({ main: text, subagents: [{ agentId: "fuzz", text }] }),
  importSweAgentTrajectory,
  importMiniSweAgentTrajectory,
  importOpenHandsTrajectory,
  importOpenHandsEvaluationOutput,
  importUnforgetTranscript,
  (text) => parseTranscript(text),
];

const PLACEHOLDER = "\u0000deep\u0000";
/** Values of the wrong type for any field: the shapes that broke importers before. */
const wrongValue = fc.oneof(
  fc.constantFrom<unknown>(
    { toString: 1 },
    { valueOf: {} },
    [],
    [[[]]],
    null,
    true,
    0,
    -1,
    1e16,
    -1e300,
    "",
    "x",
  ),
  fc.constant(PLACEHOLDER),
  fc.string({ maxLength: 8 }),
);

type Mutation =
  | { kind: "truncate"; at: number }
  | { kind: "retype"; key: string; value: unknown; depth: number }
  | { kind: "flip"; bytes: [number, number][] }
  | { kind: "replace"; path: number[]; value: unknown; depth: number }
  | { kind: "repeat"; at: number; length: number; times: number };

const fraction = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });
/** Fields the importers read: retyping every occurrence of one reaches each converter's assumptions. */
const FIELDS = [
  "timestamp",
  "content",
  "id",
  "uuid",
  "parentUuid",
  "logicalParentUuid",
  "message",
  "role",
  "type",
  "text",
  "args",
  "cause",
  "source",
  "action",
  "observation",
  "tool_calls",
  "tool_call_id",
  "tool_call_ids",
  "function",
  "arguments",
  "attachment",
  "toolUseResult",
  "usage",
  "model",
  "history",
  "trajectory",
  "messages",
  "loglines",
  "summary",
  "leafUuid",
  "sessionId",
  "cwd",
  "v",
  "input",
  "tool_use_id",
  "tool_call_metadata",
  "model_response",
  "choices",
  "forgotten_event_ids",
  "forgotten_events_start_id",
  "compactMetadata",
  "isMeta",
  "is_demo",
  "state",
  "instance_id",
  "metadata",
  "entries",
  "edits",
  "kind",
];
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("truncate" as const), at: fraction }),
  fc.record({
    kind: fc.constant("flip" as const),
    bytes: fc.array(fc.tuple(fraction, fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
  }),
  fc.record({
    kind: fc.constant("replace" as const),
    path: fc.array(fc.nat(), { minLength: 1, maxLength: 7 }),
    value: wrongValue,
    depth: fc.integer({ min: 300, max: 30_000 }),
  }),
  fc.record({
    kind: fc.constant("retype" as const),
    key: fc.constantFrom(...FIELDS),
    value: wrongValue,
    depth: fc.integer({ min: 300, max: 30_000 }),
  }),
  fc.record({
    kind: fc.constant("repeat" as const),
    at: fraction,
    length: fc.integer({ min: 1, max: 6 }),
    times: fc.integer({ min: 20, max: 400 }),
  }),
);

/** The largest array in a value (its lines, history, events, messages), where repeated runs are inserted. */
function largestArray(value: unknown, depth = 0): unknown[] | undefined {
  if (depth > 3 || typeof value !== "object" || value === null) return undefined;
  let best = Array.isArray(value) ? value : undefined;
  for (const child of Object.values(value)) {
    const found = largestArray(child, depth + 1);
    if (found && found.length > (best?.length ?? 0)) best = found;
  }
  return best;
}

/** Replaces the value found by following `path` (an index into the keys or items at each level). */
function replaceAt(value: unknown, path: number[], replacement: unknown): unknown {
  const [step, ...rest] = path;
  if (step === undefined || typeof value !== "object" || value === null) return replacement;
  const keys = Object.keys(value);
  if (keys.length === 0) return replacement;
  const key = keys[step % keys.length]!;
  const copy: Record<string, unknown> = Array.isArray(value) ? ([...value] as never) : { ...value };
  copy[key] = replaceAt((value as Record<string, unknown>)[key], rest, replacement);
  return copy;
}

/** Replaces the value of every `key` field, at any depth (iteratively: the source may be deep already). */
function retypeAll(value: unknown, key: string, replacement: unknown): unknown {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current !== "object" || current === null) continue;
    if (!Array.isArray(current) && key in current) (current as Record<string, unknown>)[key] = replacement;
    for (const child of Object.values(current)) stack.push(child);
  }
  return value;
}

/** Serialises a value, putting an array nested `depth` deep where the placeholder is (no recursion needed). */
function serialise(value: unknown, depth: number): string {
  return JSON.stringify(value).replace(
    JSON.stringify(PLACEHOLDER),
    `${"[".repeat(depth)}1${"]".repeat(depth)}`,
  );
}

/** Applies a mutation to one source; JSONL sources are mutated line by line, JSON documents as a whole. */
function mutate(source: string, change: Mutation): Buffer {
  const bytes = Buffer.from(source);
  switch (change.kind) {
    case "truncate":
      return bytes.subarray(0, Math.floor(bytes.length * change.at));
    case "flip": {
      const copy = Buffer.from(bytes);
      for (const [at, byte] of change.bytes) copy[Math.floor(copy.length * at)] = byte;
      return copy;
    }
    case "replace": {
      const document = parseDocument(source);
      if (document !== undefined)
        return Buffer.from(serialise(replaceAt(document, change.path, change.value), change.depth));
      const lines = source.split("\n");
      const index = change.path[0]! % lines.length;
      const line = parseDocument(lines[index]!);
      if (line === undefined) return bytes;
      lines[index] = serialise(replaceAt(line, change.path.slice(1), change.value), change.depth);
      return Buffer.from(lines.join("\n"));
    }
    case "retype": {
      const document = parseDocument(source);
      if (document !== undefined)
        return Buffer.from(serialise(retypeAll(document, change.key, change.value), change.depth));
      const lines = source.split("\n").map((line) => {
        const value = parseDocument(line);
        return value === undefined
          ? line
          : serialise(retypeAll(value, change.key, change.value), change.depth);
      });
      return Buffer.from(lines.join("\n"));
    }
    case "repeat": {
      const document = parseDocument(source);
      const list =
        document === undefined
          ? source.split("\n").filter((line) => line.length > 0)
          : largestArray(document);
      if (!list || list.length === 0) return bytes;
      const start = Math.floor(list.length * change.at);
      const slice = list.slice(start, start + change.length);
      // At most ~1 MB of repeated content per case, to keep the run short.
      const sliceBytes = JSON.stringify(slice).length;
      const times = Math.max(1, Math.min(change.times, Math.floor(1_000_000 / sliceBytes)));
      const run = Array.from({ length: times }, () => slice).flat();
      list.splice(start, 0, ...run);
      return Buffer.from(document === undefined ? `${list.join("\n")}\n` : JSON.stringify(document));
    }
  }
}

function parseDocument(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Runs a reader or importer: it returns, or throws an UnforgetError; anything else fails the property. The
 * importers' safety nets (an item whose conversion threw is reported as `unconvertible_item`; an importer
 * that threw becomes an ImportError naming a defect) keep users safe, but here they mean a bug: both fail too.
 */
function expectTypedOutcome(run: () => unknown, input: string): unknown {
  const where = `on input starting ${JSON.stringify(input.slice(0, 200))}`;
  let result: unknown;
  try {
    result = run();
  } catch (error) {
    if (!(error instanceof UnforgetError)) {
      throw new Error(`An untyped error escaped (${String(error)}) ${where}`, { cause: error });
    }
    if (/defect of the importer/.test(error.message))
      throw new Error(`${error.message} ${where}`, { cause: error });
    return undefined;
  }
  for (const problem of problemsOf(result)) {
    if (problem.kind === "unconvertible_item") throw new Error(`${problem.description} ${where}`);
  }
  return result;
}

function problemsOf(result: unknown): { kind: string; description: string }[] {
  if (Array.isArray(result))
    return result.flatMap((item) => problemsOf((item as { result?: unknown }).result));
  const report = (result as { report?: { problems?: { kind: string; description: string }[] } } | undefined)
    ?.report;
  return report?.problems ?? [];
}

/** What was returned, serialised: it must be serialisable (nothing too deep or cyclic) and linear in the input. */
function expectLinearOutput(result: unknown, inputLength: number): number {
  if (result === undefined) return 0;
  // Nothing deeper than the importers keep (plus the few levels of the result's own structure).
  expect(exceedsNesting(result, MAX_NESTING + 16)).toBe(false);
  const size = JSON.stringify(result).length;
  // Each source line or item yields at most a bounded amount of output (its message, its entry, a problem).
  expect(size).toBeLessThanOrEqual(200 * inputLength + 100_000);
  return size;
}

/** The fuzz over `corpus`'s sessions (those of 130 KB or less), its transcripts and the shapes above. */
export function describeImporterFuzz(corpus: Corpus): void {
  const sources = sourcesOf(corpus);
  /** The sources of the slower properties (file I/O, imports repeated at two sizes). */
  const smallSources = sources.filter((text) => text.length <= 30_000);

  describe("fuzzing the readers and importers with mutated sessions", () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), "unforget-fuzz-"));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it("every importer and parseTranscript: a result or an UnforgetError, and linear output", () => {
      fc.assert(
        fc.property(fc.nat({ max: sources.length - 1 }), mutation, (which, change) => {
          const input = mutate(sources[which]!, change).toString("utf8");
          for (const run of importers)
            expectLinearOutput(
              expectTypedOutcome(() => run(input), input),
              input.length,
            );
        }),
        { numRuns: 30 * scale },
      );
    });

    it("readTranscript, streamTranscript and importSessionFile on mutated files: typed errors or problems only", async () => {
      let file = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.nat({ max: smallSources.length - 1 }),
          mutation,
          fc.integer({ min: 64, max: 4096 }),
          async (which, change, chunkSize) => {
            const bytes = mutate(smallSources[which]!, change);
            const path = join(dir, `case-${file++}.jsonl`);
            await writeFile(path, bytes);
            const preview = bytes.subarray(0, 200).toString("utf8");
            const settle = async (run: () => Promise<unknown>) => {
              let outcome: { result?: unknown; error?: unknown } = {};
              try {
                outcome = { result: await run() };
              } catch (error) {
                outcome = { error };
              }
              return expectTypedOutcome(() => {
                if (outcome.error !== undefined) throw outcome.error;
                return outcome.result;
              }, preview);
            };
            const read = (await settle(() => readTranscript(path))) as
              | Awaited<ReturnType<typeof readTranscript>>
              | undefined;
            const streamed = (await settle(async () => {
              const items = [];
              for await (const item of streamTranscript(path, { chunkSize })) items.push(item);
              return items;
            })) as unknown[] | undefined;
            if (read && streamed) {
              // Both readers agree on what the file holds, whatever the chunk size.
              expect(streamed.length).toBe(read.entries.length + read.problems.length);
            }
            expectLinearOutput(await settle(() => importSessionFile(path)), bytes.length);
          },
        ),
        { numRuns: 20 * scale },
      );
    });

    it("every field retyped in every format: each bad value in each field the importers read", () => {
      // The random properties above reach a given field rarely; this sweep reaches each one every run.
      const samples = [
        ...["claude-code", "swe-agent", "mini-swe-agent", "openhands"].map(
          (format) => smallSources.find((text) => importSessionText(text).format === format)!,
        ),
        smallSources.find((text) => /^\{"v":1/.test(text))!,
        ...SHAPES,
      ];
      for (const source of samples) {
        for (const key of FIELDS) {
          for (const value of [{ toString: 1 }, [{ toString: 1 }], 1e16, null, PLACEHOLDER]) {
            const input = mutate(source, { kind: "retype", key, value, depth: 1_000 }).toString("utf8");
            expectLinearOutput(
              expectTypedOutcome(() => importSessionText(input), input),
              input.length,
            );
            expectLinearOutput(
              expectTypedOutcome(() => parseTranscript(input), input),
              input.length,
            );
          }
        }
      }
    });

    it("repeated runs: twice the repetitions give about twice the output, never more", () => {
      const small = smallSources;
      fc.assert(
        fc.property(
          fc.nat({ max: small.length - 1 }),
          fraction,
          fc.integer({ min: 1, max: 4 }),
          (which, at, length) => {
            const once = mutate(small[which]!, { kind: "repeat", at, length, times: 150 }).toString("utf8");
            const twice = mutate(small[which]!, { kind: "repeat", at, length, times: 300 }).toString("utf8");
            for (const run of importers) {
              const one = expectLinearOutput(
                expectTypedOutcome(() => run(once), once),
                once.length,
              );
              const two = expectLinearOutput(
                expectTypedOutcome(() => run(twice), twice),
                twice.length,
              );
              expect(two).toBeLessThanOrEqual(2.5 * one + 50_000);
            }
          },
        ),
        { numRuns: 8 * scale },
      );
    });
  });
}
