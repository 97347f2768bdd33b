import type { Command, SyntaxNode, WordPart } from "unbash";

// Words as bash passes them: the value of a word's part, the text a command reads on its input, the program a
// name runs, and commands written back out for messages.

/** The value of one part of a word, or undefined for an expansion, a glob or a brace expansion. */
export function partValue(part: WordPart): string | undefined {
  switch (part.type) {
    case "Literal":
    case "SingleQuoted":
    case "AnsiCQuoted":
      return part.value;
    case "DoubleQuoted": {
      let value = "";
      for (const child of part.parts) {
        if (child.type !== "Literal") return undefined;
        value += child.value;
      }
      return value;
    }
    default:
      // Expansions and substitutions, globs (which depend on the disk), brace expansions (which make several
      // words), `$"…"` (a translation, whose text could change).
      return undefined;
  }
}

/**
 * The text a command reads on its input when it is written in the command: a here-string or a here-document
 * without expansions. `null` when there is none, undefined when there is one but its text is only known at run time.
 */
export function stdinOf(node: Command): string | undefined | null {
  let stdin: string | undefined | null = null;
  for (const redirect of node.redirects) {
    if (redirect.type === "HereDoc") {
      const { body, delimiter } = redirect;
      let text: string | undefined = body.text;
      // Unquoted, a here-document is expanded: text without expansions has only its escapes removed.
      if (delimiter?.quoted !== true)
        text =
          body.parts === undefined
            ? body.text.replace(/\\\n/g, "").replace(/\\([$`\\])/g, "$1")
            : body.parts.every((part) => part.type === "Literal")
              ? body.parts.map((part) => (part.type === "Literal" ? part.value : "")).join("")
              : undefined;
      stdin = text !== undefined && redirect.operator === "<<-" ? text.replace(/^\t+/gm, "") : text;
    } else if (redirect.type === "HereString") {
      const word = redirect.target;
      const value = word === undefined ? undefined : word.parts === undefined ? word.value : undefined;
      stdin = value ?? (word?.parts?.every((part) => partValue(part) !== undefined) ? word.value : undefined);
    } else if (redirect.operator === "<" || redirect.operator === "<&" || redirect.operator === "<>")
      stdin = undefined;
  }
  return stdin;
}

/**
 * Arithmetic (`$((…))`, `((…))`) with no `$` or backquote inside: numbers, names and operators only, so its parsed
 * expression holds no substitution, expansion or quoted `$(` for a walk to find, and need not be parsed or walked.
 */
export function plainArithmetic(node: SyntaxNode): boolean {
  if (node.type === "ArithmeticExpansion")
    return node.text.indexOf("$", 1) === -1 && !node.text.includes("`");
  if (node.type === "ArithmeticCommand") return !node.body.includes("$") && !node.body.includes("`");
  return false;
}

/** The program a command name runs: the name itself, or the last part of a path. */
export function programName(name: string): string {
  if (!name.includes("/")) return name;
  const trimmed = name.replace(/\/+$/, "");
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}

/** A command a wrapper runs, written out from its words (`…` for a word only known at run time). */
export function spelled(words: readonly (string | undefined)[], more: boolean): string {
  return [
    ...words.map((word) => (word === undefined ? "…" : /[\s'"]/.test(word) ? JSON.stringify(word) : word)),
    ...(more ? ["…"] : []),
  ].join(" ");
}

/** A command's text for a message: one line, at most 80 characters. */
export function clip(text: string): string {
  const line = text.replace(/\s*\n\s*/g, " ⏎ ");
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
