import { readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runNode } from "./__fixtures__/run-node.ts";
import { server, useServerDatabase } from "./__fixtures__/stores.ts";

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The README's `ts run` example and the lines it asserts (`// → …`). */
async function readmeExample(): Promise<{ code: string; expected: string[] }> {
  const readme = await readFile(join(PACKAGE, "README.md"), "utf8");
  const code = /```ts run\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  const expected = [...code.matchAll(/\/\/ → (.*)$/gm)].map((match) => (match[1] as string).trim());
  return { code, expected };
}

// CI runs the example on PGlite (tooling/readme-examples); this runs the same code on a server.
describe.skipIf(server === undefined)("the README example", () => {
  const database = useServerDatabase();

  it("runs unchanged on a server with UNFORGET_MEMORY_URL", async () => {
    const { code, expected } = await readmeExample();
    expect(expected.length).toBeGreaterThan(3);
    const file = join(PACKAGE, `.readme-example-${process.pid}.mts`);
    await writeFile(file, code);
    try {
      const output = await runNode(["--import", "tsx", file], {
        cwd: PACKAGE,
        env: { ...process.env, UNFORGET_MEMORY_URL: database().url },
      });
      expect(output.trim().split("\n")).toEqual(expected);
    } finally {
      await rm(file, { force: true });
    }
  });
});
