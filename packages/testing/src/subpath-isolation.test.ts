import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// Reads the emitted JavaScript (run after the build), where type-only imports are gone: what a subpath's
// closure holds is exactly what importing it loads.
const DIST = resolve(dirname(fileURLToPath(import.meta.url)), "..", "dist");
const manifest = JSON.parse(readFileSync(join(DIST, "..", "package.json"), "utf8")) as {
  exports: Record<string, { default: string }>;
};

const IMPORT = /^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)";?/gm;
const BARE_IMPORT = /^\s*import\s+"([^"]+)";?/gm;

/** Every file and package an emitted module loads, transitively (packages by name, files relative to dist). */
function closure(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const pending = [resolve(DIST, "..", entry)];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    const name = relative(DIST, file).split("\\").join("/");
    if (files.has(name)) continue;
    files.add(name);
    const text = readFileSync(file, "utf8");
    for (const match of [...text.matchAll(IMPORT), ...text.matchAll(BARE_IMPORT)]) {
      const specifier = match[1] as string;
      if (specifier.startsWith(".")) pending.push(resolve(dirname(file), specifier));
      else packages.add(specifier);
    }
  }
  return { files, packages };
}

describe("subpath exports load only their own kit", () => {
  it("has no root entry that loads everything", () => {
    expect(Object.keys(manifest.exports).sort()).toEqual([
      "./arbitraries",
      "./contract",
      "./corpus",
      "./fakes",
      "./guard",
      "./postgres",
    ]);
  });

  it("the contract suite loads no fake, no TLS material and no SDK codec", () => {
    const { files, packages } = closure(manifest.exports["./contract"]?.default ?? "");
    expect([...files].filter((file) => file.startsWith("fakes/"))).toEqual([]);
    expect([...packages].filter((name) => name.startsWith("@smithy/"))).toEqual([]);
    expect(packages).toContain("vitest");
  });

  it("the generators load fast-check only", () => {
    const { files, packages } = closure(manifest.exports["./arbitraries"]?.default ?? "");
    expect([...files]).toEqual(["arbitraries.js"]);
    expect([...packages].sort()).toEqual(["fast-check"]);
  });

  it("the PostgreSQL helpers load node's own modules only", () => {
    const { files, packages } = closure(manifest.exports["./postgres"]?.default ?? "");
    expect([...files].every((file) => file.startsWith("postgres/"))).toBe(true);
    expect([...packages].every((name) => name.startsWith("node:"))).toBe(true);
  });

  it("the hang guard loads node's own modules and core only", () => {
    const { files, packages } = closure(manifest.exports["./guard"]?.default ?? "");
    expect([...files]).toEqual(["guard.js"]);
    expect([...packages].filter((name) => !name.startsWith("node:"))).toEqual(["@unforget/core"]);
  });

  it("the fakes, the corpus loaders and the hang guard load neither vitest nor fast-check", () => {
    for (const subpath of ["./fakes", "./corpus", "./guard", "./postgres"]) {
      const { packages } = closure(manifest.exports[subpath]?.default ?? "");
      expect(packages.has("vitest"), subpath).toBe(false);
      expect(packages.has("fast-check"), subpath).toBe(false);
    }
  });
});
