import { clip, estimateTextTokens, oneLine } from "../conversation/conversation.ts";
import {
  type ConversationFacts,
  collectConversationFacts,
  type FileFacts,
} from "../conversation/conversation-facts.ts";
import { findErrorCodes } from "../conversation/error-codes.ts";
import {
  QUOTE_CHARS,
  SUMMARY_BRIEF_REQUEST_CHARS,
  SUMMARY_MAX_ERRORS,
  SUMMARY_MAX_FILES,
} from "../defaults.ts";
import { carry, joinLines, keepDistinct, mergeByKey, mergeLines } from "./section-lines.ts";
import type { SummarizeRequest, Summarizer, SummaryResult } from "./summarizer.ts";
import { parseSummarySections, renderSummarySections } from "./summary-format.ts";

export interface ExtractiveSummarizerOptions {
  /** Each user message is quoted verbatim up to this many characters; default 2,000. */
  maxUserMessageChars?: number;
  /** Files listed at most; default 30. */
  maxFiles?: number;
  /** Errors listed at most (one failure of each kind first, the most recent of them; then the most recent repeats); default 12. */
  maxErrors?: number;
}

/** Programming languages by file extension (documents and data files — Markdown, JSON, logs — are not languages). */
const LANGUAGES: Record<string, string> = {
  ts: "TypeScript",
  tsx: "TypeScript",
  mts: "TypeScript",
  cts: "TypeScript",
  js: "JavaScript",
  mjs: "JavaScript",
  cjs: "JavaScript",
  jsx: "JavaScript",
  py: "Python",
  rs: "Rust",
  go: "Go",
  java: "Java",
  kt: "Kotlin",
  swift: "Swift",
  c: "C",
  h: "C",
  cc: "C++",
  cpp: "C++",
  hpp: "C++",
  cs: "C#",
  rb: "Ruby",
  php: "PHP",
  scala: "Scala",
  ex: "Elixir",
  exs: "Elixir",
  sh: "shell",
  bash: "shell",
  sql: "SQL",
  html: "HTML",
  css: "CSS",
  scss: "CSS",
  vue: "Vue",
  svelte: "Svelte",
};

/** Limits that shrink, level by level, until the summary fits its budget. */
interface Level {
  quote: number;
  files: number;
  errors: number;
  /** Characters of each failed call's line (its call, status and first error line). */
  errorChars: number;
  commands: number;
  current: number;
  carried: number;
  requests: number;
  changes: boolean;
}

function levelsFor(options: Required<ExtractiveSummarizerOptions>): Level[] {
  const { maxUserMessageChars: quote, maxFiles: files, maxErrors: errors } = options;
  return [
    {
      quote,
      files,
      errors,
      errorChars: 700,
      commands: 10,
      current: 1_200,
      carried: 40,
      requests: 12,
      changes: true,
    },
    {
      quote: Math.min(quote, 1_000),
      files: 20,
      errors: 10,
      errorChars: 700,
      commands: 6,
      current: 800,
      carried: 25,
      requests: 8,
      changes: true,
    },
    {
      quote: Math.min(quote, 500),
      files: 12,
      errors: 8,
      errorChars: 500,
      commands: 4,
      current: 500,
      carried: 15,
      requests: 6,
      changes: true,
    },
    {
      quote: Math.min(quote, 240),
      files: 6,
      errors: 6,
      errorChars: 300,
      commands: 2,
      current: 300,
      carried: 8,
      requests: 4,
      changes: false,
    },
    {
      quote: Math.min(quote, 120),
      files: 3,
      errors: 5,
      errorChars: 200,
      commands: 1,
      current: 160,
      carried: 4,
      requests: 3,
      changes: false,
    },
  ];
}

/**
 * A summariser that calls no model: the nine sections built from the conversation's facts, never from the
 * model's sentences — the user's requests in order, files changed (edits denied included) before files named
 * by the user and files read, languages from file extensions, each failed call with its exit status and first
 * error line (and whether a later run fixed it), each denied call, the last outcome of each command, open todos
 * or unresolved failures, the last calls, and the last assistant message only when nothing in its turn failed
 * or was denied. Deterministic (same messages, same summary) and free; the offline default and the fallback
 * while the model summariser is paused. With a previous summary (any layout) it merges into it.
 */
export function createExtractiveSummarizer(options: ExtractiveSummarizerOptions = {}): Summarizer {
  const resolved = {
    maxUserMessageChars: options.maxUserMessageChars ?? QUOTE_CHARS,
    maxFiles: options.maxFiles ?? SUMMARY_MAX_FILES,
    maxErrors: options.maxErrors ?? SUMMARY_MAX_ERRORS,
  };
  return {
    name: "extractive",
    async summarize(request: SummarizeRequest): Promise<SummaryResult> {
      const text = renderSummarySections(extractSummarySections(request, request.maxTokens, resolved));
      return { text, inputTokens: 0, outputTokens: 0, calls: 0 };
    },
  };
}

