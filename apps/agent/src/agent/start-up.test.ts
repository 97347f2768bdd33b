import { execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { defaultMemoryRoot } from "@unforget/memory";
import { type AnthropicFakeServer, startAnthropicFake } from "@unforget/testing/fakes";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentFolders, agentFolders } from "../../test-support/agent-fixture.ts";
import { CLI_PATH, runCliProcess } from "../../test-support/run-cli.ts";

/** The compiled modules, one file each (the bundle would hide which package a module came from). */
const UNBUNDLED_CLI = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

/** A module-loading hook (it runs on Node's loader thread) that appends every URL loaded to a file. */
const RECORD_LOADS = `import { appendFileSync } from "node:fs";
let file;
export function initialize(data) { file = data.file; }
export async function load(url, context, next) { appendFileSync(file, url + "\\n"); return next(url, context); }`;

/**
 * Registers the hook, and at exit appends every file `require` loaded: the hook sees only `import`, and a package
 * loaded on first use through `createRequire` (re2js, yaml) would otherwise come back unseen.
 */
function importFlag(file: string): string {
  const hooks = `data:text/javascript,${encodeURIComponent(RECORD_LOADS)}`;
  const register = `import { register, createRequire } from "node:module"; import { appendFileSync } from "node:fs";
register(${JSON.stringify(hooks)}, { data: { file: ${JSON.stringify(file)} } });
const required = createRequire(process.cwd() + "/").cache;
process.on("exit", () => appendFileSync(${JSON.stringify(file)}, Object.keys(required).join("\\n") + "\\n"));`;
  return `data:text/javascript,${encodeURIComponent(register)}`;
}

let runs = 0;

/** Runs `unforget -p` with the hook; resolves to the modules it loaded and what it printed. */
function loadedModules(
  argv: string[],
  folders: AgentFolders,
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string; modules: string[] }> {
  // One file per run: the hook appends.
  const file = join(folders.root, `modules-${++runs}.txt`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", importFlag(file), UNBUNDLED_CLI, ...argv], {
      cwd: folders.project,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: folders.home, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({ code: code ?? -1, stdout, stderr, modules: readFileSync(file, "utf8").split("\n") }),
    );
  });
}

/**
 * What `unforget -p` must not load when nothing asks for it: each costs start-up (BENCHMARKS.md, "unforget -p
 * start-up"). MCP (@unforget/mcp, its SDK, zod, ajv) waits for a configured server or an MCP configuration, ajv for the first tool call (settings are
 * checked by a validator compiled at build time), the other providers' SDKs for their provider, Ink, React and
 * the Markdown renderer for the REPL, image-size for the first image read, secretlint for the first memory
 * write, the PostgreSQL stores for `unforget db` and `unforget memory`,
 * OpenTelemetry's API (ours; the Anthropic SDK brings its own) for a registered SDK, re2js for the first name
 * pattern compiled (Glob, Grep, an ignore file, a path rule), yaml for the first memory file with frontmatter,
 * memory for a session with memories to read or a consent to write them (only where its folder is, before), the
 * task manager for the first task (the session's task tools come from `@unforget/tasks/tools`), minisearch for
 * the first history search, Node's child_process and worker_threads for the first process, hook command or
 * search worker (`process.getBuiltinModule` where they are used).
 */
const NOT_AT_START_UP: Record<string, RegExp> = {
  "the MCP SDK": /@modelcontextprotocol\/sdk/,
  "@unforget/mcp (its configuration parser and client)": /\/mcp\/dist\//,
  zod: /\/zod\//,
  ajv: /\/ajv\//,
  "the Bedrock SDK": /@aws-sdk\/client-bedrock-runtime/,
  "the Vertex SDK": /@google-cloud\/vertexai/,
  "the Bedrock and Vertex providers": /providers\/(bedrock|vertex)\//,
  Ink: /\/ink\//,
  React: /\/react\//,
  "the Markdown renderer": /marked/,
  "the replay": /replay-command/,
  "image-size (the Read tool's images)": /image-size/,
  "secretlint (memory writes)": /@secretlint/,
  "the PostgreSQL stores and driver": /\/(memory-postgres|postgres)\/dist\/|\/pg@/,
  "jsonc-parser (where a JSON file breaks)": /jsonc-parser/,
  "re2js (the tools' name patterns)": /\/re2js\//,
  "yaml (memory files' frontmatter)": /\/yaml\//,
  "@unforget/memory (beyond where its folder is)": /\/memory\/dist\/(?!root\.js|dir\/memory-root\.js)/,
  "the task manager, its runners and backends":
    /\/tasks\/dist\/(index\.js|(manager|lifecycle|backend|types|mailbox|output)\/)/,
  "minisearch (history search, memory recall)": /\/minisearch\//,
  "Node's child_process (processes, hook commands)": /^node:child_process$/,
  "Node's worker_threads (the search worker)": /^node:worker_threads$/,
};

