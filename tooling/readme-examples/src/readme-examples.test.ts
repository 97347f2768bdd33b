import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { collectReadmes, expectedOutput, findMissingOutput } from "./expected-output.ts";

/**
 * Every README code block fenced as ```ts run is executed against the built packages, from the README's
 * own package directory (packages import themselves by name), so a README example cannot rot. A
 * `console.log(...) // → <text>` line asserts that the example printed exactly that line, in order.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const FENCE = /```ts run\n([\s\S]*?)```/g;

interface Example {
  readme: string;
  directory: string;
  index: number;
  code: string;
}

function collectExamples(): Example[] {
  return collectReadmes(ROOT).flatMap(({ readme, directory }) =>
    [...readFileSync(readme, "utf8").matchAll(FENCE)].map((match, index) => ({
      readme,
      directory,
      index,
      code: match[1] ?? "",
    })),
  );
}

const examples = collectExamples();

describe("README examples", () => {
  it("there are runnable examples", () => {
    expect(examples.length).toBeGreaterThan(0);
  });

  it("depends on every package an example imports, so that turbo builds it before the examples run", () => {
    const manifest = JSON.parse(
      readFileSync(join(ROOT, "tooling", "readme-examples", "package.json"), "utf8"),
    ) as {
      devDependencies: Record<string, string>;
    };
    const imported = new Set(
      examples.flatMap((example) =>
        [...example.code.matchAll(/from "(@unforget\/[\w-]+)/g)].map((match) => match[1]!),
      ),
    );
    const missing = [...imported].filter((name) => manifest.devDependencies[name] === undefined);
    expect(missing, "add them to tooling/readme-examples/package.json devDependencies").toEqual([]);
  });

  it.each(examples.map((example) => [`${example.readme.replace(ROOT, "")} #${example.index}`, example]))(
    "%s runs and prints what it asserts",
    (_name, example) => {
      const { expected, problems } = expectedOutput(example.code);
      expect(problems).toEqual([]);
      const file = join(example.directory, `.readme-example-${process.pid}-${example.index}.ts`);
      writeFileSync(file, example.code);
      try {
        const result = spawnSync(process.execPath, ["--import", "tsx", file], {
          cwd: example.directory,
          encoding: "utf8",
          timeout: 60_000,
          env: { ...process.env, NODE_NO_WARNINGS: "1" },
        });
        expect(result.stderr + result.stdout).not.toMatch(/Error \[ERR_|Cannot find module/);
        expect(result.status, result.stderr).toBe(0);
        const missing = findMissingOutput(expected, result.stdout);
        if (missing !== undefined) expect.fail(`${example.readme} example #${example.index}: ${missing}`);
      } finally {
        rmSync(file, { force: true });
      }
    },
    90_000,
  );
});
