import { describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { collapseContext } from "../layers/collapse-context.ts";
import { createExtractiveSummarizer } from "./extractive-summarizer.ts";
import { missingSections, parseSummarySections } from "./summary-format.ts";

// The assertion line of a failing node:test run, longer than a record's 160 characters: it must be kept whole.
const ASSERTION =
  "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: add(2, 2) returned 5 but the test expected 4; see test/calc.test.js:12:10 for the failing case";

/**
 * The session of the issue, scripted: the user asks to fix src/calc.js; the model reads a log and the README,
 * runs npm test (exit 1), tries to edit src/calc.js (denied), and then claims the tests pass.
 */
function calcSession() {
  const c = conversationBuilder().user("The tests fail: please fix src/calc.js so that npm test passes.");
  c.tool(
    "Read",
    { file_path: "logs/server.log" },
    "2026-01-01 ERROR: request failed\n2026-01-01 INFO: retrying",
  );
  c.tool("Read", { file_path: "README.md" }, "# calc\nA tiny calculator.\n\nRun `npm test`.");
  c.tool(
    "Bash",
    { command: "npm test" },
    `> calc@1.0.0 test\n> node --test\n\nnot ok 1 - adds two numbers\n  ${ASSERTION}\n    at TestContext.<anonymous> (test/calc.test.js:12:10)\nExit code 1.`,
    { isError: true },
  );
  c.tool(
    "Edit",
    { file_path: "src/calc.js", old_string: "a + b + 1", new_string: "a + b" },
    "The user denied Edit (write src/calc.js).",
    { isError: true },
  );
  c.assistant("Fixed: npm test passes now and the calculator adds correctly.");
  return c;
}

async function summarize(messages = calcSession().messages, previousSummary?: string) {
  const { text } = await createExtractiveSummarizer().summarize({
    messages,
    scope: "all",
    maxTokens: 4_000,
    ...(previousSummary ? { previousSummary } : {}),
  });
  expect(missingSections(text)).toEqual([]);
  return { text, sections: parseSummarySections(text) };
}

describe("the offline summary is built from facts", () => {
  it("records a failed call with its exit status and first error line, kept whole", async () => {
    const { sections } = await summarize();
    expect(sections.get("Errors and Fixes")).toContain(
      `- Bash(npm test) → exit 1: not ok 1 - adds two numbers | ${ASSERTION}`,
    );
    expect(sections.get("Problem Solving")).toContain("- Bash(npm test): last run failed (exit 1)");
  });

  it("records a denied call, and what it leaves undone", async () => {
    const { sections } = await summarize();
    expect(sections.get("Errors and Fixes")).toContain(
      "- Edit(src/calc.js) → denied: The user denied Edit (write src/calc.js).",
    );
    expect(sections.get("Pending Tasks")).toContain("- Not done: Edit(src/calc.js) was denied.");
    expect(sections.get("Pending Tasks")).toContain("- Unresolved: Bash(npm test) still fails (exit 1).");
  });

  it("lists the file the user asked to fix, whose change was denied, before the files only read", async () => {
    const files = (await summarize()).sections.get("Files and Code Sections")!.split("\n");
    const at = (path: string) => files.findIndex((line) => line.startsWith(`- ${path} — `));
    expect(files[at("src/calc.js")]).toBe("- src/calc.js — change denied 1×, named by the user");
    expect(at("src/calc.js")).toBeLessThan(at("logs/server.log"));
    expect(at("src/calc.js")).toBeLessThan(at("README.md"));
  });

  it("names the languages from file extensions: JavaScript, not Markdown", async () => {
    const concepts = (await summarize()).sections.get("Key Technical Concepts")!;
    expect(concepts).toContain("- Languages: JavaScript (1 file)");
    expect(concepts).not.toContain("Markdown");
  });

  it("never quotes the model's claim from a turn whose edit was denied and whose test failed", async () => {
    const { text, sections } = await summarize();
    expect(text).not.toContain("npm test passes now");
    expect(sections.get("Current Work")).toContain(
      "The assistant's last message is not quoted: in its turn Bash(npm test) failed (exit 1); Edit(src/calc.js) was denied.",
    );
    // A turn where everything went through is quoted.
    const clean = conversationBuilder().user("List the files.");
    clean.tool("Bash", { command: "ls" }, "a.js\nb.js\nExit code 0.");
    clean.assistant("There are two files.");
    expect((await summarize(clean.messages)).sections.get("Current Work")).toContain(
      'Last assistant message: "There are two files."',
    );
  });

  it("lists the user's requests in order, once, however many summaries follow each other", async () => {
    const first = await summarize();
    const second = conversationBuilder().user("Then add a subtract function.");
    second.tool("Edit", { file_path: "src/calc.js", old_string: "x", new_string: "y" }, "ok");
    const merged = await summarize(second.messages, first.text);
    const third = conversationBuilder().user("Finally, document both in README.md.");
    const last = await summarize(third.messages, merged.text);
    const requests = last.sections.get("Primary Request and Intent")!;
    expect(requests).not.toContain("Later requests");
    expect(requests.split("\n").filter((line) => /^\d+\. /.test(line))).toEqual([
      '1. "The tests fail: please fix src/calc.js so that npm test passes."',
      '2. "Then add a subtract function."',
      '3. "Finally, document both in README.md."',
    ]);
  });

  it("marks an earlier failure fixed when a later run of the same call succeeds", async () => {
    const first = await summarize();
    const later = conversationBuilder().user("Try again.");
    later.tool("Bash", { command: "npm test" }, "ok 1 - adds two numbers\nExit code 0.");
    const { sections } = await summarize(later.messages, first.text);
    expect(sections.get("Errors and Fixes")).toContain(
      `- Bash(npm test) → exit 1: not ok 1 - adds two numbers | ${ASSERTION} — fixed: a later run succeeded`,
    );
    expect(sections.get("Pending Tasks")).not.toContain("npm test");
  });

  it("reads the failures out of folded tool runs and digests (their records), not only out of raw outputs", async () => {
    const c = conversationBuilder().user("Make the build pass.");
    c.tool(
      "Bash",
      { command: "npm run build" },
      `src/a.ts(3,5): error TS2345: Argument of type 'string'\n${filler(300, 1)}\nExit code 2.`,
      { isError: true },
    );
    c.tool("Read", { file_path: "src/a.ts" }, `export const a = 1;\n${filler(300, 2)}`);
    c.tool("Bash", { command: "npm test" }, `ok\n${filler(300, 3)}\nExit code 0.`);
    c.assistant("Built.");
    c.user("Now the docs.");
    c.tool("Read", { file_path: "README.md" }, `# a\n${filler(300, 4)}`);
    for (const digestFinishedTurns of [false, true]) {
      const folded = collapseContext(c.messages, { protectRounds: 1, digestFinishedTurns });
      expect(folded.messages.length).toBeLessThan(c.messages.length);
      const errors = (await summarize(folded.messages)).sections.get("Errors and Fixes")!;
      expect(errors).toContain("Bash(npm run build) → exit 2: src/a.ts(3,5): error TS2345");
      expect(errors).not.toContain("npm test");
    }
  });

  it("keeps one failure of each kind before a newer repeat of a kind it lists already, in this summary and the next", async () => {
    const c = conversationBuilder().user("Make the scripts run.");
    const kinds = [
      "Error: ENOENT: no such file or directory, open 'config.json'",
      "TypeError: Cannot read properties of undefined (reading 'map')",
      "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'left-pad'",
    ];
    for (const [index, error] of kinds.entries())
      c.tool("Bash", { command: `node script-${index}.js` }, `${error}\nExit code 1.`, { isError: true });
    // Then one kind over and over, from many commands: more failures than the section lists.
    for (let run = 0; run < 30; run++)
      c.tool("Bash", { command: `node parse-${run}.js` }, "SyntaxError: Unexpected token '}'\nExit code 1.", {
        isError: true,
      });
    const first = await summarize(c.messages);
    const errors = first.sections.get("Errors and Fixes")!;
    for (const code of ["ENOENT", "TypeError", "ERR_MODULE_NOT_FOUND", "SyntaxError"])
      expect(errors).toContain(code);
    // The newest failures still come first in claim: the last run is listed.
    expect(errors).toContain("node parse-29.js");
    // A later summary over new repeats keeps the kinds the earlier one listed.
    const d = conversationBuilder().user("Go on.");
    for (let run = 30; run < 60; run++)
      d.tool("Bash", { command: `node parse-${run}.js` }, "SyntaxError: Unexpected token '}'\nExit code 1.", {
        isError: true,
      });
    const second = (await summarize(d.messages, first.text)).sections.get("Errors and Fixes")!;
    for (const code of ["ENOENT", "TypeError", "ERR_MODULE_NOT_FOUND"]) expect(second).toContain(code);
    expect(second).toContain("node parse-59.js");
  });
});
