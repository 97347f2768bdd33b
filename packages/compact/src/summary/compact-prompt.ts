import type { SummaryScope } from "./summarizer.ts";
import { SUMMARY_SECTIONS, sectionHeading } from "./summary-format.ts";

const NO_TOOLS = [
  "IMPORTANT: answer with plain text only. Do not call any tool — not a file read, not a shell command, not a search.",
  "You have exactly one turn and a tool call would waste it: the request fails and nothing is summarised.",
  "Your whole reply is an <analysis> block followed by a <summary> block.",
].join("\n");

const SECTION_GUIDANCE: Record<string, string> = {
  "Primary Request and Intent": "every explicit request and goal of the user, in detail",
  "Key Technical Concepts": "technologies, frameworks, conventions and design decisions that matter",
  "Files and Code Sections":
    "each file read, changed or created, why it matters, and the code that matters (exact snippets)",
  "Errors and Fixes": "each error met, how it was fixed, and what the user said about it",
  "Problem Solving": "problems solved and any troubleshooting still going on",
  "All User Messages":
    "every message the user wrote (not tool results), quoted verbatim or as close as possible — corrections and preferences live here",
  "Pending Tasks": "what was asked and is not done yet",
  "Current Work": "exactly what was being done just before this summary, with file names and code",
  "Optional Next Step":
    "the next step, only if it follows directly from the latest request, with a verbatim quote showing where the work stopped",
};

const CARRIED_GUIDANCE =
  "the system keeps every message the user wrote verbatim beside your summary, so list them briefly (a line each) and say which corrections and preferences still hold";

export interface CompactPromptOptions {
  scope: SummaryScope;
  /** The user's and the plugins' extra instructions. */
  instructions?: string;
  /** The previous summary to update. */
  previousSummary?: string;
  /** The caller keeps the user's messages verbatim beside the summary: "All User Messages" may be brief. */
  userMessagesCarried?: boolean;
}

/**
 * The instruction appended (as the last user message) to the conversation a model summarises: text only,
 * a scratchpad then nine sections, the scope's wording, the previous summary to update, the extra
 * instructions after the built-in ones, and the no-tools rule again at the very end.
 */
export function buildCompactPrompt(options: CompactPromptOptions): string {
  const scope =
    options.scope === "up_to"
      ? "Summarise the conversation above, which is the older part of a longer one: the messages that follow it will stay in the context verbatim, so concentrate on what they will not show."
      : options.scope === "from"
        ? "Summarise only the recent part of the conversation (the messages after the earlier context that stays in place); the earlier messages remain visible, so do not repeat them."
        : "Summarise the whole conversation above so that the work can continue from your summary alone.";
  const parts = [
    NO_TOOLS,
    "",
    scope,
    "First, inside <analysis> tags, go through the conversation in order and note each request, decision, file, code change, error and piece of user feedback. This scratchpad is thrown away.",
    "Then, inside <summary> tags, write these nine sections, each under its heading on a line of its own, exactly as shown, with its content on the lines after it:",
    "",
    summaryLayout(),
    "",
    "What each section holds:",
    ...SUMMARY_SECTIONS.map(
      (title, index) =>
        `${index + 1}. ${title}: ${options.userMessagesCarried && title === "All User Messages" ? CARRIED_GUIDANCE : SECTION_GUIDANCE[title]}.`,
    ),
  ];
  if (options.previousSummary) {
    parts.push(
      "",
      "A summary of the conversation before these messages already exists (below). Update it rather than starting over: keep every fact that is still true, carry the user's messages forward, and replace only what the new messages changed.",
      "<previous-summary>",
      options.previousSummary,
      "</previous-summary>",
    );
  }
  if (options.instructions?.trim()) {
    parts.push("", "Additional instructions for this summary:", options.instructions.trim());
  }
  parts.push("", NO_TOOLS);
  return parts.join("\n");
}

/** The layout a summary is checked against: the nine headings (`## N. Title`) inside `<summary>` tags. */
export function summaryLayout(): string {
  return [
    "<summary>",
    ...SUMMARY_SECTIONS.flatMap((title) => [sectionHeading(title), "…"]),
    "</summary>",
  ].join("\n");
}

/** The reminder sent when a summary came back with too few of its sections. */
export function missingSectionsReminder(missing: readonly string[]): string {
  return [
    `Your summary is missing these sections: ${missing.join(", ")}. Reply again with the complete summary in this layout, each heading on a line of its own:`,
    "",
    summaryLayout(),
    "",
    "Text only; do not call any tool.",
  ].join("\n");
}
