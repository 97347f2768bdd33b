#!/usr/bin/env node
// NO_COLOR (no-color.org): chalk, which Ink and the Markdown renderer use, reads FORCE_COLOR only.
if (process.env.NO_COLOR) process.env.FORCE_COLOR = "0";
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
