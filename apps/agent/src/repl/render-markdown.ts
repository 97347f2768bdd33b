import { Marked } from "marked";
import { markedTerminal } from "marked-terminal";

const renderers = new Map<number, Marked>();

/**
 * Markdown as terminal text (ANSI styles, wrapped to `width`), with marked and marked-terminal. Colour follows
 * chalk's level, so NO_COLOR (turned into FORCE_COLOR=0 at start-up) gives plain text.
 */
export function renderMarkdown(markdown: string, width: number): string {
  const columns = Math.max(20, Math.min(width, 200));
  let marked = renderers.get(columns);
  if (!marked) {
    marked = new Marked(markedTerminal({ width: columns, reflowText: true, tab: 2 }) as never);
    renderers.set(columns, marked);
  }
  const rendered = marked.parse(markdown, { async: false }) as string;
  return rendered.replace(/\n+$/, "");
}
