import { clip, estimateTextTokens } from "./conversation.ts";
import { type ConversationFacts, collectConversationFacts, type FileFacts } from "./conversation-facts.ts";
import { QUOTE_CHARS, SUMMARY_MAX_ERRORS, SUMMARY_MAX_FILES } from "./defaults.ts";
import type { SummarizeRequest, Summarizer, SummaryResult } from "./summarizer.ts";
import { parseSummarySections, renderSummarySections } from "./summary-format.ts";

export interface ExtractiveSummarizerOptions {
  /** Each user message is quoted verbatim up to this many characters; default 2,000. */
  maxUserMessageChars?: number;
  /** Files listed at most; default 30. */
  maxFiles?: number;
  /** Errors listed at most (the most recent); default 12. */
  maxErrors?: number;
}

const LANGUAGES: Record<string, string> = {
  ts: "TypeScript",
  tsx: "TypeScript",
  js: "JavaScript",
  mjs: "JavaScript",
  jsx: "JavaScript",
  py: "Python",
  rs: "Rust",
  go: "Go",
  java: "Java",
  c: "C",
  h: "C",
  cpp: "C++",
  rb: "Ruby",
  php: "PHP",
  md: "Markdown",
  json: "JSON",
  yaml: "YAML",
  yml: "YAML",
  toml: "TOML",
  sh: "shell",
  sql: "SQL",
  html: "HTML",
  css: "CSS",
};

/**
 * A summariser that calls no model: the nine sections filled from the conversation's structure — every user
 * message quoted verbatim (long ones capped), files read and changed from tool inputs, errors from error
 * results, commands run, pending tasks from the latest todo list, the current work from the tail, and a next
 * step quoted from the latest request. Deterministic (same messages, same summary) and free; the offline
 * default and the fallback when the model summariser's circuit breaker is open. With a previous summary it
 * merges into it (earlier requests, files and messages are carried forward) instead of summarising it.
 */
export function createExtractiveSummarizer(options: ExtractiveSummarizerOptions = {}): Summarizer {
  const maxQuote = options.maxUserMessageChars ?? QUOTE_CHARS;
  const maxFiles = options.maxFiles ?? SUMMARY_MAX_FILES;
  const maxErrors = options.maxErrors ?? SUMMARY_MAX_ERRORS;
  return {
    name: "extractive",
    async summarize(request: SummarizeRequest): Promise<SummaryResult> {
      const facts = collectConversationFacts(request.messages);
      const previous = request.previousSummary
        ? parseSummarySections(request.previousSummary)
        : new Map<string, string>();
      // Shrink the generous limits step by step until the summary fits its budget.
      const levels = [
        { quote: maxQuote, files: maxFiles, errors: maxErrors, notes: 10, current: 1_200, carried: 40 },
        { quote: Math.min(maxQuote, 1_000), files: 20, errors: 8, notes: 6, current: 800, carried: 25 },
        { quote: Math.min(maxQuote, 500), files: 12, errors: 5, notes: 3, current: 500, carried: 15 },
        { quote: Math.min(maxQuote, 240), files: 6, errors: 3, notes: 0, current: 300, carried: 8 },
        { quote: Math.min(maxQuote, 120), files: 3, errors: 2, notes: 0, current: 160, carried: 4 },
      ];
      let text = "";
      for (const level of levels) {
        text = renderSummarySections(buildSections(facts, previous, level, request.instructions));
        if (estimateTextTokens(text) <= request.maxTokens) break;
      }
      return { text, inputTokens: 0, outputTokens: 0, calls: 0 };
    },
  };
}

interface Level {
  quote: number;
  files: number;
  errors: number;
  notes: number;
  current: number;
  carried: number;
}

