import { stripVTControlCharacters } from "node:util";
import chalk from "chalk";
import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./render-markdown.ts";

/** What the terminal shows, without the styles. */
const shown = (markdown: string, width = 40) => stripVTControlCharacters(renderMarkdown(markdown, width));

describe("renderMarkdown", () => {
  it("draws headings without their #s", () => {
    const text = shown("## Plan\n\n### Details\n\nbody");
    expect(text).toBe("Plan\n\nDetails\n\nbody");
  });

  it("styles what is inside list items, table cells and quotes (no ** or backticks left)", () => {
    const text = shown(
      "- a **bold** item with `code`\n- an *em* one\n\n| a | b |\n|---|---|\n| **1** | `2` |\n\n> quoted **x**",
      60,
    );
    expect(text).not.toMatch(/\*|`/);
    expect(text).toContain("• a bold item with code");
    expect(text).toContain("• an em one");
    expect(text).toMatch(/│ 1 +│ 2 +│/);
    expect(text).toContain("│ quoted x");
  });

  it("wraps a long list item under its own text, nested items under theirs", () => {
    const lines = shown(
      "- first, a list item that is long enough to wrap across more than one line\n  1. a nested item that wraps as well, under its own text\n- second",
      30,
    ).split("\n");
    expect(lines[0]).toMatch(/^• first, a list item/);
    const continued = lines.slice(
      1,
      lines.findIndex((line) => line.startsWith("  1.")),
    );
    expect(continued.length).toBeGreaterThan(0);
    for (const line of continued) expect(line).toMatch(/^ {2}\S/);
    const nested = lines.findIndex((line) => line.startsWith("  1. a nested"));
    expect(lines[nested + 1]).toMatch(/^ {5}\S/);
    expect(lines.at(-1)).toBe("• second");
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(30);
  });

  it("numbers ordered lists from their start, and marks task items", () => {
    expect(shown("3. three\n4. four")).toBe("3. three\n4. four");
    expect(shown("- [x] done\n- [ ] open")).toBe("• [x] done\n• [ ] open");
  });

  it("keeps code blocks as they are, indented, and never wraps them", () => {
    const long = `const value = ${"1 + ".repeat(20)}1;`;
    expect(shown(`\`\`\`js\n${long}\n  return x;\n\`\`\``, 30)).toBe(`  ${long}\n    return x;`);
  });

  it("colours a code block of a known language on a colour terminal, and shows its text as written", () => {
    const level = chalk.level;
    chalk.level = 1;
    try {
      const code = 'const a = x < 1 && y > "2"; // note\nfunction f() {}';
      const styled = renderMarkdown(`\`\`\`ts\n${code}\n\`\`\``, 40);
      expect(stripVTControlCharacters(styled)).toBe(
        `  const a = x < 1 && y > "2"; // note\n  function f() {}`,
      );
      expect(styled).toContain(chalk.blue("const"));
      expect(styled).toContain(chalk.red('"2"'));
      expect(styled).toContain(chalk.green("// note"));
      // An unknown language is shown plain.
      expect(renderMarkdown("```nosuchlanguage\nconst a = 1;\n```", 40)).toBe("  const a = 1;");
    } finally {
      chalk.level = level;
    }
  });

  it("shows a link's address beside its text, decodes entities, and drops control characters", () => {
    expect(shown("see [the docs](https://example.com/docs) &amp; more", 60)).toBe(
      "see the docs (https://example.com/docs) & more",
    );
    expect(shown("a\u001b]0;pwned\u0007b \u001b[2Jc")).toBe("a]0;pwnedb [2Jc");
  });

  it("renders text that is still streaming, and what is not closed yet as typed", () => {
    expect(shown("## Head")).toBe("Head");
    expect(shown("- a **bol")).toBe("• a **bol");
  });
});
