/**
 * Importer throughput: the corpus against a plain `JSON.parse` of the same files, and degenerate shapes (the
 * ones that used to be quadratic) against a normal session of the same format and number of items, all
 * measured in the same run. Run: `npx pnpm@10.34.9 --filter @unforget/importers bench` (results go to
 * BENCHMARKS.md by hand).
 */
import { cpus } from "node:os";
import { listCorpusSessions, loadCorpusFile } from "@unforget/testing/corpus";
import {
  importClaudeCodeTranscript,
  importOpenHandsTrajectory,
  importSessionText,
  importUnforgetTranscript,
} from "../src/index.ts";

const ROUNDS = 5;
const COUNT = 40_000;

function median(run: () => void): number {
  run(); // warm-up
  const times: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const rows: { case: string; items: number; MB: string; ms: number; ratio: string }[] = [];
function record(name: string, items: number, bytes: number, ms: number, baselineMs: number) {
  rows.push({
    case: name,
    items,
    MB: (bytes / 1e6).toFixed(1),
    ms: Number(ms.toFixed(1)),
    ratio: `${(ms / baselineMs).toFixed(2)}×`,
  });
}
const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;

// The corpus, against parsing it.
const sessions = listCorpusSessions().map((session) => loadCorpusFile(session.path));
const corpusBytes = sessions.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
const parseOnly = median(() => {
  for (const text of sessions) {
    try {
      JSON.parse(text);
    } catch {
      for (const line of text.split("\n")) if (line.trim().length > 0) JSON.parse(line);
    }
  }
});
record(
  `baseline: JSON.parse of the ${sessions.length} corpus session files`,
  sessions.length,
  corpusBytes,
  parseOnly,
  parseOnly,
);
const importAll = median(() => {
  for (const text of sessions) importSessionText(text);
});
record(
  "importSessionText of every corpus session (detect, convert, check, repair)",
  sessions.length,
  corpusBytes,
  importAll,
  parseOnly,
);

// Claude Code: a normal session (user turn, tool call, result, answer) against degenerate ones of as many lines.
const claudeCodeNormal: unknown[] = [];
for (let index = 0; index < COUNT / 4; index++) {
  const turn = `t${index}`;
  claudeCodeNormal.push(
    {
      type: "user",
      uuid: `${turn}u`,
      parentUuid: index === 0 ? null : `t${index - 1}b`,
      message: { role: "user", content: `Step ${index}: read the next file` },
    },
    {
      type: "assistant",
      uuid: `${turn}a`,
      parentUuid: `${turn}u`,
      message: {
        id: `r${index}`,
        role: "assistant",
        content: [{ type: "tool_use", id: `c${index}`, name: "Read", input: { path: `f${index}.ts` } }],
      },
    },
    {
      type: "user",
      uuid: `${turn}r`,
      parentUuid: `${turn}a`,
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: `c${index}`, content: `content of f${index}.ts` }],
      },
    },
    {
      type: "assistant",
      uuid: `${turn}b`,
      parentUuid: `${turn}r`,
      message: { id: `s${index}`, role: "assistant", content: [{ type: "text", text: `Read f${index}.ts` }] },
    },
  );
}
const assistantLines = (responseId: (index: number) => string) => {
  const lines: unknown[] = [
    { type: "user", uuid: "u0", parentUuid: null, message: { role: "user", content: "go" } },
  ];
  for (let index = 1; index < COUNT; index++) {
    lines.push({
      type: "assistant",
      uuid: `a${index}`,
      parentUuid: index === 1 ? "u0" : `a${index - 1}`,
      message: {
        id: responseId(index),
        role: "assistant",
        content: [{ type: "text", text: `part ${index} of a long answer` }],
      },
    });
  }
  return jsonl(lines);
};
const claudeCodeText = jsonl(claudeCodeNormal);
const claudeCodeBaseline = median(() => importClaudeCodeTranscript(claudeCodeText));
record(
  `Claude Code: normal session, ${COUNT} lines (baseline)`,
  COUNT,
  claudeCodeText.length,
  claudeCodeBaseline,
  claudeCodeBaseline,
);
for (const [name, text] of [
  ["Claude Code: assistant lines with distinct response ids", assistantLines((index) => `msg_${index}`)],
  ["Claude Code: one response split over every line", assistantLines(() => "msg_1")],
] as const) {
  record(
    name,
    COUNT,
    text.length,
    median(() => importClaudeCodeTranscript(text)),
    claudeCodeBaseline,
  );
}

// Unforget transcripts: alternating messages against one run of consecutive user messages (repairToolPairs merges it).
const entry = (index: number, role: "user" | "assistant") => ({
  v: 1,
  type: "message",
  id: `m${index}`,
  timestamp: "2025-01-01T00:00:00.000Z",
  message: { id: `m${index}`, role, content: `message ${index} with a line of text` },
});
const alternating = jsonl(
  Array.from({ length: COUNT }, (_, index) => entry(index, index % 2 === 0 ? "user" : "assistant")),
);
const sameRole = jsonl(Array.from({ length: COUNT }, (_, index) => entry(index, "user")));
const transcriptBaseline = median(() => importUnforgetTranscript(alternating));
record(
  `Unforget transcript: alternating roles, ${COUNT} messages (baseline)`,
  COUNT,
  alternating.length,
  transcriptBaseline,
  transcriptBaseline,
);
record(
  "Unforget transcript: consecutive user messages (merged by repairToolPairs)",
  COUNT,
  sameRole.length,
  median(() => importUnforgetTranscript(sameRole)),
  transcriptBaseline,
);

// OpenHands: actions each answered by an observation against actions no observation answers.
const answered: unknown[] = [{ id: 0, source: "user", action: "message", args: { content: "go" } }];
for (let index = 1; answered.length < COUNT; index += 2) {
  answered.push(
    { id: index, source: "agent", action: "run", args: { command: `ls ${index}`, thought: `step ${index}` } },
    { id: index + 1, source: "agent", observation: "run", cause: index, content: `out ${index}` },
  );
}
const unanswered: unknown[] = [{ id: 0, source: "user", action: "message", args: { content: "go" } }];
for (let index = 1; index < COUNT; index++) {
  unanswered.push({
    id: index,
    source: "agent",
    action: "run",
    args: { command: `ls ${index}`, thought: `step ${index}` },
  });
}
const openHandsBaseline = median(() => importOpenHandsTrajectory(answered));
const size = (value: unknown) => JSON.stringify(value).length;
record(
  `OpenHands: actions with their observations, ${COUNT} events (baseline)`,
  COUNT,
  size(answered),
  openHandsBaseline,
  openHandsBaseline,
);
record(
  "OpenHands: actions no observation answers",
  COUNT,
  size(unanswered),
  median(() => importOpenHandsTrajectory(unanswered)),
  openHandsBaseline,
);

console.log(
  `Node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? "unknown"}), median of ${ROUNDS} runs`,
);
console.table(rows);
