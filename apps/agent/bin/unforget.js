#!/usr/bin/env node
// The `unforget` command. This file is committed (the build writes dist/), so that installing the workspace
// can link the command before anything is built; it only loads the built, bundled CLI.
try {
  await import("../dist/bundle/cli.js");
} catch (error) {
  const missing =
    error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes("/dist/bundle/cli.js");
  if (!missing) throw error;
  process.stderr.write(
    "unforget: the CLI is not built yet. Run `npx -y pnpm@10.34.9 build` in the repository.\n",
  );
  process.exitCode = 1;
}
