import { describe, expect, it } from "vitest";
import { shellAnalyzer } from "./shell-analyzer.ts";

// The table (permission-bash.test.ts) holds what each form decides; these check what only the analysis shows: the
// reason names the builtin, and what a builtin expands is not a command a rule must allow.

const analyze = async (command: string) => (await shellAnalyzer())(command, { homeDir: "/home/u" });

describe("builtins that run text", () => {
  it.each([
    ['compgen -C "$c" a', "`compgen -C` runs a command only known when it runs"],
    ['complete -F "$f" ls', "`complete -F` calls a function named only when it runs"],
    ["complete -F _ls ls", "`complete -F _ls` calls the function _ls, which the command does not define"],
    ['compgen -W "$w" a', "`compgen -W` expands words only known when it runs"],
    ['mapfile -C "$cb" -c 1 a', "`mapfile -C` runs a callback only known when it runs"],
    ["fc -s", "`fc` runs commands from the shell's history"],
    ['bind -x "$b"', "`bind -x` binds a key to a command only known when it runs"],
    ["compgen $o a", "an option of `compgen` is only known when it runs"],
    ['printf "$fmt" x', "the first word of printf is only known when it runs, and as `-v NAME`"],
    ["read $v", "`read $v` sets a variable whose name is only known when it runs"],
    ["bash --rcfile r -i -c ls", "runs `r` as its start-up file"],
    ["HOME=. bash -c ls", "it sets HOME and starts a shell"],
  ])("%s: the reason names it", async (command, reason) => {
    const { unresolved } = await analyze(command);
    expect(unresolved.join("\n")).toContain(reason);
  });

  it("walks the words `compgen -W` expands as arguments of `:`, which needs no rule", async () => {
    const { commands, unresolved } = await analyze("compgen -W '$HOME $(ls)' a");
    expect(unresolved).toEqual([]);
    expect(commands.map(({ words, transparent }) => [words[0], transparent])).toEqual([
      ["compgen", false],
      [":", true],
      ["ls", false],
    ]);
  });

  it("reads `-C` text with the words bash appends to it as unknown", async () => {
    const { commands } = await analyze("compgen -C true a");
    expect(commands[1]?.words).toEqual(["true", undefined]);
  });
});
