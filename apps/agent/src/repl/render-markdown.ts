import { stripVTControlCharacters } from "node:util";
import chalk from "chalk";
import Table from "cli-table3";
import { Lexer, type Token, type Tokens } from "marked";
import wrapAnsi from "wrap-ansi";
import { highlightCode } from "./highlight-code.ts";

/**
 * C0 controls but tab and newline, DEL and the C1 controls: a reply must never reach the terminal with an escape
 * sequence of its own (it could move the cursor, retitle the window, or hide text).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is removed.
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;

const ENTITIES: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
};

/** Text as the terminal may show it: control characters removed, HTML entities decoded (marked keeps them). */
function plain(text: string): string {
  return text
    .replace(CONTROL_CHARACTERS, "")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, name: string) => {
      if (name.startsWith("#")) {
        const code =
          name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
        return code > 0x1f && code <= 0x10ffff && !(code >= 0x7f && code <= 0x9f)
          ? String.fromCodePoint(code)
          : entity;
      }
      return ENTITIES[name.toLowerCase()] ?? entity;
    });
}

/** Inline tokens (a paragraph's words, a heading's, a list item's) as styled text. */
function inline(tokens: readonly Token[] | undefined): string {
  let out = "";
  for (const token of tokens ?? []) {
    switch (token.type) {
      case "text":
        out += "tokens" in token && token.tokens ? inline(token.tokens) : plain(token.text);
        break;
      case "escape":
        out += plain(token.text);
        break;
      case "strong":
        out += chalk.bold(inline(token.tokens));
        break;
      case "em":
        out += chalk.italic(inline(token.tokens));
        break;
      case "del":
        out += chalk.strikethrough(inline(token.tokens));
        break;
      case "codespan":
        out += chalk.cyan(plain(token.text));
        break;
      case "br":
        out += "\n";
        break;
      case "link": {
        const text = inline(token.tokens);
        const href = plain(token.href);
        out +=
          stripVTControlCharacters(text) === href || href.startsWith("mailto:")
            ? chalk.blue.underline(text)
            : `${chalk.blue(text)} ${chalk.gray(`(${href})`)}`;
        break;
      }
      case "image":
        out += chalk.gray(`[image: ${plain(token.text) || plain(token.href)}]`);
        break;
      case "checkbox":
        out += (token as Tokens.Checkbox).checked ? "[x] " : "[ ] ";
        break;
      case "html":
        out += chalk.gray(plain(token.text));
        break;
      default:
        out += plain("text" in token && typeof token.text === "string" ? token.text : token.raw);
    }
  }
  return out;
}

/** Wraps styled text to `width` columns; `first` goes before the first line, `rest` before the others. */
function wrap(text: string, width: number, first = "", rest = " ".repeat(first.length)): string[] {
  const lines = wrapAnsi(text, Math.max(10, width - rest.length), { hard: true, trim: false }).split("\n");
  return lines.map((line, index) => (index === 0 ? first : rest) + line.trimEnd());
}

function indent(lines: readonly string[], by: string): string[] {
  return lines.map((line) => (line === "" ? line : by + line));
}

function codeBlock(token: Tokens.Code): string[] {
  const code = plain(token.text).replace(/\t/g, "  ");
  const language = token.lang?.split(/\s/)[0];
  let styled = code;
  if (chalk.level > 0 && language) {
    try {
      styled = highlightCode(code, language) ?? code;
    } catch {
      styled = code;
    }
  }
  // Code is not wrapped (a wrapped line reads as two lines of code); the terminal cuts what is too wide.
  return indent(styled.split("\n"), "  ");
}

function table(token: Tokens.Table, width: number): string[] {
  const rendered = new Table({
    head: token.header.map((cell) => chalk.bold(inline(cell.tokens))),
    colAligns: token.align.map((align) => align ?? "left"),
    style: { head: [], border: ["gray"] },
  });
  for (const row of token.rows) rendered.push(row.map((cell) => inline(cell.tokens)));
  const lines = rendered.toString().split("\n");
  // Wider than the screen, a table's borders wrap into noise: its rows as lines then.
  if (Math.max(...lines.map((line) => stripVTControlCharacters(line).length)) <= width) return lines;
  return [token.header, ...token.rows].flatMap((row) =>
    wrap(row.map((cell) => inline(cell.tokens)).join(chalk.gray(" │ ")), width),
  );
}

function list(token: Tokens.List, width: number): string[] {
  const start = typeof token.start === "number" ? token.start : 1;
  const lines: string[] = [];
  token.items.forEach((item, index) => {
    // A task item's box goes with its marker (a tight item has it as a block of its own).
    const [head, ...tail] = item.tokens;
    const box = head?.type === "checkbox" ? ((head as Tokens.Checkbox).checked ? "[x] " : "[ ] ") : "";
    const marker = `${token.ordered ? `${start + index}.` : "•"} ${box}`;
    const body = blocks(box === "" ? item.tokens : tail, width - marker.length, item.loose);
    // The first line follows the marker, the rest line up under the item's text (a hanging indent).
    body.forEach((line, at) => {
      lines.push(at === 0 ? marker + line : line === "" ? "" : " ".repeat(marker.length) + line);
    });
    if (body.length === 0) lines.push(marker.trimEnd());
    if (item.loose && index < token.items.length - 1) lines.push("");
  });
  return lines;
}

function block(token: Token, width: number): string[] | undefined {
  switch (token.type) {
    case "space":
    case "def":
      return undefined;
    case "heading": {
      const text = inline(token.tokens);
      const style =
        token.depth === 1 ? chalk.bold.underline : token.depth === 2 ? chalk.bold : chalk.bold.dim;
      return wrap(style(text), width);
    }
    case "paragraph":
    case "text":
      return wrap("tokens" in token && token.tokens ? inline(token.tokens) : plain(token.text), width);
    case "list":
      return list(token as Tokens.List, width);
    case "code":
      return codeBlock(token as Tokens.Code);
    case "blockquote":
      return blocks(token.tokens ?? [], width - 2, true).map((line) => chalk.gray(`│ ${line}`));
    case "table":
      return table(token as Tokens.Table, width);
    case "hr":
      return [chalk.gray("─".repeat(Math.min(width, 40)))];
    case "html":
      return wrap(chalk.gray(plain(token.text).trimEnd()), width);
    default:
      return wrap(plain(token.raw).trimEnd(), width);
  }
}

/** Block tokens as lines: a blank line between blocks, none between the parts of a tight list item. */
function blocks(tokens: readonly Token[], width: number, spaced = true): string[] {
  const lines: string[] = [];
  for (const token of tokens) {
    const rendered = block(token, width);
    if (rendered === undefined) continue;
    if (lines.length > 0 && spaced) lines.push("");
    lines.push(...rendered);
  }
  return lines;
}

/**
 * Markdown as terminal text, wrapped to `width` columns: marked parses it (GitHub's flavour) and each block is
 * drawn here — headings bold without their `#`s, inline styles everywhere (list items and table cells too), list
 * items wrapped under their own text, code highlighted (highlight.js) and never wrapped, tables through
 * cli-table3. Colour follows chalk's level, so NO_COLOR (FORCE_COLOR=0 at start-up) gives plain text. Text that is
 * still streaming renders the same way: what is not closed yet (`**bol`) shows as typed until it is.
 */
export function renderMarkdown(markdown: string, width: number): string {
  const columns = Math.max(20, Math.min(width, 200));
  return blocks(Lexer.lex(markdown, { gfm: true }), columns)
    .join("\n")
    .replace(/\n+$/, "");
}
