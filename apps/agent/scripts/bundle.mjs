// Bundles the CLI into dist/bundle/ (one file per entry plus shared chunks): start-up then reads a few files
// instead of resolving and loading hundreds of modules (BENCHMARKS.md, "unforget -p start-up").
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
  // tsx is loaded only for TypeScript plugins; Ink's devtools only with DEV=true.
  external: ["tsx", "react-devtools-core"],
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
  sourcemap: true,
  logLevel: "warning",
});
