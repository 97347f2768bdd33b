import { describe, expect, it } from "vitest";
import { collectReadmes, expectedOutput, findMissingOutput } from "./expected-output.ts";

describe("expectedOutput", () => {
  it("takes the text after `// → ` on console.log lines, in order, with their line numbers", () => {
    const code = [
      'import { x } from "y";',
      "console.log(1 + 1); // → 2",
      "console.log('a', [1]) // → a [ 1 ]",
      "console.log(x); // a plain comment asserts nothing",
      '  console.log("→", x); // → → arrows inside the text are kept  ',
    ].join("\n");
    expect(expectedOutput(code)).toEqual({
      expected: [
        { line: 2, text: "2" },
        { line: 3, text: "a [ 1 ]" },
        { line: 5, text: "→ arrows inside the text are kept" },
      ],
      problems: [],
    });
  });

  it("reports an arrow comment on a line that is not a one-line console.log", () => {
    const code = ["const a = 1; // → 1", "console.log(", "  a,", "); // → 1"].join("\n");
    const { expected, problems } = expectedOutput(code);
    expect(expected).toEqual([]);
    expect(problems).toEqual([
      expect.stringMatching(/^line 1: /),
      expect.stringMatching(/^line 4: .*one-line console\.log/),
    ]);
  });

  it("skips an arrow inside the call's own text", () => {
    expect(expectedOutput('console.log("a // → b"); // → a // → b').expected).toEqual([
      { line: 1, text: "a // → b" },
    ]);
  });

  it("asserts nothing in a block without arrows", () => {
    expect(expectedOutput('console.log("ok");\n')).toEqual({ expected: [], problems: [] });
  });
});

describe("findMissingOutput", () => {
  const expected = [
    { line: 3, text: "11" },
    { line: 9, text: "42064 [] 124936" },
  ];

  it("accepts the expected lines in order, with other lines between them", () => {
    expect(findMissingOutput(expected, "11\nnoise\n42064 [] 124936  \n{\n}\n")).toBeUndefined();
  });

  it("names the first expected line that was not printed, and what was", () => {
    const message = findMissingOutput(expected, "11\n42064 [] 119936\n");
    expect(message).toMatch(/line 9 .*"42064 \[\] 124936"/);
    expect(message).toContain("42064 [] 119936");
  });

  it("requires the order of the example", () => {
    expect(findMissingOutput(expected, "42064 [] 124936\n11\n")).toMatch(/line 9/);
  });

  it("requires whole lines", () => {
    expect(findMissingOutput([{ line: 1, text: "1" }], "11\n")).toMatch(/line 1/);
  });
});

describe("collectReadmes", () => {
  it("finds the root README, every package README (providers in their folder) and every app README", () => {
    const present = [
      "/repo/README.md",
      "/repo/packages",
      "/repo/packages/a/README.md",
      "/repo/packages/providers",
      "/repo/packages/providers/x/README.md",
      "/repo/apps",
      "/repo/apps/cli/README.md",
    ];
    const folders: Record<string, string[]> = {
      "/repo/packages": ["a", "b", "providers"],
      "/repo/packages/providers": ["x"],
      "/repo/apps": ["cli"],
    };
    const readmes = collectReadmes("/repo", {
      exists: (path) => present.includes(path),
      list: (path) => folders[path] ?? [],
    });
    expect(readmes).toEqual([
      { readme: "/repo/README.md", directory: "/repo/tooling/readme-examples" },
      { readme: "/repo/packages/a/README.md", directory: "/repo/packages/a" },
      { readme: "/repo/packages/providers/x/README.md", directory: "/repo/packages/providers/x" },
      { readme: "/repo/apps/cli/README.md", directory: "/repo/apps/cli" },
    ]);
    expect(
      collectReadmes("/repo", { exists: (path) => path === "/repo/README.md", list: () => [] }),
    ).toHaveLength(1);
  });
});
