import chalk from "chalk";
import hljs from "highlight.js/lib/common";

type Style = (text: string) => string;

/**
 * The colours of highlight.js's scopes on a terminal (the first class of a span, `hljs-title function_` is
 * `title`); a scope not named here takes the colour of the one around it. Close to cli-highlight's default theme,
 * which the REPL used before.
 */
const THEME: Readonly<Record<string, Style>> = {
  keyword: chalk.blue,
  built_in: chalk.cyan,
  type: chalk.cyan,
  literal: chalk.blue,
  number: chalk.green,
  regexp: chalk.red,
  string: chalk.red,
  class: chalk.blue,
  title: chalk.yellow,
  comment: chalk.green,
  doctag: chalk.green,
  meta: chalk.gray,
  tag: chalk.gray,
  name: chalk.blue,
  attr: chalk.cyan,
  emphasis: chalk.italic,
  strong: chalk.bold,
  link: chalk.underline,
  addition: chalk.green,
  deletion: chalk.red,
};

/** What highlight.js escapes in the text of its HTML. */
const ENTITIES: Readonly<Record<string, string>> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&#x27;": "'",
};

/**
 * `code` coloured for a terminal as `language` (a name or an alias highlight.js's common languages know), or
 * undefined when it knows no such language. highlight.js writes HTML spans; they become chalk styles here.
 */
export function highlightCode(code: string, language: string): string | undefined {
  if (hljs.getLanguage(language) === undefined) return undefined;
  const html = hljs.highlight(code, { language, ignoreIllegals: true }).value;
  const styles: (Style | undefined)[] = [];
  let out = "";
  for (const [, scopes, text] of html.matchAll(/<span class="([^"]*)">|<\/span>|([^<]+)/g)) {
    if (scopes !== undefined) {
      const scope = scopes.split(" ")[0]?.replace(/^hljs-/, "") ?? "";
      styles.push(THEME[scope] ?? styles.at(-1));
    } else if (text !== undefined) {
      const decoded = text.replace(/&(?:amp|lt|gt|quot|#x27);/g, (entity) => ENTITIES[entity] ?? entity);
      const style = styles.at(-1);
      out += style === undefined ? decoded : style(decoded);
    } else {
      styles.pop();
    }
  }
  return out;
}
