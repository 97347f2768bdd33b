import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createPermissionGate } from "./permission-gate.ts";
import { loadPermissionSettings } from "./permission-settings.ts";

async function settings(dir: string, file: string, permissions: unknown) {
  await mkdir(join(dir, ".claude"), { recursive: true });
  await writeFile(
    join(dir, ".claude", file),
    typeof permissions === "string" ? permissions : JSON.stringify({ permissions }),
  );
}

describe("loadPermissionSettings", () => {
  it("reads user, project and local files, each rule with its source, the most specific mode", async () => {
    const base = await mkdtemp(join(tmpdir(), "permission-settings-"));
    const home = join(base, "home");
    const project = join(base, "project");
    await settings(home, "settings.json", {
      allow: ["Bash(ls:*)"],
      defaultMode: "plan",
      additionalDirectories: ["~/shared"],
    });
    await settings(project, "settings.json", {
      deny: ["Read(/secrets/**)"],
      defaultMode: "acceptEdits",
      additionalDirectories: ["../lib"],
    });
    await settings(project, "settings.local.json", { ask: ["Bash(git push:*)"] });
    const loaded = await loadPermissionSettings({ projectDir: project, homeDir: home });
    expect(loaded.problems).toEqual([]);
    expect(loaded.defaultMode).toBe("acceptEdits");
    expect(loaded.additionalDirectories).toEqual([join(home, "shared"), join(base, "lib")]);
    expect(loaded.sources).toEqual([
      {
        allow: ["Bash(ls:*)"],
        source: { name: "user", file: join(home, ".claude/settings.json"), root: home },
      },
      {
        deny: ["Read(/secrets/**)"],
        source: { name: "project", file: join(project, ".claude/settings.json"), root: project },
      },
      {
        ask: ["Bash(git push:*)"],
        source: { name: "local", file: join(project, ".claude/settings.local.json"), root: project },
      },
    ]);
    const gate = createPermissionGate({ cwd: join(project, "app"), homeDir: home, sources: loaded.sources });
    const read = {
      name: "Read",
      description: "",
      inputSchema: {},
      readOnly: true,
      permissionSubject: (input: Record<string, unknown>) => ({
        kind: "path" as const,
        path: String(input.path),
        access: "read" as const,
      }),
      execute: async () => ({ content: "", isError: false }),
    };
    const decision = await gate.authorize({
      tool: read,
      input: { path: join(project, "secrets/key.pem") },
      toolUseId: "t",
      sessionId: "s",
      cwd: join(project, "app"),
      signal: new AbortController().signal,
    });
    expect(decision).toMatchObject({
      behavior: "deny",
      decidedBy: { type: "rule", rule: { text: "Read(/secrets/**)" } },
    });
  });

  it("skips what it cannot use, says why, and keeps the rest", async () => {
    const base = await mkdtemp(join(tmpdir(), "permission-settings-"));
    const project = join(base, "project");
    const home = join(base, "home");
    await settings(project, "settings.json", {
      allow: ["Bash(ok:*)", "Bash(broken", 7],
      deny: "Bash",
      defaultMode: "yolo",
      additionalDirectories: "x",
    });
    await settings(project, "settings.local.json", "{ not json");
    const loaded = await loadPermissionSettings({ projectDir: project, homeDir: home });
    expect(loaded.sources.map((source) => source.allow)).toEqual([["Bash(ok:*)"]]);
    expect(loaded.defaultMode).toBeUndefined();
    expect(loaded.problems.map((problem) => problem.message)).toEqual([
      expect.stringContaining('The allow rule "Bash(broken" in'),
      expect.stringContaining("is not a string: 7"),
      expect.stringContaining("permissions.deny in"),
      expect.stringContaining("permissions.defaultMode in"),
      expect.stringContaining("permissions.additionalDirectories in"),
      expect.stringContaining("could not be read as JSON"),
    ]);
  });
});