/**
 * The nine sections the offline extractor writes for a summary request, at the most generous level whose
 * rendering fits `maxTokens` (the smallest level otherwise). The model summariser fills the sections its reply
 * lacks from these.
 */
export function extractSummarySections(
  request: SummarizeRequest,
  maxTokens: number,
  options: Required<ExtractiveSummarizerOptions> = {
    maxUserMessageChars: QUOTE_CHARS,
    maxFiles: SUMMARY_MAX_FILES,
    maxErrors: SUMMARY_MAX_ERRORS,
  },
): Map<string, string> {
  const facts = collectConversationFacts(request.messages);
  const previous = request.previousSummary
    ? parseSummarySections(request.previousSummary)
    : new Map<string, string>();
  let sections = new Map<string, string>();
  for (const level of levelsFor(options)) {
    sections = buildSections(facts, previous, level, request);
    if (estimateTextTokens(renderSummarySections(sections)) <= maxTokens) break;
  }
  return sections;
}

function buildSections(
  facts: ConversationFacts,
  previous: ReadonlyMap<string, string>,
  level: Level,
  request: SummarizeRequest,
): Map<string, string> {
  const sections = new Map<string, string>();
  const quote = (text: string, max = level.quote) => `"${clip(text.trim(), max)}"`;
  // The requests in brief, one line each: their full text is carried beside the summary (or quoted in "All
  // User Messages"); quoting them twice would double the cost.
  // Carried whole beside the summary, a request needs only its opening here.
  const brief = (text: string) =>
    quote(
      oneLine(text),
      Math.min(level.quote, request.userMessagesCarried ? SUMMARY_BRIEF_REQUEST_CHARS : 300),
    );
  sections.set("Primary Request and Intent", requestsSection(facts, previous, level, request, brief));
  sections.set("Key Technical Concepts", conceptsSection(facts, previous.get("Key Technical Concepts")));
  sections.set("Files and Code Sections", filesSection(facts, previous, level));
  sections.set("Errors and Fixes", errorsSection(facts, previous.get("Errors and Fixes"), level));
  sections.set("Problem Solving", outcomesSection(facts, previous.get("Problem Solving"), level));
  sections.set("All User Messages", userMessagesSection(facts, previous, request, quote));

  const open = facts.todos?.filter((item) => !/^(completed|done|cancelled)$/i.test(item.status));
  sections.set("Pending Tasks", pendingSection(facts, open, previous.get("Pending Tasks")));

  const current = [
    facts.lastCalls.length > 0
      ? `Last tool calls:\n${facts.lastCalls.map((call) => `- ${call}`).join("\n")}`
      : undefined,
    facts.lastAssistantText
      ? `Last assistant message: ${quote(facts.lastAssistantText, level.current)}`
      : facts.lastTextTurnProblems.length > 0
        ? `The assistant's last message is not quoted: in its turn ${facts.lastTextTurnProblems.join("; ")}.`
        : undefined,
  ];
  sections.set("Current Work", joinLines(current) || (previous.get("Current Work") ?? ""));

  const active = facts.todos?.find((item) => /progress/i.test(item.status)) ?? open?.[0];
  const latest = facts.userMessages[facts.userMessages.length - 1];
  sections.set(
    "Optional Next Step",
    active
      ? `Continue the open task: "${clip(active.content, 300)}".`
      : latest !== undefined
        ? `Continue with the user's latest request: ${request.userMessagesCarried ? brief(latest) : quote(latest)}`
        : (previous.get("Optional Next Step") ?? "- None recorded."),
  );
  return sections;
}

/** The user's requests in order, one numbered line each: the previous summary's first, then the new ones. */
function requestsSection(
  facts: ConversationFacts,
  previous: ReadonlyMap<string, string>,
  level: Level,
  request: SummarizeRequest,
  brief: (text: string) => string,
): string {
  const earlier = previous.get("Primary Request and Intent");
  const earlierItems = earlier ? numberedItems(earlier) : [];
  // A previous summary in another layout (a model's prose) is carried as it is, before the list.
  const prose = earlier && earlierItems.length === 0 ? carry(earlier, level.carried) : undefined;
  const items = [...earlierItems, ...facts.userMessages.map(brief)];
  const shown =
    items.length <= level.requests
      ? items.map((item, index) => `${index + 1}. ${item}`)
      : [
          ...items.slice(0, 2).map((item, index) => `${index + 1}. ${item}`),
          `- … ${items.length - level.requests} more requests (every message is quoted after the summary)`,
          ...items
            .slice(items.length - (level.requests - 2))
            .map((item, index) => `${items.length - (level.requests - 2) + index + 1}. ${item}`),
        ];
  return joinLines([
    prose,
    items.length > 0 ? `The user's requests, in order:\n${shown.join("\n")}` : undefined,
    request.instructions?.trim()
      ? `Focus requested for this summary: ${clip(request.instructions.trim(), 500)}`
      : undefined,
  ]);
}