let fake: AnthropicFakeServer;
let folders: AgentFolders;
beforeAll(async () => {
  fake = await startAnthropicFake({ defaultReply: { kind: "reply", text: "ok" } });
  folders = agentFolders("start-up");
});
afterAll(async () => {
  await fake.close();
  folders.cleanup();
});

describe("unforget -p start-up", () => {
  it("loads only what the first request needs, with settings files present", async () => {
    folders.write("home/.unforget/settings.json", { model: "claude-sonnet-4-6" });
    folders.write("project/.unforget/settings.json", { compaction: { proactive: "auto" } });
    const run = await loadedModules(["-p", "hi"], folders, { ANTHROPIC_BASE_URL: fake.url });
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe("ok\n");
    // The hook saw the run: the CLI, the session and the chosen provider's SDK.
    expect(run.modules.some((url) => url.includes("@anthropic-ai/sdk"))).toBe(true);
    expect(run.modules.some((url) => url.includes("/session/dist/"))).toBe(true);
    const loaded = Object.entries(NOT_AT_START_UP)
      .filter(([, pattern]) => run.modules.some((url) => pattern.test(url)))
      .map(([name]) => name);
    expect(loaded).toEqual([]);
  });

  it("with no settings files, does not load their validator", async () => {
    const empty = agentFolders("start-up-empty");
    try {
      const run = await loadedModules(["-p", "hi"], empty, { ANTHROPIC_BASE_URL: fake.url });
      expect(run.stdout).toBe("ok\n");
      expect(run.modules.some((url) => url.includes("/session/dist/"))).toBe(true);
      expect(run.modules.filter((url) => url.includes("settings-validator"))).toEqual([]);
    } finally {
      empty.cleanup();
    }
  });

  // Memory only reads in `-p` (its consent is "off" unless the settings say otherwise): with memories to read,
  // the session has it, and their index is in the first request.
  it("with memories in the project's memory folder, reads them into the first request", async () => {
    const remembering = agentFolders("start-up-memory");
    try {
      const root = defaultMemoryRoot(remembering.project, {
        configHome: join(remembering.home, ".unforget"),
      });
      remembering.write(
        join(root.slice(remembering.root.length), "MEMORY.md"),
        "- the parser is a Pratt parser\n",
      );
      const before = fake.requests.length;
      const run = await loadedModules(["-p", "hi"], remembering, { ANTHROPIC_BASE_URL: fake.url });
      expect(run.stdout).toBe("ok\n");
      expect(run.modules.some((url) => /\/memory\/dist\/attach-memory\.js/.test(url))).toBe(true);
      expect(JSON.stringify(fake.requests[before]?.body)).toContain("the parser is a Pratt parser");
    } finally {
      remembering.cleanup();
    }
  });

  // re2js and yaml are required on first use from where the code runs: in the bundle, the chunks' folder, so the
  // app depends on them itself (a dependency of a dependency is not found from there).
  it("the bundle finds what it loads on first use, and a Glob call runs through it", async () => {
    // In a process of its own: this one's NODE_PATH (set by pnpm's shims) would find them from anywhere.
    const chunk = join(dirname(CLI_PATH), "chunks", "any.js");
    const script = `const load = require("node:module").createRequire(${JSON.stringify(chunk)});
process.stdout.write(typeof load("re2js").RE2JS.compile + " " + typeof load("yaml").parseDocument);`;
    const resolved = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ["-e", script],
        { env: { PATH: process.env.PATH ?? "" } },
        (error, stdout) => (error ? reject(error) : resolve(stdout)),
      ),
    );
    expect(resolved).toBe("function function");

    const globbing = agentFolders("start-up-glob");
    try {
      globbing.write("project/notes-for-glob.txt", "x");
      fake.enqueue(
        { kind: "reply", toolCalls: [{ name: "Glob", input: { pattern: "*.txt" } }] },
        { kind: "reply", text: "found" },
      );
      const before = fake.requests.length;
      const run = await runCliProcess(["-p", "list the text files"], {
        cwd: globbing.project,
        env: { HOME: globbing.home, ANTHROPIC_BASE_URL: fake.url },
      });
      expect(run.stderr).toBe("");
      expect(run.stdout).toBe("found\n");
      const second = fake.requests.slice(before).at(-1);
      expect(JSON.stringify(second?.body)).toContain("notes-for-glob.txt");
    } finally {
      globbing.cleanup();
    }
  });

  // Choosing a provider reads each one's environment rules (its `/environment` entry), never its SDK.
  it("with no provider configured, says so without loading any provider's SDK", async () => {
    const run = await loadedModules(["-p", "hi"], folders, {});
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("No model provider is configured");
    const sdks = Object.entries({
      "the Anthropic SDK": /@anthropic-ai\/sdk/,
      "the Bedrock SDK": /@aws-sdk\//,
      "the Vertex SDK": /@google-cloud\/vertexai|google-auth-library/,
      "a provider's root module": /providers\/(anthropic|bedrock|vertex)\/dist\/index\.js/,
    })
      .filter(([, pattern]) => run.modules.some((url) => pattern.test(url)))
      .map(([name]) => name);
    expect(sdks).toEqual([]);
  });
});
