/** One kind of interactive prompt, recognised at the end of a task's output. */
export interface PromptPattern {
  /** What the notification calls it ("yes/no question", "password", …). */
  label: string;
  /** Matched against the last non-empty line of the output, escape codes removed and trailing blanks trimmed. */
  pattern: RegExp;
  /**
   * Only when the output does not end with a line break. Prompts leave the cursor on their own line; a
   * finished log line does not. Broad patterns (a trailing "$", ">", ":" or "?") apply only then.
   */
  openLineOnly?: boolean;
  /** Match the whole visible tail instead of the last line (a menu prints its choices below the question). */
  wholeTail?: boolean;
}

/**
 * Prompts of common tools, from the most specific to the most generic. The first match names the prompt.
 * Each line lists a real prompt it is there for.
 */
export const INTERACTIVE_PROMPT_PATTERNS: readonly PromptPattern[] = [
  // ssh: "Are you sure you want to continue connecting (yes/no/[fingerprint])?"
  { label: "ssh host key", pattern: /continue connecting \(yes\/no/i },
  // ssh / ssh-keygen / gpg: "Enter passphrase for key '/home/a/.ssh/id_ed25519':"
  { label: "passphrase", pattern: /\bpassphrase\b.*:$/i },
  // sudo "[sudo] password for alice:", git "Password for 'https://a@github.com':", mysql "Enter password:"
  { label: "password", pattern: /\bpassword\b.{0,120}:$/i },
  // git credential helper: "Username for 'https://github.com':"
  { label: "username", pattern: /^username for .+:$/i },
  // apt "Do you want to continue? [Y/n]", docker "[y/N]", dnf "Is this ok [y/N]:", pip "Proceed (Y/n)?",
  // conda "Proceed ([y]/n)?", pnpm "Proceed? (Y/n)", generic "(yes/no)"
  { label: "yes/no question", pattern: /[[(]\s*\[?y(?:es)?\]?\s*\/\s*\[?n(?:o)?\]?\s*[\])]\s*[?:]?$/i },
  // unzip "replace a.txt? [y]es, [n]o, [A]ll, [N]one, [r]ename:"
  { label: "yes/no question", pattern: /\[y\]es, \[n\]o/i },
  // a bare "y/n" or "Yes/No" at the end of the line
  { label: "yes/no question", pattern: /\b[Yy](?:es)?\/[Nn](?:o)?\??$/ },
  // npx "Need to install the following packages: … Ok to proceed? (y)"; npm init "Is this OK? (yes)"
  { label: "confirmation", pattern: /\?\s*\((?:y|yes|n|no)\)$/i },
  // "Continue?", "Proceed?", "Are you sure?"
  { label: "confirmation", pattern: /\b(?:continue|proceed|are you sure)\??\s*\?$/i },
  // cp -i / mv -i "cp: overwrite 'b'?", "File exists. Overwrite?"
  { label: "overwrite question", pattern: /\boverwrite\b.*\?(?:\s*[[(][^\])]*[\])])?$/i },
  // rm -i "rm: remove regular file 'a'?"
  { label: "confirmation", pattern: /^rm: (?:remove|descend into)\b.*\?$/ },
  // dpkg conffile "*** sources.list (Y/I/N/O/D/Z) [default=N] ?"
  { label: "confirmation", pattern: /\[default=[^\]]+\]\s*\?$/i },
  // terraform "Only 'yes' will be accepted to approve.\n\n  Enter a value:"; "Type 'yes' to continue"
  { label: "confirmation", pattern: /\benter a value:$|\btype\s+['"]?yes['"]?\s+to\b/i },
  // "Press any key to continue", "Press Enter to continue", "Press RETURN"
  { label: "press a key", pattern: /\bpress\s+(?:any\s+key|enter|return)\b/i },
  // inquirer / prompts menus (npm create vite, pnpm create, gh): "? Select a framework: › - Use arrow-keys."
  {
    label: "menu selection",
    pattern: /use arrow[- ]keys|return to submit|\(press <space> to select/i,
    wholeTail: true,
  },
  // inquirer / prompts questions: "? Project name: › vite-project", "? What is your name?"
  { label: "question", pattern: /^[?❯]\s+.+(?:[?:›]|›.*)$/ },
  // yarn classic "question name (app):"; npm init "package name: (app)", "version: (1.0.0)"
  { label: "question", pattern: /^question .+:$|^[a-z][a-z ]{1,40}: \([^)]*\)$/i },
  // more(1) and less(1) when a pager got the output
  { label: "pager", pattern: /--More--|^\(END\)$|^:$/ },
  // shells and REPLs: "$", "#", "%", ">", ">>>", "mysql>", "(gdb)"
  {
    label: "shell or REPL prompt",
    pattern: /(?:^|[\s\w~)\]/])[$#]$|(?:^|\s)%$|>$|\(\w+\)$/,
    openLineOnly: true,
  },
  // anything else that waits on its own line for an answer: "Name:", "Which one?"
  { label: "question", pattern: /[?:]$/, openLineOnly: true },
];

// CSI sequences (colours, cursor moves), OSC sequences (titles, links) and the remaining two-byte escapes.
const ESCAPES = new RegExp(
  [
    "\\u001b\\[[0-?]*[ -/]*[@-~]",
    "\\u001b\\][^\\u0007\\u001b]*(?:\\u0007|\\u001b\\\\)",
    "\\u001b[@-_]",
    "[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]",
  ].join("|"),
  "g",
);

/** The text a terminal would show for the end of an output: escapes dropped, each line's last redraw kept. */
export function visibleText(output: string): string {
  return output
    .replace(ESCAPES, "")
    .split("\n")
    .map((line) => {
      const redraw = line.replace(/\r+$/, "");
      return redraw.slice(redraw.lastIndexOf("\r") + 1);
    })
    .join("\n");
}

/**
 * Names the interactive prompt the output ends with, or undefined when it does not look like one. Called
 * only after the output has been quiet for a while, so a match means a process is probably waiting for input.
 */
export function matchInteractivePrompt(
  tail: string,
  patterns: readonly PromptPattern[] = INTERACTIVE_PROMPT_PATTERNS,
): string | undefined {
  const text = visibleText(tail);
  const openLine = !/\n[ \t]*$/.test(text);
  const lines = text.split("\n");
  let last = "";
  for (let index = lines.length - 1; index >= 0 && last === ""; index--) last = lines[index]!.trim();
  if (last === "") return undefined;
  for (const { label, pattern, openLineOnly, wholeTail } of patterns) {
    if (openLineOnly && !openLine) continue;
    if (pattern.test(wholeTail ? text : last)) return label;
  }
  return undefined;
}
