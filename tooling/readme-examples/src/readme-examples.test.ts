import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Every README code block fenced as ```ts run is executed against the built packages, from the README's
 * own package directory (packages import themselves by name), so a README example cannot rot.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const repoRoot = () => ROOT;
const FENCE = /```ts run\n([\s\S]*?)```/g;

interface Example {
  readme: string;
  directory: string;
  index: number;
  code: string;
}

function collectExamples(): Example[] {
  const root = repoRoot();
  const readmes = [{ readme: join(root, "README.md"), directory: join(root, "packages", "testing") }];
  for (const name of readdirSync(join(root, "packages"))) {
    const readme = join(root, "packages", name, "README.md");
    if (existsSync(readme)) readmes.push({ readme, directory: join(root, "packages", name) });
  }
  return readmes.flatMap(({ readme, directory }) =>
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

  it.each(
    examples.map((example) => [`${example.readme.replace(repoRoot(), "")} #${example.index}`, example]),
  )(
    "%s runs",
    (_name, example) => {
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
      } finally {
        rmSync(file, { force: true });
      }
    },
    90_000,
  );
});
