import { createAnthropicProvider } from "@unforget/provider-anthropic";
import { type AnthropicFakeServer, startAnthropicFake } from "@unforget/testing/fakes";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { conversationBuilder } from "../__fixtures__/builders.ts";
import { buildCompactPrompt, summaryLayout } from "./compact-prompt.ts";
import { createModelSummarizer } from "./model-summarizer.ts";
import {
  formatSummaryReply,
  hasEnoughSections,
  missingSections,
  parseSummarySections,
  SUMMARY_SECTIONS,
} from "./summary-format.ts";

/**
 * Replies in the layouts models write their summaries in, paraphrased (the content is ours): Claude Code's
 * summaries as its transcripts show them, the same with tags and with the title inline, bold and Markdown
 * variants, the headings of OpenCode's compaction template and of Codex's handoff summaries.
 */
const LAYOUTS: { name: string; reply: string; sections: number }[] = [
  {
    name: "Claude Code as its transcripts show it: Analysis:/Summary:, numbered titles, bodies indented below",
    sections: 9,
    reply: `Analysis:
Going through the conversation in order:
1. **First request**: the parser drops the timezone.
2. I read src/date.ts and ran the tests.

Summary:
1. Primary Request and Intent:
   The user asked to fix the date parser in src/date.ts without changing its public API.
2. Key Technical Concepts:
   - TypeScript, vitest, ISO 8601 offsets
3. Files and Code Sections:
   - src/date.ts
      - parse() now calls parseIso
      \`\`\`ts
      export function parse(s: string) { return parseIso(s); }
      \`\`\`
4. Errors and fixes:
   - vitest failed with "expected 2024-01-01":
      - Fixed by parsing the offset explicitly.
5. Problem Solving:
   The offset bug is solved; leap years are still open.
6. All user messages:
   - "Fix the date parser in src/date.ts; keep the public API unchanged."
   - "Also: always use pnpm, never npm."
7. Pending Tasks:
   - Add a leap-year test.
8. Current Work:
   Writing the leap-year test in src/date.test.ts.
9. Optional Next Step:
   Run pnpm test once the test is written.`,
  },
  {
    name: "the prompt's own numbering with each title inline: `1. Title: text`",
    sections: 9,
    reply: `<analysis>scratch</analysis>
<summary>
1. Primary Request and Intent: fix the date parser in src/date.ts, public API unchanged.
2. Key Technical Concepts: TypeScript, vitest.
3. Files and Code Sections: src/date.ts (parse calls parseIso now).
4. Errors and Fixes: the offset test failed; fixed by parsing the offset.
5. Problem Solving: offsets solved, leap years open.
6. All User Messages: "Fix the date parser…", "Always use pnpm."
7. Pending Tasks: a leap-year test.
8. Current Work: writing src/date.test.ts.
9. Optional Next Step: run pnpm test.
</summary>`,
  },
  {
    name: "bold numbered titles with the text after them: `**1. Title:** text`",
    sections: 9,
    reply: `<summary>
**1. Primary Request and Intent:** fix the date parser.
**2. Key Technical Concepts:** TypeScript.
**3. Files and Code Sections:** src/date.ts.
**4. Errors and Fixes:** the offset test failed, now fixed.
**5. Problem Solving:** offsets solved.
**6. All User Messages:** "Fix the date parser", "Always use pnpm."
**7. Pending Tasks:** leap years.
**8. Current Work:** src/date.test.ts.
**9. Optional Next Step:** run pnpm test.
</summary>`,
  },
  {
    name: "Markdown headings without numbers, another order, bold and upper-case titles",
    sections: 9,
    reply: `<summary>
### Current Work
Writing the leap-year test.
### Primary Request and Intent
Fix the date parser.
**Key Technical Concepts**
- TypeScript
#### files and code sections
- src/date.ts
1. **Errors and Fixes**: the offset test failed, fixed.
PROBLEM SOLVING:
Offsets solved.
## All User Messages
- "Fix the date parser"
## Pending Tasks
- leap years
## Optional Next Step
Run pnpm test.
</summary>`,
  },
  {
    name: "small wording differences: `&`, Technical concepts, Problem-solving, Pending tasks / next steps",
    sections: 9,
    reply: `# Summary
## Primary request & intent
Fix the date parser.
## Technical concepts
- TypeScript
## Files & code
- src/date.ts
## Errors and fixes
- offset test failed, fixed
## Problem-solving
Offsets solved.
## User messages
- "Fix the date parser"
## Pending tasks / next steps
- leap years, then run pnpm test
## Current work
Writing src/date.test.ts.`,
  },
  {
    name: "OpenCode's compaction template: Goal, Instructions, Discoveries, Accomplished, Relevant files / directories",
    sections: 5,
    reply: `## Goal

Fix the date parser in src/date.ts so that offsets are kept, without changing its public API.

## Instructions

- Use pnpm, never npm.
- Keep parse() and format() signatures as they are.

## Discoveries

The parser passed the string to new Date, which drops the offset on some inputs.

## Accomplished

The offset is parsed explicitly and the offset test passes; the leap-year test is still to write.

## Relevant files / directories

- src/date.ts — the parser
- src/date.test.ts — its tests`,
  },
  {
    name: "a Codex handoff summary in bold labels (objective, instructions, entities, files, failures, next steps)",
    sections: 8,
    reply: `**Objective:** fix the date parser in src/date.ts.

**User instructions:**
- use pnpm
- keep the public API

**AI actions / code behavior:**
- parse() calls parseIso now

**Important entities:** parse, parseIso, src/date.ts

**Related files / documents:** src/date.ts, src/date.test.ts

**Failed approaches / avoid:** passing the string to new Date drops the offset.

**Helpful techniques / approaches:** a table of offset cases in the test.

**Open issues / next steps:** the leap-year test.

**Summary (concise):** the offset bug is fixed; leap years remain.`,
  },
  {
    name: "a Codex context-checkpoint handoff (progress and decisions, context and preferences, what remains, references)",
    sections: 6,
    reply: `Handoff for the next model.

## Current progress and key decisions
- The offset is parsed explicitly; new Date is no longer used for ISO input.

## Important context, constraints, and user preferences
- The public API must not change; use pnpm.

## What remains to be done (clear next steps)
1. Write the leap-year test.
2. Run pnpm test.

## Critical data, examples, and references
- src/date.ts, src/date.test.ts; failing input "2024-02-29T00:00:00+02:00".`,
  },
];