function userMessagesSection(
  facts: ConversationFacts,
  previous: ReadonlyMap<string, string>,
  request: SummarizeRequest,
  quote: (text: string) => string,
): string {
  if (request.userMessagesCarried) {
    return "- Every message the user wrote is quoted verbatim after this summary, oldest first.";
  }
  const earlier = numberedItems(previous.get("All User Messages") ?? "", true);
  const all = [...earlier, ...facts.userMessages.map((text) => quote(text))];
  return all.map((line, index) => `${index + 1}. ${line}`).join("\n");
}

/** The items of a numbered list (`1. …`), each possibly spanning several lines when `multiline`. */
function numberedItems(text: string, multiline = false): string[] {
  if (multiline) {
    return text
      .split(/\n(?=\d+\.\s)/)
      .filter((item) => /^\d+\.\s/.test(item))
      .map((item) => item.replace(/^\d+\.\s/, ""));
  }
  return text
    .split("\n")
    .filter((line) => /^\d+\.\s/.test(line))
    .map((line) => line.replace(/^\d+\.\s/, ""));
}

function conceptsSection(facts: ConversationFacts, previous: string | undefined): string {
  const languages = listCounts(previous, "Languages");
  for (const path of facts.files.keys()) {
    const extension = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
    const language = extension ? LANGUAGES[extension] : undefined;
    if (language) languages.set(language, (languages.get(language) ?? 0) + 1);
  }
  const commands = new Map<string, number>();
  for (const name of listCounts(previous, "Commands used").keys()) commands.set(name, 0);
  for (const command of facts.commands) {
    const word = command
      .split(/\s+/)
      .find((part) => /^[a-z][\w.-]*$/.test(part) && !["cd", "sudo", "env", "time"].includes(part));
    if (word) commands.set(word, (commands.get(word) ?? 0) + 1);
  }
  const carried = (previous ?? "")
    .split("\n")
    .filter(
      (line) =>
        line.startsWith("- ") &&
        !line.startsWith("- Languages:") &&
        !line.startsWith("- Commands used:") &&
        !line.includes("(nothing recorded)"),
    );
  const lines = [...carried];
  if (languages.size > 0) {
    lines.push(
      `- Languages: ${[...languages]
        .sort((a, b) => b[1] - a[1])
        .map(([name, count]) => `${name} (${count} file${count === 1 ? "" : "s"})`)
        .join(", ")}`,
    );
  }
  if (commands.size > 0) {
    lines.push(
      `- Commands used: ${[...commands]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 12)
        .map(([name]) => name)
        .join(", ")}`,
    );
  }
  return lines.join("\n");
}

/** The names and counts of a `- Label: A (2 files), B (1 file)` line of an earlier summary. */
function listCounts(previous: string | undefined, label: string): Map<string, number> {
  const counts = new Map<string, number>();
  const line = previous?.split("\n").find((candidate) => candidate.startsWith(`- ${label}: `));
  if (!line) return counts;
  for (const part of line.slice(label.length + 4).split(", ")) {
    const match = /^(.+?)(?: \((\d+) files?\))?$/.exec(part.trim());
    if (match) counts.set(match[1]!, Number(match[2] ?? 0));
  }
  return counts;
}

const fileRank = (file: FileFacts) =>
  file.edits + file.creates + file.denied > 0 ? 0 : file.namedByUser ? 1 : 2;

/** Files changed (denied edits included) first, then those the user named, then those only read; each by recency. */
function filesSection(facts: ConversationFacts, previous: ReadonlyMap<string, string>, level: Level): string {
  const files = [...facts.files.values()]
    .sort((a, b) => fileRank(a) - fileRank(b) || b.last - a.last)
    .slice(0, level.files)
    .map((file) => describeFile(file, level));
  const merged = mergeByKey(previous.get("Files and Code Sections"), files, level.carried, fileKey);
  const rank = (line: string) => {
    const actions = line.split(" — ")[1] ?? "";
    return /\b(?:edited|created|denied)\b/.test(actions) ? 0 : /named by the user/.test(actions) ? 1 : 2;
  };
  return merged
    .map((line, index) => ({ line, index }))
    .sort((a, b) => rank(a.line) - rank(b.line) || a.index - b.index)
    .map(({ line }) => line)
    .join("\n");
}

