// Bundles the CLI into dist/bundle/ (one file per entry plus shared chunks): start-up then reads a few files
// instead of resolving and loading hundreds of modules (BENCHMARKS.md, "unforget -p start-up").
import { rmSync } from "node:fs";
import { build } from "esbuild";

// Chunks are named by their content: a rebuild must not leave the previous build's beside them (the package ships dist/).
rmSync("dist/bundle", { recursive: true, force: true });

await build({
  entryPoints: ["dist/cli.js"],
  outdir: "dist/bundle",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  chunkNames: "chunks/[name]-[hash]",
  // tsx is loaded only for TypeScript plugins; Ink's devtools only with DEV=true. What reads files beside its
  // own module (PGlite's WebAssembly and data, the stores' SQL migrations) stays a package, and so does their
  // client (one copy of its classes, or `instanceof SqlError` fails across the two): `unforget memory` and
  // `unforget db` load them on demand.
  external: [
    "tsx",
    "react-devtools-core",
    "@electric-sql/pglite",
    "@unforget/memory-postgres",
    "@unforget/postgres",
  ],
  // jsonc-parser's `main` is a UMD module whose requires esbuild cannot follow; its ES module build bundles.
  alias: { "jsonc-parser": "jsonc-parser/lib/esm/main.js" },
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  sourcemap: true,
  logLevel: "warning",
});
