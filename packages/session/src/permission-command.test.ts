import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { commandMatches, splitCommand, suggestCommandRule } from "./permission-command.ts";

describe("splitCommand", () => {
  it.each([
    ["npm test", ["npm test"], false],
    ["npm test && rm -rf /", ["npm test", "rm -rf /"], false],
    ["a || b; c | d & e", ["a", "b", "c", "d", "e"], false],
    ["a\nb", ["a", "b"], false],
    ['echo "a && b" && c', ['echo "a && b"', "c"], false],
    ["echo 'x; y' ; z", ["echo 'x; y'", "z"], false],
    ["echo a\\;b", ["echo a\\;b"], false],
    ["make 2>&1 | tee log", ["make 2>&1", "tee log"], false],
    ["cmd &> out.txt", ["cmd &> out.txt"], false],
    ["echo $(rm -rf / && true)", ["echo $(rm -rf / && true)"], true],
    ["echo `whoami`", ["echo `whoami`"], true],
    ['echo "$(id)"', ['echo "$(id)"'], true],
    ["echo '$(id)'", ["echo '$(id)'"], false],
    ["diff <(ls a) <(ls b)", ["diff <(ls a) <(ls b)"], true],
    ["  ", [], false],
  ])("%j", (command, parts, substitutes) => {
    expect(splitCommand(command)).toEqual({ parts, substitutes });
  });

  it("never leaves an unquoted control operator inside a part", () => {
    const word = fc.stringMatching(/^[a-z0-9./-]{1,8}$/);
    const operator = fc.constantFrom(" && ", " || ", "; ", " | ", " & ", "\n");
    fc.assert(
      fc.property(
        fc.array(fc.array(word, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 6 }),
        operator,
        (commands, op) => {
          const texts = commands.map((words) => words.join(" "));
          expect(splitCommand(texts.join(op)).parts).toEqual(texts);
        },
      ),
    );
  });
});

describe("commandMatches", () => {
  it.each([
    ["npm test:*", "npm test", true],
    ["npm test:*", "npm test --watch", true],
    ["npm test:*", "npm tests", false],
    ["npm test:*", "npm", false],
    ["git status", "git status", true],
    ["git status", " git status ", true],
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
    expect(commandMatches(specifier, command)).toBe(expected);
  });
});

describe("suggestCommandRule", () => {
  it.each([
    ["npm test -- --watch", "Bash(npm test:*)"],
    ["ls -la", "Bash(ls:*)"],
    ["cat ./file.txt", "Bash(cat:*)"],
    ["git commit -m x", "Bash(git commit:*)"],
  ])("%s → %s", (command, rule) => {
    expect(suggestCommandRule(command)).toBe(rule);
  });
});
