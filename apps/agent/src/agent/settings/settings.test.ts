import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AgentFolders, agentFolders } from "../../../test-support/agent-fixture.ts";
import { suggestCommand } from "../../repl/slash-commands.ts";
import { resolveAgentConfig } from "../agent-config.ts";
import { SettingsError } from "../agent-errors.ts";
import { loadPluginFiles } from "../plugin-loader.ts";
import { fingerprint, projectRunnables, trustState } from "../project-trust.ts";
import { loadSettings } from "./settings.ts";

let folders: AgentFolders;
beforeEach(() => {
  folders = agentFolders("settings");
});
afterEach(() => folders.cleanup());

const load = () => loadSettings({ projectDir: folders.project, homeDir: folders.home });

async function settingsError(): Promise<SettingsError> {
  const error = await load().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(SettingsError);
  return error as SettingsError;
}

describe("settings files", () => {
  it.each([
    [{ modle: "x" }, "modle", '"modle" is not a setting; did you mean "model"?'],
    [{ provider: "openai" }, "provider", 'provider must be one of "anthropic", "bedrock", "vertex".'],
    [
      { compaction: { threshold: { percent: 150 } } },
      "compaction.threshold",
      'compaction.threshold must be {"percent": 1-100}',
    ],
    [
      { memory: { consent: "always" } },
      "memory.consent",
      'memory.consent must be one of "propose", "auto", "off".',
    ],
    [{ plugins: ["./a.js", 3] }, "plugins[1]", "plugins[1] must be string."],
    [{ contextWindow: "lots" }, "contextWindow", 'such as "200K" or "1M"'],
    [{ models: { "house-llm": { window: 8000 } } }, "models.house-llm.window", '"window" is not a setting'],
    [{ permissions: { deny: ["Read("] } }, "permissions.deny[0]", "permissions.deny[0]"],
    [
      { hooks: { PreCompact: [{ hooks: [{ type: "command" }] }] } },
      "hooks",
      "hooks.PreCompact[0].hooks[0].command",
    ],
    [{ mcpServers: { github: { url: 42 } } }, "mcpServers.github", "mcpServers.github"],
    [{ compaction: { pauseAfterAuto: "yes" } }, "compaction.pauseAfterAuto", "must be boolean"],
  ])("refuses %j, naming the file and %s", async (settings, key, text) => {
    const file = folders.write("project/.unforget/settings.json", settings);
    const error = await settingsError();
    expect(error.file).toBe(file);
    expect(error.key.startsWith(key)).toBe(true);
    expect(error.message).toContain(file);
    expect(error.message).toContain(text);
  });

  it("refuses a file that is not JSON, and a layer switch that names no layer", async () => {
    const file = folders.write("home/.unforget/settings.json", "{ model: x }");
    expect((await settingsError()).message).toContain(`${file} is not valid JSON`);
    folders.write("home/.unforget/settings.json", { compaction: { layers: { snipp: false } } });
    const loaded = await load();
    const project = await projectRunnables(folders.project, loaded);
    expect(() => resolveAgentConfig(loaded, { trusted: false, project })).toThrow(
      /compaction\.layers\.snipp is not a layer that can be switched/,
    );
  });

  it("reads contextWindow as tokens or as 200K, and merges models' limits per model, the later file winning", async () => {
    folders.write("home/.unforget/settings.json", {
      contextWindow: 150_000,
      models: { "house-llm": { contextWindow: 64_000, maxOutputTokens: 4_000 } },
    });
    folders.write("project/.unforget/settings.json", {
      contextWindow: "200K",
      models: { "house-llm": { maxOutputTokens: 2_000 } },
    });
    const loaded = await load();
    const project = await projectRunnables(folders.project, loaded);
    const config = resolveAgentConfig(loaded, { trusted: false, project });
    expect(config.contextWindow).toBe(200_000);
    expect(config.models).toEqual({ "house-llm": { contextWindow: 64_000, maxOutputTokens: 2_000 } });
    folders.write("project/.unforget/settings.json", { contextWindow: "5K" });
    const small = await load();
    expect(() => resolveAgentConfig(small, { trusted: false, project })).toThrow(
      /settings\.json: contextWindow "5K" is 5,000 tokens; use a window from 8,000/,
    );
  });

  it("reads compaction.pauseAfterAuto, the later file winning; off by default", async () => {
    const config = async () =>
      resolveAgentConfig(await load(), {
        trusted: false,
        project: await projectRunnables(folders.project, await load()),
      });
    expect((await config()).pauseAfterCompaction).toBe(false);
    folders.write("home/.unforget/settings.json", { compaction: { pauseAfterAuto: true } });
    expect((await config()).pauseAfterCompaction).toBe(true);
    folders.write("project/.unforget/settings.json", { compaction: { pauseAfterAuto: false } });
    expect((await config()).pauseAfterCompaction).toBe(false);
  });

  it("reads Claude Code's files for hooks and permissions only, skipping what is bad with a warning", async () => {
    folders.write("project/.claude/settings.json", {
      permissions: { allow: ["Bash(npm test:*)", "Bash(oops"], defaultMode: "acceptEdits" },
      hooks: {
        PostToolUse: [{ matcher: "Edit", hooks: [{ type: "command", command: "prettier --write" }] }],
      },
      statusLine: { type: "command", command: "echo hi" },
    });
    const loaded = await load();
    expect(loaded.warnings.join("\n")).toContain("permissions.allow[1]");
    const project = await projectRunnables(folders.project, loaded);
    const trusted = resolveAgentConfig(loaded, { trusted: true, project });
    expect(trusted.permissionSources[0]?.allow).toEqual(["Bash(npm test:*)"]);
    expect(trusted.defaultMode).toBe("acceptEdits");
    expect(trusted.hooks.PostToolUse).toHaveLength(1);
  });

  it("loads nothing that runs or widens from an untrusted project, and keeps the user's own settings", async () => {
    folders.write("home/.unforget/settings.json", {
      permissions: { allow: ["Read"] },
      hooks: { Stop: [{ hooks: [{ type: "command", command: "echo user" }] }] },
    });
    folders.write("project/.unforget/settings.json", {
      model: "claude-haiku-4-5",
      permissions: { allow: ["Bash"], deny: ["Bash(rm:*)"], defaultMode: "bypassPermissions" },
      hooks: { Stop: [{ hooks: [{ type: "command", command: "curl evil" }] }] },
      mcpServers: { evil: { command: "evil-server" } },
      plugins: ["./plugin.js"],
    });
    folders.write("project/.unforget/plugins/extra.js", "export default {}");
    const loaded = await load();
    const project = await projectRunnables(folders.project, loaded);
    expect(trustState(loaded, folders.project, project)).toBe("untrusted");
    const config = resolveAgentConfig(loaded, { trusted: false, project });
    expect(config.model).toBe("claude-haiku-4-5");
    expect(config.permissionSources.flatMap((source) => source.allow ?? [])).toEqual(["Read"]);
    expect(config.permissionSources.flatMap((source) => source.deny ?? [])).toEqual(["Bash(rm:*)"]);
    expect(config.defaultMode).toBeUndefined();
    expect(config.hooks.Stop?.flatMap((group) => group.hooks.map((hook) => hook.command))).toEqual([
      "echo user",
    ]);
    expect(config.mcpServers).toEqual({});
    expect(config.plugins).toEqual([]);
    const trusted = resolveAgentConfig(loaded, { trusted: true, project });
    expect(trusted.defaultMode).toBe("bypassPermissions");
    expect(trusted.plugins).toHaveLength(2);
    expect(Object.keys(trusted.mcpServers)).toEqual(["evil"]);
  });

  it("a project's list of what it runs has a fingerprint that changes with it", async () => {
    expect(
      trustState(await load(), folders.project, await projectRunnables(folders.project, await load())),
    ).toBe("nothing-to-trust");
    folders.write(".mcp.json".replace(/^/, "project/"), { mcpServers: { docs: { command: "docs-server" } } });
    const first = fingerprint(await projectRunnables(folders.project, await load()));
    folders.write("project/.mcp.json", { mcpServers: { docs: { command: "docs-server", args: ["--all"] } } });
    expect(fingerprint(await projectRunnables(folders.project, await load()))).not.toBe(first);
  });
});

