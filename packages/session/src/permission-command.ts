/** A shell command cut where the shell runs one command after another: `&&`, `||`, `;`, `|`, `&`, newlines. */
export interface CommandParts {
  /** Each simple command's text, trimmed, as written (quotes kept). */
  readonly parts: string[];
  /**
   * True when the command runs text no rule can see before it runs: `$(…)`, backquotes, `<(…)` / `>(…)`.
   * An allow rule never approves such a command; deny and ask rules still apply to its parts.
   */
  readonly substitutes: boolean;
}

/**
 * Splits a command at its control operators, outside quotes and substitutions. Claude Code checks compound
 * commands part by part so that `Bash(safe:*)` never approves `safe && rm -rf ~`; this does the same.
 */
export function splitCommand(command: string): CommandParts {
  const parts: string[] = [];
  let current = "";
  let quote: "'" | '"' | undefined;
  let depth = 0;
  let substitutes = false;
  const cut = () => {
    if (current.trim() !== "") parts.push(current.trim());
    current = "";
  };
  for (let index = 0; index < command.length; index++) {
    const char = command[index]!;
    const next = command[index + 1];
    if (char === "\\" && quote !== "'") {
      current += char + (next ?? "");
      index++;
      continue;
    }
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else if (quote === '"' && (char === "`" || (char === "$" && next === "("))) substitutes = true;
      current += char;
      continue;
    }
    if (char === "'" || char === '"') quote = char;
    else if (char === "`") substitutes = true;
    else if ((char === "$" || char === "<" || char === ">") && next === "(") {
      substitutes = true;
      depth++;
      current += char + next;
      index++;
      continue;
    } else if (char === "(" && depth > 0) depth++;
    else if (char === ")" && depth > 0) depth--;
    else if (depth === 0 && (char === ";" || char === "\n" || char === "|" || char === "&")) {
      // `>&`, `&>` and `2>&1` are redirections, not operators.
      const redirect = char === "&" && (current.endsWith(">") || current.endsWith("<") || next === ">");
      if (!redirect) {
        if ((char === "&" || char === "|") && next === char) index++;
        cut();
        continue;
      }
    }
    current += char;
  }
  cut();
  return { parts, substitutes };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Whether one simple command matches a Bash rule's specifier, as Claude Code reads it:
 * - `npm test:*`: the command is `npm test` or starts with `npm test ` (a word boundary; `npm tests` does not);
 * - `*` anywhere matches any text, spaces included (`git * main`); a single trailing ` *` may match nothing, so
 *   `ls *` matches `ls` too; `\*` is a literal star;
 * - anything else: the whole command, exactly (surrounding spaces ignored).
 */
export function commandMatches(specifier: string, command: string): boolean {
  const text = command.trim();
  if (specifier.endsWith(":*")) {
    const prefix = specifier.slice(0, -2).trim();
    return text === prefix || text.startsWith(`${prefix} `);
  }
  const pieces = specifier.split(/(?<!\\)\*/).map((piece) => escapeRegExp(piece.replace(/\\\*/g, "*")));
  if (pieces.length === 1) return text === specifier.replace(/\\\*/g, "*").trim();
  let source = pieces.join(".*");
  if (pieces.length === 2 && specifier.endsWith(" *")) source = `${pieces[0]!.slice(0, -1)}(?: .*)?`;
  return new RegExp(`^${source}$`, "s").test(text);
}

/**
 * A prefix rule to offer the user for a command they approve ("always allow `npm test:*`"): the command's
 * first word, and its second when it is a subcommand rather than a flag or a path.
 */
export function suggestCommandRule(command: string): string {
  const words = command.trim().split(/\s+/);
  const second = words[1];
  const subcommand = second !== undefined && /^[A-Za-z][\w-]*$/.test(second) ? ` ${second}` : "";
  return `Bash(${words[0]}${subcommand}:*)`;
}