function buildSections(
  facts: ConversationFacts,
  previous: ReadonlyMap<string, string>,
  level: Level,
  instructions: string | undefined,
): Map<string, string> {
  const sections = new Map<string, string>();
  const quote = (text: string) => `"${clip(text.trim(), level.quote)}"`;

  const previousPrimary = previous.get("Primary Request and Intent");
  // The requests in brief: their full text is in "All User Messages", quoting them twice would double the cost.
  const brief = (text: string) => `"${clip(text.trim(), Math.min(level.quote, 400))}"`;
  const requests = facts.userMessages.map((text) => `- ${brief(text)}`);
  sections.set(
    "Primary Request and Intent",
    joinLines([
      previousPrimary ? carry(previousPrimary, level.carried) : undefined,
      previousPrimary
        ? requests.length > 0
          ? `Later requests:\n${requests.slice(-5).join("\n")}`
          : undefined
        : requests.length > 0
          ? `The user asked: ${brief(facts.userMessages[0]!)}${requests.length > 1 ? `\nLater requests:\n${requests.slice(1).slice(-5).join("\n")}` : ""}`
          : undefined,
      instructions?.trim()
        ? `Focus requested for this summary: ${clip(instructions.trim(), 500)}`
        : undefined,
    ]),
  );

  sections.set(
    "Key Technical Concepts",
    mergeLines(previous.get("Key Technical Concepts"), concepts(facts), level.carried),
  );

  const files = [...facts.files.values()]
    .sort((a, b) => b.last - a.last)
    .slice(0, level.files)
    .map(describeFile(level));
  sections.set(
    "Files and Code Sections",
    mergeByKey(previous.get("Files and Code Sections"), files, level.carried),
  );

  const errors = facts.errors.slice(-level.errors).map((error) => `- ${error.call}: ${error.error}`);
  sections.set("Errors and Fixes", mergeLines(previous.get("Errors and Fixes"), errors, level.errors));

  const notes = facts.notes.slice(-level.notes).map((note) => `- ${note}`);
  sections.set("Problem Solving", mergeLines(previous.get("Problem Solving"), notes, level.notes));

  const carriedMessages = previous.get("All User Messages");
  // Items are numbered; a quoted message may span several lines, so split before each number.
  const earlier = carriedMessages
    ? carriedMessages.split(/\n(?=\d+\.\s)/).filter((item) => /^\d+\.\s/.test(item))
    : [];
  const all = [...earlier.map((item) => item.replace(/^\d+\.\s/, "")), ...facts.userMessages.map(quote)];
  sections.set("All User Messages", all.map((line, index) => `${index + 1}. ${line}`).join("\n"));

  const open = facts.todos?.filter((item) => !/^(completed|done|cancelled)$/i.test(item.status));
  sections.set(
    "Pending Tasks",
    open === undefined
      ? (previous.get("Pending Tasks") ?? "- None recorded.")
      : open.length === 0
        ? "- None: every item of the latest todo list is completed."
        : open.map((item) => `- [${item.status}] ${clip(item.content, 300)}`).join("\n"),
  );

  sections.set(
    "Current Work",
    joinLines([
      facts.lastAssistantText
        ? `Last assistant message: ${quote(clip(facts.lastAssistantText, level.current))}`
        : undefined,
      facts.lastCalls.length > 0
        ? `Last tool calls:\n${facts.lastCalls.map((call) => `- ${call}`).join("\n")}`
        : undefined,
    ]) ||
      (previous.get("Current Work") ?? ""),
  );

  const active = facts.todos?.find((item) => /progress/i.test(item.status)) ?? open?.[0];
  const latest = facts.userMessages[facts.userMessages.length - 1];
  sections.set(
    "Optional Next Step",
    active
      ? `Continue the open task: "${clip(active.content, 300)}".`
      : latest !== undefined
        ? `Continue with the user's latest request: ${quote(latest)}`
        : (previous.get("Optional Next Step") ?? "- None recorded."),
  );
  return sections;
}

function describeFile(level: Level) {
  return (file: FileFacts): string => {
    const actions = [
      file.creates > 0 ? `created${file.creates > 1 ? ` ${file.creates}×` : ""}` : undefined,
      file.edits > 0 ? `edited ${file.edits}×` : undefined,
      file.reads > 0 ? `read ${file.reads}×` : undefined,
    ].filter((part): part is string => part !== undefined);
    const change =
      file.lastChange && level.notes > 0
        ? `\n  Last change: \`${clip(file.lastChange.replace(/\s+/g, " "), 200)}\``
        : "";
    return `- ${file.path} — ${actions.join(", ") || "mentioned"}${change}`;
  };
}

function concepts(facts: ConversationFacts): string[] {
  const languages = new Map<string, number>();
  for (const path of facts.files.keys()) {
    const extension = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
    const language = extension ? LANGUAGES[extension] : undefined;
    if (language) languages.set(language, (languages.get(language) ?? 0) + 1);
  }
  const tools = new Map<string, number>();
  for (const command of facts.commands) {
    const word = command
      .split(/\s+/)
      .find((part) => /^[a-z][\w.-]*$/.test(part) && !["cd", "sudo", "env", "time"].includes(part));
    if (word) tools.set(word, (tools.get(word) ?? 0) + 1);
  }
  const lines: string[] = [];
  if (languages.size > 0) {
    lines.push(
      `- Languages: ${[...languages]
        .sort((a, b) => b[1] - a[1])
        .map(([name, count]) => `${name} (${count} file${count > 1 ? "s" : ""})`)
        .join(", ")}`,
    );
  }
  if (tools.size > 0) {
    lines.push(
      `- Commands used: ${[...tools]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 12)
        .map(([name]) => name)
        .join(", ")}`,
    );
  }
  return lines;
}

function joinLines(parts: readonly (string | undefined)[]): string {
  return parts.filter((part): part is string => part !== undefined && part.length > 0).join("\n");
}

/** Previous lines first, then new ones not already there, the most recent `limit` kept. */
function mergeLines(previous: string | undefined, lines: readonly string[], limit: number): string {
  const carried = previous
    ? previous
        .split("\n")
        .filter(
          (line) =>
            line.startsWith("- ") && !line.includes("(nothing recorded)") && !line.startsWith("- None"),
        )
    : [];
  const merged = [...carried.filter((line) => !lines.includes(line)), ...lines];
  return merged.slice(-Math.max(limit, lines.length)).join("\n");
}

/** Like `mergeLines`, but a new line replaces an earlier one about the same file (same text up to " — "). */
function mergeByKey(previous: string | undefined, lines: readonly string[], limit: number): string {
  const key = (line: string) => line.split(" — ")[0];
  const fresh = new Set(lines.map(key));
  const carried = previous
    ? previous
        .split(/\n(?=- )/)
        .filter(
          (line) => line.startsWith("- ") && !line.includes("(nothing recorded)") && !fresh.has(key(line)),
        )
    : [];
  return [...carried.slice(-limit), ...lines].join("\n");
}

/** An earlier summary's section carried forward: at most `maxLines` lines, each cut to a quote's length. */
function carry(text: string, maxLines: number): string {
  const lines = text.split("\n").map((line) => clip(line, QUOTE_CHARS));
  return lines.length <= maxLines ? lines.join("\n") : [...lines.slice(0, maxLines), "…"].join("\n");
}