function describeFile(file: FileFacts, level: Level): string {
  const actions = [
    file.creates > 0 ? `created${file.creates > 1 ? ` ${file.creates}×` : ""}` : undefined,
    file.edits > 0 ? `edited ${file.edits}×` : undefined,
    file.denied > 0 ? `change denied ${file.denied}×` : undefined,
    file.reads > 0 ? `read ${file.reads}×` : undefined,
    file.namedByUser ? "named by the user" : undefined,
  ].filter((part): part is string => part !== undefined);
  const change =
    file.lastChange && level.changes
      ? `\n  Last change: \`${clip(file.lastChange.replace(/\s+/g, " "), 200)}\``
      : "";
  return `- ${file.path} — ${actions.join(", ") || "mentioned"}${change}`;
}

const fileKey = (line: string) => line.split(" — ")[0]!;

/** Failed calls (exit status, first error line, how often, whether fixed) and denied calls, oldest first. */
function errorsSection(facts: ConversationFacts, previous: string | undefined, level: Level): string {
  const failed = keepDistinct(facts.errors, level.errors, (error) => failureKind(error.error)).map(
    (error) => ({
      position: error.position,
      // The first error line whole; the next one too while there is room.
      line: `- ${error.call} → ${error.status !== undefined ? `exit ${error.status}: ` : ""}${error.error}${error.next && level.changes ? ` | ${error.next}` : ""}${error.count > 1 ? ` (${error.count}×)` : ""}${error.fixed ? " — fixed: a later run succeeded" : ""}`,
    }),
  );
  const denied = facts.denied.slice(-level.errors).map((denial) => ({
    position: denial.position,
    line: `- ${denial.call} → denied: ${denial.reason}`,
  }));
  // Errors are what a summary must not lose: when room is short, each line is cut rather than fewer kept.
  const lines = [...failed, ...denied]
    .sort((a, b) => a.position - b.position)
    .map((entry) => clip(entry.line, level.errorChars));
  // An earlier failure of a call whose last run now succeeded is fixed.
  const earlier = (previous ?? "").split("\n").map((line) => {
    const call = /^- (.+?) → /.exec(line)?.[1];
    const outcome = call ? facts.outcomes.get(call) : undefined;
    const marked =
      outcome && !outcome.failed && !line.includes(" — fixed")
        ? `${line} — fixed: a later run succeeded`
        : line;
    return clip(marked, level.errorChars);
  });
  return mergeLines(earlier.join("\n"), lines, level.errors * 2, failureKind);
}

/**
 * What kind of failure a line reports: its error codes (`ENOENT`, `TypeError`, `TS2345`), or, with none, the
 * line itself. Two failures of one kind tell the next reader less than two kinds.
 */
function failureKind(line: string): string {
  const codes = findErrorCodes(line);
  return codes.length > 0 ? codes.join(" ") : line;
}

/** The last outcome of each command run, most recent last. */
function outcomesSection(facts: ConversationFacts, previous: string | undefined, level: Level): string {
  const lines = [...facts.outcomes.values()].slice(-level.commands).map((outcome) => {
    const result = outcome.failed
      ? `last run failed${outcome.status !== undefined ? ` (exit ${outcome.status})` : ""}`
      : "last run succeeded";
    return `- ${outcome.call}: ${result}${outcome.runs > 1 ? `; ${outcome.runs} runs` : ""}`;
  });
  return mergeByKey(previous, lines, level.commands, (line) => line.split(": last run")[0]!).join("\n");
}

/** Open todos; without a todo list, what the record shows is not done: commands still failing, denied changes. */
function pendingSection(
  facts: ConversationFacts,
  open: ConversationFacts["todos"],
  previous: string | undefined,
): string {
  if (open !== undefined) {
    return open.length === 0
      ? "- None: every item of the latest todo list is completed."
      : open.map((item) => `- [${item.status}] ${clip(item.content, 300)}`).join("\n");
  }
  const unresolved = [
    ...[...facts.outcomes.values()]
      .filter((outcome) => outcome.failed)
      .map(
        (outcome) =>
          `- Unresolved: ${outcome.call} still fails${outcome.status !== undefined ? ` (exit ${outcome.status})` : ""}.`,
      ),
    ...facts.denied
      .filter((denial) => denial.position > facts.lastUserPosition)
      .map((denial) => `- Not done: ${denial.call} was denied.`),
  ];
  if (unresolved.length > 0) return [...new Set(unresolved)].join("\n");
  // What an earlier summary left unresolved stays so, unless a later run of the call succeeded.
  const carried = (previous ?? "").split("\n").filter((line) => {
    const call = /^- Unresolved: (.+?) still fails/.exec(line)?.[1];
    return call === undefined || facts.outcomes.get(call)?.failed !== false;
  });
  return carried.some((line) => line.trim().length > 0) ? carried.join("\n") : "- None recorded.";
}
