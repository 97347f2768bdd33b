import type { PermissionBehavior } from "./permission-rule.ts";
import type { ShellCommand } from "./shell/shell-analyzer.ts";
import { programName } from "./shell/shell-words.ts";
import { knowsWhatItRuns } from "./shell/wrapper-table.ts";

/** `yes` and `no` are known before the command runs; `maybe` is not (a word only known then). */
export type CommandMatch = "yes" | "no" | "maybe";

/** A Bash rule's specifier, read once: the words of a prefix or exact rule, or a wildcard pattern. */
export type CommandPattern =
  | { kind: "prefix" | "exact"; words: string[] }
  | { kind: "wildcard"; regex: RegExp; literal: string; program: string | undefined };

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Reads a Bash rule's specifier as Claude Code does:
 * - `npm test:*`: the command is `npm test` or starts with the words `npm test` (`npm tests` does not);
 * - `*` anywhere matches any text, spaces included (`git * main`); a single trailing ` *` may match nothing, so
 *   `ls *` matches `ls` too; `\*` is a literal star;
 * - anything else: the whole command, exactly.
 * `words` reads the rule's text into words the way the command is read (quotes removed), when given.
 */
export function readCommandPattern(specifier: string, words?: (text: string) => string[]): CommandPattern {
  const split =
    words ??
    ((text: string) =>
      text
        .trim()
        .split(/\s+/)
        .filter((word) => word !== ""));
  if (specifier.endsWith(":*")) return { kind: "prefix", words: split(specifier.slice(0, -2)) };
  const pieces = specifier.split(/(?<!\\)\*/);
  if (pieces.length === 1) return { kind: "exact", words: split(specifier.replace(/\\\*/g, "*")) };
  const escaped = pieces.map((piece) => escapeRegExp(piece.replace(/\\\*/g, "*")));
  let source = escaped.join(".*");
  if (pieces.length === 2 && specifier.endsWith(" *")) source = `${escaped[0]!.slice(0, -1)}(?: .*)?`;
  const literal = pieces[0]!.replace(/\\\*/g, "*").trimStart();
  const first = specifier.trim().split(/\s+/)[0] ?? "";
  return {
    kind: "wildcard",
    regex: new RegExp(`^${source}$`, "s"),
    literal,
    program: first.includes("*") ? undefined : first,
  };
}

/**
 * Whether a rule's program names the command's: an allow rule names a program as it is written (`Bash(ls:*)`
 * does not allow `./ls` or `/tmp/ls`); a deny or ask rule names it wherever it is (`Bash(rm:*)` refuses `/bin/rm`).
 */
function namesProgram(rule: string, word: string, behavior: PermissionBehavior): boolean {
  if (word === rule) return true;
  if (behavior === "allow") return false;
  return programName(word) === programName(rule);
}

/**
 * Whether one command matches a Bash rule, on the words bash will pass (quotes and escapes removed). A word only
 * known when the command runs makes the answer `maybe` wherever it could change it. Deny and ask rules also answer
 * `maybe` (never `yes`) where a command may do what they name in a way the words do not line up with:
 * - it is given the rule's program as an argument, and is not a program whose effect the gate knows (a wrapper it
 *   reads, a builtin that runs nothing): `nsenter -t 1 rm x` may run `rm`;
 * - it is the rule's program and has the rule's words in order, with options between: `git -C . push` pushes.
 */
export function commandMatches(
  pattern: CommandPattern,
  command: Pick<ShellCommand, "words" | "more">,
  behavior: PermissionBehavior,
): CommandMatch {
  const direct = matchWords(pattern, command, behavior);
  if (direct !== "no" || behavior === "allow") return direct;
  const program = pattern.kind === "wildcard" ? pattern.program : pattern.words[0];
  const name = command.words[0];
  if (program === undefined || name === undefined) return "no";
  const args = command.words.slice(1);
  if (
    !knowsWhatItRuns(programName(name)) &&
    // A word ending in a slash names a folder, which no program can run (`perl -ne 'print if /rm/'`).
    args.some((word) => word !== undefined && !word.endsWith("/") && programName(word) === program)
  )
    return "maybe";
  if (pattern.kind !== "wildcard" && pattern.words.length > 1 && namesProgram(program, name, behavior)) {
    let next = 1;
    for (const word of args) if (word === pattern.words[next]) next++;
    if (next >= pattern.words.length) return "maybe";
  }
  return "no";
}

function matchWords(
  pattern: CommandPattern,
  { words, more }: Pick<ShellCommand, "words" | "more">,
  behavior: PermissionBehavior,
): CommandMatch {
  const name = words[0];
  if (name === undefined) return "maybe";
  if (pattern.kind === "wildcard") {
    const forms = behavior === "allow" ? [name] : [...new Set([name, programName(name)])];
    const unknown = words.indexOf(undefined);
    if (unknown === -1 && !more)
      return forms.some((form) => pattern.regex.test([form, ...words.slice(1)].join(" "))) ? "yes" : "no";
    // Some words are only known at run time: whether the text before them agrees with the rule's text.
    const known = words.slice(0, unknown === -1 ? undefined : unknown) as string[];
    return forms.some((form) => {
      const text = [form, ...known.slice(1)].join(" ");
      return text.startsWith(pattern.literal) || pattern.literal.startsWith(text);
    })
      ? "maybe"
      : "no";
  }
  const rule = pattern.words;
  if (rule.length === 0 || !namesProgram(rule[0]!, name, behavior)) return "no";
  for (let index = 1; index < rule.length; index++) {
    if (index >= words.length) return more ? "maybe" : "no";
    const word = words[index];
    // An unquoted expansion may stand for no word or several: the rest cannot be lined up.
    if (word === undefined) return "maybe";
    if (word !== rule[index]) return "no";
  }
  if (pattern.kind === "prefix") return "yes";
  const rest = words.slice(rule.length);
  if (rest.some((word) => word !== undefined)) return "no";
  return rest.length === 0 && !more ? "yes" : "maybe";
}

/**
 * A prefix rule to offer the user for a command they approve ("always allow `npm test:*`"): the command's
 * first word, and its second when it is a subcommand rather than a flag or a path.
 */
export function suggestCommandRule(words: readonly (string | undefined)[]): string | undefined {
  const [first, second] = words;
  if (first === undefined || /[\s()]/.test(first)) return undefined;
  const subcommand = second !== undefined && /^[A-Za-z][\w-]*$/.test(second) ? ` ${second}` : "";
  return `Bash(${first}${subcommand}:*)`;
}