describe("summary sections in any layout", () => {
  it.each(LAYOUTS)("finds the sections of $name", ({ reply, sections }) => {
    const summary = formatSummaryReply(reply);
    expect(SUMMARY_SECTIONS.length - missingSections(summary).length).toBe(sections);
    expect(hasEnoughSections(summary)).toBe(true);
  });

  it("reads each section's text, on the heading's line or below it, and skips the analysis part", () => {
    const inline = parseSummarySections(formatSummaryReply(LAYOUTS[1]!.reply));
    expect(inline.get("Errors and Fixes")).toBe("the offset test failed; fixed by parsing the offset.");
    const transcript = formatSummaryReply(LAYOUTS[0]!.reply);
    expect(transcript.startsWith("1. Primary Request and Intent:")).toBe(true);
    expect(parseSummarySections(transcript).get("Files and Code Sections")).toContain(
      "export function parse(s: string)",
    );
    const opencode = parseSummarySections(formatSummaryReply(LAYOUTS[5]!.reply));
    expect(opencode.get("All User Messages")).toContain("Use pnpm, never npm.");
    expect(opencode.get("Files and Code Sections")).toContain("src/date.test.ts — its tests");
  });

  it("does not take a numbered list item, a quoted one-word label or a code line in a body for a heading", () => {
    const summary = [
      "## 5. Problem Solving",
      "1. Files were read in order",
      "2. Errors and warnings went down after the fix",
      "The user's message said:",
      "Task:",
      "INSTRUCTIONS:",
      "```",
      "Pending Tasks:",
      "```",
    ].join("\n");
    expect(missingSections(summary)).toHaveLength(8);
    expect(parseSummarySections(summary).get("Problem Solving")).toContain("2. Errors and warnings");
  });

  it("rejects a reply that is no summary, or has too few of the sections", () => {
    expect(hasEnoughSections("I could not summarise this conversation.")).toBe(false);
    expect(hasEnoughSections("## Goal\nFix it.\n## Next steps\nRun the tests.")).toBe(false);
  });

  it("shows in the prompt exactly the layout that is checked", () => {
    const prompt = buildCompactPrompt({ scope: "all" });
    expect(prompt).toContain(summaryLayout());
    const filled = formatSummaryReply(summaryLayout().replaceAll("…", "some content"));
    expect(missingSections(filled)).toEqual([]);
    for (const body of parseSummarySections(filled).values()) expect(body).toBe("some content");
  });
});

describe("the model summariser accepts every layout in one call", () => {
  let fake: AnthropicFakeServer;
  beforeAll(async () => {
    fake = await startAnthropicFake();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
  });

  const session = () =>
    conversationBuilder()
      .user("Fix the date parser in src/date.ts; keep the public API unchanged.")
      .tool(
        "Bash",
        { command: "pnpm test" },
        "FAIL src/date.test.ts\nError: expected 2024-01-01\nExit code 1.",
        {
          isError: true,
        },
      )
      .tool("Edit", { file_path: "src/date.ts", old_string: "new Date(s)", new_string: "parseIso(s)" }, "ok");

  /** The model summariser of the session, the model answering `reply`. */
  const summarizeReply = (reply: string) => {
    fake.enqueue({ kind: "reply", text: reply });
    return createModelSummarizer({
      provider: createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: fake.url, initialRetryDelayMs: 1 }),
      model: "claude-sonnet-4-6",
    }).summarize({ messages: session().messages, scope: "all", maxTokens: 4_000 });
  };

  it.each(LAYOUTS)("uses $name and fills in what it lacks, marked", async ({ reply, sections }) => {
    const result = await summarizeReply(reply);
    expect(result.calls).toBe(1);
    expect(missingSections(result.text)).toEqual([]);
    const marks = result.text.split("Filled in by the offline extractor").length - 1;
    expect(marks).toBe(9 - sections);
  });

  it("fills a missing section from the conversation's record: the failed test run of an OpenCode-style reply", async () => {
    const result = await summarizeReply(LAYOUTS[5]!.reply);
    expect(parseSummarySections(result.text).get("Errors and Fixes")).toContain(
      "Bash(pnpm test) → exit 1: FAIL src/date.test.ts | Error: expected 2024-01-01",
    );
    expect(result.text.startsWith("## Goal")).toBe(true);
  });
});
