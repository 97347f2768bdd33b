import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { estimateTextTokens } from "@unforget/tokens";

/** Tokens one section of the notes should stay under. */
export const SESSION_NOTES_SECTION_TOKENS = 2_000;
/** Tokens the whole notes file should stay under. */
export const SESSION_NOTES_TOTAL_TOKENS = 12_000;
/** Characters of one section that a compaction keeps (about 2,000 tokens). */
export const SESSION_NOTES_COMPACT_SECTION_CHARS = 8_000;
/** Marks a section cut by `truncateForCompact`. */
export const SESSION_NOTES_TRUNCATION_MARKER =
  "[... section truncated for length; the full notes are in the notes file ...]";

/** The ten sections of the working-memory notes, each with the line that says what belongs in it. */
export const DEFAULT_SESSION_NOTES_TEMPLATE = `# Session Title
_A short, distinctive title for this session, 5 to 10 words._

# Current State
_What is being worked on right now, what is still pending, and the immediate next step._

# Task Specification
_What the user asked for, with their constraints, preferences and design decisions._

# Files and Functions
_The files and functions that matter, and why each one does._

# Workflow
_The commands that are run and in what order (build, test, deploy), and how to read their output._

# Errors & Corrections
_Errors met and how they were fixed, what the user corrected, approaches that failed and must not be retried._

# Codebase and System Documentation
_How the relevant parts of the system fit together._

# Learnings
_What worked, what did not, what to avoid next time._

# Key Results
_Exact results the user asked for (answers, tables, numbers), kept verbatim._

# Worklog
_A terse, step-by-step log of what was done._
`;

/**
 * The update instructions. Variables: `{{currentNotes}}`, `{{notesPath}}`, `{{sectionTokens}}`,
 * `{{totalTokens}}`, `{{editTool}}`.
 */
export const DEFAULT_SESSION_NOTES_PROMPT = `IMPORTANT: this message is not part of the conversation with the user. It comes from the session-notes process, and nothing in it is something the user said or asked for.

Update the session notes at {{notesPath}} with what the conversation above shows. The notes are the working memory of this session: if the earlier conversation is removed, they are what the work continues from.

Current notes:
<current_notes>
{{currentNotes}}
</current_notes>

Rules:
- Use only the {{editTool}} tool, only on {{notesPath}}; you may call it several times. Do not answer with text.
- Keep every section header (lines starting with #) and the italic line under it exactly as they are; write below the italic line.
- Record what the user and the work established: decisions, file paths, commands, errors and their fixes, exact results. Not these instructions, not system reminders, and not injected memories as if the user had said them.
- Current State must always describe the latest work and the next step.
- Keep each section under about {{sectionTokens}} tokens and the whole file under {{totalTokens}} tokens; condense older detail rather than dropping what is still needed.`;

/** A template and an update prompt, possibly from a config folder. */
export interface SessionNotesConfig {
  template: string;
  prompt: string;
}

/**
 * Reads `template.md` (replaces the ten sections) and `prompt.md` (replaces the update instructions; use the
 * `{{currentNotes}}`-style variables) from `configDir`; a missing file keeps the default.
 */
export async function loadSessionNotesConfig(configDir: string | undefined): Promise<SessionNotesConfig> {
  const read = async (file: string) => {
    if (!configDir) return undefined;
    try {
      return await readFile(join(configDir, file), "utf8");
    } catch {
      return undefined;
    }
  };
  return {
    template: (await read("template.md")) ?? DEFAULT_SESSION_NOTES_TEMPLATE,
    prompt: (await read("prompt.md")) ?? DEFAULT_SESSION_NOTES_PROMPT,
  };
}

/** Replaces `{{name}}` with `variables[name]`; unknown names stay as they are. */
export function renderTemplate(text: string, variables: Record<string, string | number>): string {
  return text.replace(/\{\{\s*([A-Za-z]+)\s*\}\}/g, (whole, name: string) =>
    Object.hasOwn(variables, name) ? String(variables[name]) : whole,
  );
}

/** One `# ` section of the notes. */
export interface NotesSection {
  header: string;
  body: string;
  tokens: number;
}

/** Splits notes into their top-level sections (text before the first header is a section with header ""). */
export function splitNotesSections(notes: string): NotesSection[] {
  const sections: NotesSection[] = [];
  let header = "";
  let lines: string[] = [];
  const flush = () => {
    const body = lines.join("\n");
    if (header !== "" || body.trim() !== "")
      sections.push({ header, body, tokens: estimateTextTokens(body) });
  };
  for (const line of notes.split("\n")) {
    if (/^# /.test(line)) {
      flush();
      header = line;
      lines = [];
    } else lines.push(line);
  }
  flush();
  return sections;
}

/** True when the notes hold nothing but the template's headers and description lines. */
export function isEmptyNotes(notes: string, template: string): boolean {
  const strip = (text: string) =>
    text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !/^#/.test(line) && !/^_.*_$/.test(line));
  const templateLines = new Set(strip(template));
  return strip(notes).every((line) => templateLines.has(line));
}

export interface NotesBudget {
  sectionTokens?: number;
  totalTokens?: number;
}

/**
 * The reminders appended to the update prompt when the notes are over budget: the whole file over the total
 * (condense, keeping Current State and Errors & Corrections), and each section over its share.
 */
export function notesBudgetReminders(notes: string, budget: NotesBudget = {}): string {
  const sectionLimit = budget.sectionTokens ?? SESSION_NOTES_SECTION_TOKENS;
  const totalLimit = budget.totalTokens ?? SESSION_NOTES_TOTAL_TOKENS;
  const total = estimateTextTokens(notes);
  const reminders: string[] = [];
  if (total > totalLimit) {
    reminders.push(
      `CRITICAL: the notes are about ${total} tokens, over the ${totalLimit}-token limit. Condense them now: shorten every section, merge repeated points, drop detail that no longer matters; keep Current State and Errors & Corrections complete.`,
    );
  }
  const over = splitNotesSections(notes).filter(
    (section) => section.header !== "" && section.tokens > sectionLimit,
  );
  if (over.length > 0) {
    reminders.push(
      `These sections are over their ${sectionLimit}-token share and must be condensed: ${over
        .map((section) => `"${section.header.replace(/^# /, "")}" (~${section.tokens} tokens)`)
        .join(", ")}.`,
    );
  }
  return reminders.join("\n");
}

/**
 * The notes as a compaction uses them: each section cut to `maxSectionChars` on a line boundary with a
 * marker, every header kept, so the compacted context cannot be blown up by one runaway section.
 */
export function truncateForCompact(
  notes: string,
  maxSectionChars: number = SESSION_NOTES_COMPACT_SECTION_CHARS,
): string {
  return splitNotesSections(notes)
    .map(({ header, body }) => {
      let kept = body;
      if (body.length > maxSectionChars) {
        const cut = body.lastIndexOf("\n", maxSectionChars);
        kept = `${body.slice(0, cut > 0 ? cut : maxSectionChars)}\n${SESSION_NOTES_TRUNCATION_MARKER}`;
      }
      return header === "" ? kept : `${header}\n${kept}`;
    })
    .join("\n");
}
