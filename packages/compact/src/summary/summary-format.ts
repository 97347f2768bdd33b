import { SUMMARY_MIN_SECTIONS } from "../defaults.ts";

/** The nine sections every compaction summary has, in order. */
export const SUMMARY_SECTIONS: readonly string[] = Object.freeze([
  "Primary Request and Intent",
  "Key Technical Concepts",
  "Files and Code Sections",
  "Errors and Fixes",
  "Problem Solving",
  "All User Messages",
  "Pending Tasks",
  "Current Work",
  "Optional Next Step",
]);

/**
 * The titles models give each section, normalised (lower case, words only). Besides the nine titles and their
 * small variants ("Errors and fixes", "Technical Concepts", "Pending tasks / next steps"), the headings of the
 * summaries other agents ask for: OpenCode's template (Goal, Instructions, Discoveries, Accomplished, Relevant
 * files / directories) and Codex's handoff summary (current progress and key decisions, constraints and user
 * preferences, what remains, critical data and references).
 */
const ALIASES: Readonly<Record<string, readonly string[]>> = {
  "Primary Request and Intent": [
    "primary request and intent",
    "primary requests and intent",
    "primary request",
    "primary requests",
    "request and intent",
    "requests and intent",
    "user request",
    "user requests",
    "users request",
    "users requests",
    "original request",
    "request",
    "requests",
    "intent",
    "goal",
    "goals",
    "main goal",
    "overall goal",
    "session goal",
    "objective",
    "objectives",
    "main objective",
    "task",
    "task description",
    "the task",
  ],
  "Key Technical Concepts": [
    "key technical concepts",
    "technical concepts",
    "key concepts",
    "concepts",
    "key technologies",
    "technologies",
    "tech stack",
    "technical context",
    "important context",
    "context",
    "discoveries",
    "key discoveries",
    "key findings",
    "findings",
    "key decisions",
    "decisions",
    "decisions made",
    "important entities",
    "key facts",
    "learnings",
  ],
  "Files and Code Sections": [
    "files and code sections",
    "files and code",
    "code sections",
    "files",
    "key files",
    "relevant files",
    "relevant files and directories",
    "related files",
    "related files and documents",
    "files changed",
    "changed files",
    "files modified",
    "modified files",
    "files touched",
    "code changes",
    "references",
    "critical data",
    "any critical data",
  ],
  "Errors and Fixes": [
    "errors and fixes",
    "errors and fixes made",
    "errors",
    "errors encountered",
    "errors and issues",
    "issues and fixes",
    "bugs and fixes",
    "failures",
    "failed approaches",
    "what failed",
    "known issues",
    "problems encountered",
  ],
  "Problem Solving": [
    "problem solving",
    "problems solved",
    "troubleshooting",
    "solutions",
    "approach",
    "approaches",
    "helpful techniques",
    "what worked",
    "debugging",
  ],
  "All User Messages": [
    "all user messages",
    "user messages",
    "all the user messages",
    "users messages",
    "user instructions",
    "instructions",
    "user feedback",
    "user preferences",
    "preferences",
    "constraints",
    "constraints and preferences",
    "user constraints",
  ],
  "Pending Tasks": [
    "pending tasks",
    "pending",
    "pending work",
    "remaining tasks",
    "remaining work",
    "remaining",
    "todo",
    "to do",
    "todos",
    "open tasks",
    "open issues",
    "open questions",
    "outstanding",
    "outstanding tasks",
    "what remains",
    "what remains to be done",
    "what is left",
    "left to do",
    "blocked",
  ],
  "Current Work": [
    "current work",
    "current state",
    "current status",
    "status",
    "state",
    "progress",
    "current progress",
    "progress so far",
    "work so far",
    "accomplished",
    "work completed",
    "completed work",
    "completed",
    "done",
    "in progress",
    "what was done",
    "work done",
    "current task",
    "recent work",
    "where we left off",
  ],
  "Optional Next Step": [
    "optional next step",
    "optional next steps",
    "next step",
    "next steps",
    "immediate next step",
    "immediate next steps",
    "recommended next step",
    "clear next steps",
    "next action",
    "next actions",
    "action items",
    "whats next",
    "next",
    "plan",
  ],
};

const EXACT = new Map<string, string>();
for (const [section, aliases] of Object.entries(ALIASES)) {
  for (const alias of aliases) EXACT.set(alias, section);
}
const BY_LENGTH = [...EXACT.keys()].sort((a, b) => b.length - a.length);
/** A heading may go on past its title by a few words ("Pending tasks / next steps", "Current Work on the parser"). */
const MAX_EXTRA_WORDS = 6;

