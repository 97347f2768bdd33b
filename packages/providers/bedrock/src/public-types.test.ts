import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const distDirectory = join(dirname(fileURLToPath(import.meta.url)), "..", "dist");

/** Every declaration file reachable from the public entry point, following relative imports and re-exports. */
function reachableDeclarations(entry: string): Map<string, string> {
  const files = new Map<string, string>();
  const visit = (path: string) => {
    if (files.has(path)) return;
    const text = readFileSync(path, "utf8");
    files.set(path, text);
    for (const match of text.matchAll(/from "(\.{1,2}\/[^"]+)"/g)) {
      const specifier = (match[1] ?? "").replace(/\.(?:ts|js)$/, ".d.ts");
      visit(join(dirname(path), specifier));
    }
  };
  visit(entry);
  return files;
}

describe("published declarations", () => {
  it("no AWS SDK or Smithy type is reachable from the package's public types", () => {
    const entry = join(distDirectory, "index.d.ts");
    expect(existsSync(entry), "build the package first (tsc -p tsconfig.build.json)").toBe(true);
    const files = reachableDeclarations(entry);
    expect(files.size).toBeGreaterThan(1);
    for (const [path, text] of files) {
      expect(text, path).not.toMatch(/from "@(?:aws-sdk|smithy)\//);
      expect(text, path).not.toMatch(/import\("@(?:aws-sdk|smithy)\//);
    }
  });
});
