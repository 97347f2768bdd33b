import { execFile } from "node:child_process";
import { cp, mkdir, readdir, readFile, realpath, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { McpServers } from "@unforget/mcp";
import type { MemoryStore } from "@unforget/memory";
import type { TaskManager } from "@unforget/tasks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicSetup, tempDir } from "../__fixtures__/session-kit.ts";
import { SessionPackageMissingError } from "../loop/session-errors.ts";
import { loadOptionalPackage } from "./optional-packages.ts";
import type { SessionMcpServers, SessionMemoryStore, SessionTaskManager } from "./session-capabilities.ts";

const run = promisify(execFile);
const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const OPTIONAL = ["@unforget/memory", "@unforget/mcp", "@unforget/tasks"];

/** The objects of the optional packages satisfy the session's own interfaces as they are (checked by tsc). */
function asSessionCapabilities(
  tasks: TaskManager,
  store: MemoryStore,
  servers: McpServers,
): [SessionTaskManager, SessionMemoryStore, SessionMcpServers] {
  return [tasks, store, servers];
}

describe("loadOptionalPackage", () => {
  it("names the package and the option when the package cannot be resolved", async () => {
    const specifier = "@unforget/not-installed-here";
    const error = await loadOptionalPackage("@unforget/memory", "memory", () => import(specifier)).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(SessionPackageMissingError);
    expect(error).toMatchObject({
      code: "session_package_missing",
      packageName: "@unforget/memory",
      option: "memory",
    });
    expect((error as Error).message).toContain("npm install @unforget/memory");
  });

  it("lets any other failure through as it is", async () => {
    const failure = new TypeError("broken module");
    await expect(
      loadOptionalPackage("@unforget/memory", "memory", () => Promise.reject(failure)),
    ).rejects.toBe(failure);
  });
});

describe("the built package", () => {
  it("takes the optional packages' objects for its own interfaces", () => {
    expect(asSessionCapabilities).toBeTypeOf("function");
  });

  it("names no type of memory, MCP or tasks in its declarations (a user without them type-checks)", async () => {
    const dist = join(packageDir, "dist");
    const declarations = (await readdir(dist)).filter((name) => name.endsWith(".d.ts"));
    expect(declarations.length).toBeGreaterThan(0);
    for (const name of declarations) {
      const text = await readFile(join(dist, name), "utf8");
      expect(text, name).not.toMatch(
        /from\s+["']@unforget\/(memory|mcp|tasks)(\/[^"']*)?["']|import\(["']@unforget\/(memory|mcp|tasks)(\/[^"']*)?["']\)/,
      );
    }
  });
});

/**
 * A project where the session is installed with its dependencies only: its built files copied (so that Node
 * resolves from the copy, not from the workspace, where the optional packages are dev dependencies), each
 * dependency and a provider linked.
 */
async function installWithoutOptionalPackages(root: string): Promise<void> {
  const manifest = JSON.parse(await readFile(join(packageDir, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  const modules = join(root, "node_modules");
  const session = join(modules, "@unforget", "session");
  await mkdir(session, { recursive: true });
  await cp(join(packageDir, "dist"), join(session, "dist"), { recursive: true });
  await cp(join(packageDir, "package.json"), join(session, "package.json"));
  for (const name of [...Object.keys(manifest.dependencies), "@unforget/provider-anthropic"]) {
    const target = await realpath(join(packageDir, "node_modules", name));
    await mkdir(dirname(join(modules, name)), { recursive: true });
    await symlink(target, join(modules, name), "dir");
  }
}

const SCRIPT = `
import { createAgentSession } from "@unforget/session";
import { createBuiltinTools } from "@unforget/tools";
import { createAnthropicProvider } from "@unforget/provider-anthropic";

const [url, work, sessionsDir] = process.argv.slice(2);
const report = { resolved: {}, events: [], text: "", refused: {} };
for (const name of ${JSON.stringify(OPTIONAL)}) {
  report.resolved[name] = await import(name).then(() => "resolved", (error) => error.code);
}
const base = {
  provider: createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: url, maxRetries: 0, env: {} }),
  model: "claude-sonnet-4-6",
  tools: createBuiltinTools(),
  sessionsDir,
  cwd: work,
};
const session = await createAgentSession(base);
for await (const event of session.send("What do the notes say?")) {
  if (event.type === "tool-end") report.events.push(event.name + " " + event.status + ": " + event.output.content.includes("the notes"));
  if (event.type === "turn-end") report.text = event.text;
}
await session.close();
const options = {
  memory: { memory: { store: {} } },
  tasks: { tasks: {} },
  mcpServers: { mcpServers: { local: { type: "stdio", command: "unforget-no-such-server", args: [], env: {} } } },
};
for (const [option, extra] of Object.entries(options)) {
  report.refused[option] = await createAgentSession({ ...base, ...extra }).then(
    (opened) => opened.close().then(() => "opened"),
    (error) => [error.code, error.packageName, error.option].join(" "),
  );
}
console.log(JSON.stringify(report));
`;

describe("a session installed without memory, MCP and tasks", () => {
  let setup: Awaited<ReturnType<typeof anthropicSetup>>;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    setup = await anthropicSetup();
    dir = await tempDir("without-optional");
  });
  afterAll(async () => {
    await setup.fake.close();
    await dir.cleanup();
  });

  it("runs a turn with the built-in tools, and an option that needs one of them names the package", async () => {
    const root = join(dir.path, "project");
    const work = join(dir.path, "work");
    await mkdir(work, { recursive: true });
    await writeFile(join(work, "notes.txt"), "the notes: buy milk\n");
    await installWithoutOptionalPackages(root);
    await writeFile(join(root, "run.mjs"), SCRIPT);
    setup.fake.enqueue(
      { kind: "reply", text: "Reading.", toolCalls: [{ name: "Read", input: { file_path: "notes.txt" } }] },
      { kind: "reply", text: "They say: buy milk." },
    );

    const { stdout } = await run(
      process.execPath,
      [join(root, "run.mjs"), setup.fake.url, work, join(dir.path, "sessions")],
      { cwd: root },
    );
    const report = JSON.parse(stdout.trim().split("\n").at(-1)!);

    expect(report.resolved).toEqual(
      Object.fromEntries(OPTIONAL.map((name) => [name, "ERR_MODULE_NOT_FOUND"])),
    );
    expect(report.events).toEqual(["Read completed: true"]);
    expect(report.text).toBe("They say: buy milk.");
    expect(report.refused).toEqual({
      memory: "session_package_missing @unforget/memory memory",
      tasks: "session_package_missing @unforget/tasks tasks",
      mcpServers: "session_package_missing @unforget/mcp mcpServers",
    });
    // A fresh Node process loads the session, the tools and the provider's SDK: on a loaded machine that alone
    // takes tens of seconds, so the bound is far above it (the outcome never depends on it).
  }, 180_000);
});