/** A title as it is compared: lower case, `&` as "and", punctuation and markup as spaces, apostrophes dropped. */
function normalizeTitle(title: string): string {
  return title
    .toLowerCase()
    .replace(/['’`]/g, "")
    .replace(/&/g, " and ")
    .replace(/[^a-z0-9]+/g, " ")
    .trim();
}

/** The section one title names: an exact alias, or (when `allowExtra`) an alias followed by a few more words. */
function sectionOfPart(normalized: string, allowExtra: boolean): string | undefined {
  const exact = EXACT.get(normalized);
  if (exact || !allowExtra) return exact;
  for (const alias of BY_LENGTH) {
    if (!normalized.startsWith(`${alias} `)) continue;
    const extra = normalized.slice(alias.length).trim().split(" ").length;
    return extra <= MAX_EXTRA_WORDS ? EXACT.get(alias) : undefined;
  }
  return undefined;
}

/**
 * The sections a heading's title names. A title that is no alias as a whole may join several
 * ("Current progress and key decisions", "Pending tasks / next steps", "Important context, constraints, and
 * user preferences"): each part is looked up, and the heading stands for every section a part names.
 */
function sectionsOfTitle(title: string, allowExtra: boolean): string[] {
  const whole = normalizeTitle(title);
  if (whole.length === 0) return [];
  const exact = EXACT.get(whole);
  if (exact) return [exact];
  const parts = title
    .split(/[,/&()+;]|\band\b|\bor\b/i)
    .map((part) => normalizeTitle(part))
    .filter((part) => part.length > 0);
  // A bare line (no `#`, bold or colon) must be one title exactly: "2. Errors and warnings went down" is a list item.
  if (parts.length > 1 && allowExtra) {
    const sections = [...new Set(parts.flatMap((part) => sectionOfPart(part, allowExtra) ?? []))];
    if (sections.length > 0) return sections;
  }
  const section = sectionOfPart(whole, allowExtra);
  return section ? [section] : [];
}

interface Heading {
  /** The sections it stands for; its body goes to the first. */
  sections: string[];
  /** Where the heading line starts in the text. */
  start: number;
  /** Where its body starts: after the title, so text on the same line after `Title:` belongs to the body. */
  bodyStart: number;
}

const BOLD = /^(?:\*\*|__)/;

/**
 * The section a line opens, when it is a heading: `## 3. Title`, `3. Title:` (body on the same line or the
 * next), `**3. Title:** text`, `3. **Title**: text`, `**Title**`, `Title:` alone on its line, any case, with
 * small wording differences. Returns the offset in the line where its body starts.
 */
function headingOfLine(line: string): { sections: string[]; bodyOffset: number } | undefined {
  const indent = line.length - line.trimStart().length;
  let rest = line.slice(indent);
  let at = indent;
  const skip = (count: number) => {
    rest = rest.slice(count);
    at += count;
    const spaces = rest.length - rest.trimStart().length;
    rest = rest.slice(spaces);
    at += spaces;
  };
  let marked = false;
  const hashes = /^#{1,6}\s+/.exec(rest);
  if (hashes) {
    skip(hashes[0].length);
    marked = true;
  }
  let bold = false;
  if (BOLD.test(rest)) {
    skip(2);
    bold = true;
  }
  const number = /^(?:\d{1,2}|[IVX]{1,4})[.)]\s+/.exec(rest);
  if (number) {
    skip(number[0].length);
    marked = true;
  }
  if (!bold && BOLD.test(rest)) {
    skip(2);
    bold = true;
  }
  // The title runs to a colon, the end of the bold run, or the end of the line.
  const end = rest.search(/[:：]|\*\*|__/);
  const title = end < 0 ? rest : rest.slice(0, end);
  let after = end < 0 ? "" : rest.slice(end);
  let afterAt = at + title.length;
  const consume = (pattern: RegExp) => {
    const match = pattern.exec(after);
    if (!match) return false;
    after = after.slice(match[0].length);
    afterAt += match[0].length;
    return true;
  };
  const closedBold = bold && consume(/^\s*(?:\*\*|__)/);
  const colon = consume(/^\s*[:：]/);
  if (bold && !closedBold) consume(/^\s*(?:\*\*|__)/);
  if (bold && !closedBold && !/^\s*$/.test(after) && !colon) return undefined;
  const inline = after.trim().length > 0;
  if (!marked && !bold) {
    // A plain line is a heading only when it is a title of several words alone on its line (`Current work:`,
    // `PRIMARY REQUEST AND INTENT`): a quoted message's "Task:" or "Instructions:" line is not one.
    if (inline || !/\s/.test(title.trim())) return undefined;
    const sections = sectionsOfTitle(title, false);
    return sections.length > 0 ? { sections, bodyOffset: line.length } : undefined;
  }
  // A numbered line with text after its title needs the colon (`3. Title: text`), so that a numbered list
  // item in a body ("1. Files were read first") is not taken for a heading.
  if (inline && !colon && !closedBold) return undefined;
  // A title that goes on past its words ("Pending tasks / next steps") is taken only from a line marked as a
  // heading by `#`, bold or a colon: a bare numbered line must be the title exactly.
  const sections = sectionsOfTitle(title, hashes !== null || bold || colon);
  if (sections.length === 0) return undefined;
  const leading = after.length - after.trimStart().length;
  return { sections, bodyOffset: afterAt + leading };
}

/** Every heading of a summary, in order (a section may have several). Fenced code blocks are skipped. */
function findHeadings(summary: string): Heading[] {
  const headings: Heading[] = [];
  let offset = 0;
  let fenced = false;
  for (const line of summary.split("\n")) {
    if (/^\s*(?:```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) {
      const heading = headingOfLine(line);
      if (heading) {
        headings.push({ sections: heading.sections, start: offset, bodyStart: offset + heading.bodyOffset });
      }
    }
    offset += line.length + 1;
  }
  return headings;
}

/**
 * The sections a summary lacks. A section is found by its title wherever it stands: `## 3. Title`,
 * `3. Title: text`, `**3. Title:** text`, `**Title**`, `Title:` alone on its line; numbered or not, any case,
 * with small wording differences and the titles other agents' summaries use (see `ALIASES`).
 */
export function missingSections(summary: string): string[] {
  const found = new Set(findHeadings(summary).flatMap((heading) => heading.sections));
  return SUMMARY_SECTIONS.filter((title) => !found.has(title));
}

/** True when a summary has enough of the sections to be used (the others are filled in), else false. */
export function hasEnoughSections(summary: string, missing = missingSections(summary)): boolean {
  return SUMMARY_SECTIONS.length - missing.length >= SUMMARY_MIN_SECTIONS;
}

/**
 * A model's compaction reply as it is kept: the `<analysis>` scratchpad removed, the content of `<summary>`
 * when there is one (else the whole reply, less a leading `Analysis:` part when a `Summary:` line follows it),
 * trimmed.
 */
export function formatSummaryReply(reply: string): string {
  const withoutAnalysis = reply.replace(/<analysis>[\s\S]*?(?:<\/analysis>|$)/gi, "");
  const match = /<summary>([\s\S]*?)(?:<\/summary>|$)/i.exec(withoutAnalysis);
  if (match) return match[1]!.trim();
  // Claude Code shows its summaries as "Analysis:\n…\nSummary:\n…"; a model that saw one may answer so.
  if (/^\s*(?:#{1,6}\s*)?(?:\*\*)?analysis\b/i.test(withoutAnalysis)) {
    const summaryLine =
      /^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*)?summary(?:\*\*)?[ \t]*:?[ \t]*(?:\*\*)?[ \t]*$/im.exec(
        withoutAnalysis,
      );
    if (summaryLine) return withoutAnalysis.slice(summaryLine.index + summaryLine[0].length).trim();
  }
  return withoutAnalysis.trim();
}

/**
 * Splits a summary into its sections by their headings (as `missingSections` finds them); a section with
 * several headings gets their bodies joined. Text before the first heading is dropped.
 */
export function parseSummarySections(summary: string): Map<string, string> {
  const headings = findHeadings(summary);
  const sections = new Map<string, string>();
  headings.forEach((heading, index) => {
    const end = headings[index + 1]?.start ?? summary.length;
    const body = summary.slice(heading.bodyStart, end).trim();
    const section = heading.sections[0]!;
    const earlier = sections.get(section);
    sections.set(section, earlier ? [earlier, body].filter(Boolean).join("\n") : body);
  });
  return sections;
}

/** The heading line of a section as the prompt shows it and the summaries are written: `## 3. Title`. */
export function sectionHeading(title: string): string {
  return `## ${SUMMARY_SECTIONS.indexOf(title) + 1}. ${title}`;
}

/** Renders the nine sections under their headings (`## N. Title`), empty ones saying so. */
export function renderSummarySections(sections: ReadonlyMap<string, string>): string {
  return SUMMARY_SECTIONS.map((title) => {
    const body = sections.get(title)?.trim();
    return `${sectionHeading(title)}\n${body && body.length > 0 ? body : "- (nothing recorded)"}`;
  }).join("\n\n");
}

/**
 * A summary with the sections it lacks appended from `filled` (the offline extractor's), each marked as such,
 * so that the reader knows which parts a model wrote and which the conversation's record gave.
 */
export function fillMissingSections(
  summary: string,
  filled: ReadonlyMap<string, string>,
  missing = missingSections(summary),
): string {
  if (missing.length === 0) return summary;
  const parts = missing.map((title) => {
    const body = filled.get(title)?.trim();
    return [
      sectionHeading(title),
      "(Filled in by the offline extractor from the conversation's record: the model's summary had no such section.)",
      body && body.length > 0 ? body : "- (nothing recorded)",
    ].join("\n");
  });
  return [summary.trimEnd(), ...parts].join("\n\n");
}