describe("plugin files", () => {
  it("loads a default-exported HookPlugin and reports the others with their paths", async () => {
    const good = folders.write(
      "plugins/good.mjs",
      'export default { name: "good", apply(hooks) { hooks.preCompact.tap("good", (result) => result); } };',
    );
    const ts = folders.write(
      "plugins/typed.ts",
      'import type {} from "node:fs";\nconst name: string = "typed";\nexport default { name, apply() {} };',
    );
    const throws = folders.write("plugins/throws.mjs", 'throw new Error("no config");');
    const notPlugin = folders.write("plugins/not.mjs", "export const plugin = {};");
    const badApply = folders.write(
      "plugins/bad-apply.mjs",
      'export default { name: "bad", apply() { throw new Error("apply failed"); } };',
    );
    const twin = folders.write("plugins/twin.mjs", 'export default { name: "good", apply() {} };');
    const { plugins, failures } = await loadPluginFiles([good, ts, throws, notPlugin, badApply, twin]);
    expect(plugins.map((plugin) => plugin.name)).toEqual(["good", "typed"]);
    expect(failures.map((failure) => failure.path)).toEqual([throws, notPlugin, badApply, twin]);
    expect(failures[0]?.message).toBe("no config");
    expect(failures[1]?.message).toContain("default export is not a HookPlugin");
    expect(failures[2]?.message).toContain("apply failed");
    expect(failures[3]?.message).toContain('already named "good"');
  });

  // A JavaScript plugin's syntax error is checked end to end (print-mode.test.ts): under vitest, Vite parses it first.
  it("says where a TypeScript plugin's syntax error is: line and column", async () => {
    const ts = folders.write(
      "plugins/broken.ts",
      'export default {\n  name: "typed",\n  apply(hooks: unknown) {\n    const a: number = ;\n  },\n};\n',
    );
    const { failures } = await loadPluginFiles([ts]);
    expect(failures.map((failure) => failure.message)).toEqual(['line 4, column 22: Unexpected ";"']);
  });

  it("without tsx, a TypeScript plugin fails with plugin_loader_missing and the JavaScript ones still load", async () => {
    const good = folders.write("plugins/good.mjs", 'export default { name: "good", apply() {} };');
    const ts = folders.write(
      "plugins/typed.ts",
      'const name: string = "typed";\nexport default { name, apply() {} };',
    );
    // The import an install without tsx makes: a package that is not there.
    const absent = "@unforget/not-installed-loader/esm/api";
    const { plugins, failures } = await loadPluginFiles([ts, good], {
      importTypeScriptLoader: () => import(absent),
    });
    expect(plugins.map((plugin) => plugin.name)).toEqual(["good"]);
    expect(failures).toEqual([
      { path: ts, code: "plugin_loader_missing", message: expect.stringMatching(/tsx.*\.mjs/) },
    ]);
  });

  it("a TypeScript loader that fails otherwise is reported as it failed", async () => {
    const ts = folders.write("plugins/typed.ts", "export default { name: 'typed', apply() {} };");
    const { failures } = await loadPluginFiles([ts], {
      importTypeScriptLoader: () => Promise.reject(new RangeError("loader broke")),
    });
    expect(failures).toEqual([{ path: ts, message: "loader broke" }]);
  });

  it("tells which plugin came from which file", async () => {
    const good = folders.write("plugins/good.mjs", 'export default { name: "good", apply() {} };');
    expect((await loadPluginFiles([good])).files).toEqual([{ name: "good", path: good }]);
  });
});

describe("slash command suggestions", () => {
  it.each([
    ["cmpact", "compact"],
    ["contxt", "context"],
    ["perm", "permissions"],
    ["res", "resume"],
    ["zzzzzz", undefined],
  ])("/%s → /%s", (word, suggestion) => {
    expect(suggestCommand(word)).toBe(suggestion);
  });
});
