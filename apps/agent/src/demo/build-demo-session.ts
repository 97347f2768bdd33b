import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { writeFileAtomic } from "@unforget/files";
import { generateDemoSession } from "./demo-session.ts";

// Run by the app's build: generates dist/demo/demo-session.jsonl from the repository it is built in.
const here = dirname(fileURLToPath(import.meta.url));
let root = resolve(here);
while (!existsSync(join(root, "pnpm-workspace.yaml")) && dirname(root) !== root) root = dirname(root);
if (!existsSync(join(root, "pnpm-workspace.yaml"))) {
  process.stderr.write(
    `build-demo-session: no pnpm-workspace.yaml above ${here}; the demo session needs the repository.\n`,
  );
  process.exit(1);
}
const target = join(here, "demo-session.jsonl");
mkdirSync(here, { recursive: true });
await writeFileAtomic(target, generateDemoSession(root));
process.stdout.write(`demo session written to ${target}\n`);
