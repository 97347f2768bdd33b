import { describe, expect, it } from "vitest";
import {
  type CommandMatch,
  commandMatches,
  readCommandPattern,
  suggestCommandRule,
} from "./permission-command.ts";
import type { PermissionBehavior } from "./permission-rule.ts";

const words = (text: string) => text.split(" ").map((word) => (word === "?" ? undefined : word));

describe("commandMatches", () => {
  it.each<[string, string, boolean]>([
    ["npm test:*", "npm test", true],
    ["npm test:*", "npm test --watch", true],
    ["npm test:*", "npm tests", false],
    ["npm test:*", "npm", false],
    ["git status", "git status", true],
    ["git status", "git status -s", false],
    ["git * main", "git push origin main", true],
    ["git * main", "git push origin main --force", false],
    ["ls *", "ls", true],
    ["ls *", "ls -la", true],
    ["ls *", "lsof", false],
    ["* --version", "node --version", true],
    ["echo \\*", "echo *", true],
    ["echo \\*", "echo hi", false],
    ["curl http://example.com/:*", "curl http://example.com/api", false],
    ["curl http://example.com/:*", "curl http://example.com/ -o x", true],
  ])("%s against %j → %s", (specifier, command, expected) => {
    expect(
      commandMatches(readCommandPattern(specifier), { words: words(command), more: false }, "allow"),
    ).toBe(expected ? "yes" : "no");
  });

  it.each<[string, string, PermissionBehavior, CommandMatch]>([
    // A path is reduced to its program for deny and ask rules; an allow rule names the program as written.
    ["rm:*", "/bin/rm x", "deny", "yes"],
    ["rm:*", "./rm x", "ask", "yes"],
    ["rm:*", "/bin/rm x", "allow", "no"],
    ["ls:*", "./ls", "allow", "no"],
    ["./gradlew build", "./gradlew build", "allow", "yes"],
    ["/usr/bin/rm:*", "rm x", "deny", "yes"],
    // A word known only at run time may be anything, or nothing, or several words.
    ["git push:*", "git ? origin", "deny", "maybe"],
    ["git push:*", "git ? origin", "allow", "maybe"],
    ["git push:*", "git status ?", "deny", "no"],
    ["git status", "git status ?", "allow", "maybe"],
    ["git status", "git status -s ?", "allow", "no"],
    ["git * main", "git ? main", "deny", "maybe"],
    ["git * main", "ls ?", "deny", "no"],
    // An argument naming a denied program may be run by a program the gate does not know as a wrapper.
    ["rm:*", "nsenter -t 1 rm x", "deny", "maybe"],
    ["rm:*", "nsenter -t 1 /bin/rm x", "ask", "maybe"],
    ["rm:*", "echo rm", "deny", "no"],
    ["rm:*", "nsenter -t 1 rm x", "allow", "no"],
  ])("%s against %j (%s) → %s", (specifier, command, behavior, expected) => {
    expect(
      commandMatches(readCommandPattern(specifier), { words: words(command), more: false }, behavior),
    ).toBe(expected);
  });

  it("more words to come (xargs) make an exact rule unsure and leave a prefix rule sure", () => {
    const command = { words: ["git", "add"], more: true };
    expect(commandMatches(readCommandPattern("git add:*"), command, "allow")).toBe("yes");
    expect(commandMatches(readCommandPattern("git add"), command, "allow")).toBe("maybe");
    expect(commandMatches(readCommandPattern("git add -A:*"), command, "deny")).toBe("maybe");
  });

  it("reads a rule's words with the reader it is given", () => {
    const pattern = readCommandPattern('git commit -m "a b":*', () => ["git", "commit", "-m", "a b"]);
    expect(
      commandMatches(pattern, { words: ["git", "commit", "-m", "a b", "-q"], more: false }, "allow"),
    ).toBe("yes");
  });
});

describe("suggestCommandRule", () => {
  it.each<[string, string | undefined]>([
    ["npm test -- --watch", "Bash(npm test:*)"],
    ["ls -la", "Bash(ls:*)"],
    ["cat ./file.txt", "Bash(cat:*)"],
    ["git commit -m x", "Bash(git commit:*)"],
    ["? x", undefined],
  ])("%s → %s", (command, rule) => {
    expect(suggestCommandRule(words(command))).toBe(rule);
  });
});
