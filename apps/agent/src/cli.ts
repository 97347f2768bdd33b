#!/usr/bin/env node
import module from "node:module";

// NO_COLOR (no-color.org): chalk, which Ink and the Markdown renderer use, reads FORCE_COLOR only.
if (process.env.NO_COLOR) process.env.FORCE_COLOR = "0";
// The CLI ships bundled (decision 0022): with UNFORGET_DEBUG, a stack names the TypeScript sources, through the
// bundle's source maps. Set before anything else loads, so that every chunk's map is read.
if (process.env.UNFORGET_DEBUG) process.setSourceMapsEnabled(true);
// Node 22.1+ keeps the compiled code of the modules on disk, and a later start skips compiling them (no-op on 20).
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
const { main } = await import("./main.ts");

const code = await main(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
// Whatever a session left open (a server's socket, a timer), the command is over once its output is out.
process.exitCode = code;
process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
