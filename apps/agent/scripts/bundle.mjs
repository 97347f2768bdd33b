// Bundles the CLI into dist/bundle/ (one file per entry plus shared chunks): start-up then reads a few files
// instead of resolving and loading hundreds of modules (BENCHMARKS.md, "unforget -p start-up").
import { copyFileSync, cpSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { build } from "esbuild";

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
    "@unforget/tasks-postgres",
  ],
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  sourcemap: true,
  logLevel: "warning",
});

// PGlite (the embedded database of `unforget memory import --pglite`) reads its WebAssembly and data files from
// beside its module: in the bundle, beside the chunks. It is an optional peer of @unforget/postgres.
const fromPostgres = createRequire(createRequire(import.meta.url).resolve("@unforget/postgres"));
let pglite;
try {
  pglite = dirname(fromPostgres.resolve("@electric-sql/pglite"));
} catch {
  pglite = undefined;
}
if (pglite)
  for (const file of ["pglite.wasm", "pglite.data", "initdb.wasm"])
    copyFileSync(join(pglite, file), join("dist/bundle/chunks", file));

// Team memory's SQL migrations are read from `../migrations/` beside its module: beside the chunks' folder here.
const memoryPostgres = dirname(createRequire(import.meta.url).resolve("@unforget/memory-postgres"));
cpSync(join(memoryPostgres, "../migrations"), "dist/bundle/migrations", { recursive: true });
