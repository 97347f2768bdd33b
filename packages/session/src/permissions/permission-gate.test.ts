import { mkdir, mkdtemp, realpath, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Tool, ToolPermissionSubject } from "@unforget/core";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { createPermissionGate } from "./permission-gate.ts";
import {
  type CanUseTool,
  PERMISSION_MODES,
  type PermissionGateOptions,
  type PermissionMode,
  type PermissionRuleLists,
  type PermissionUpdate,
} from "./permission-types.ts";

function tool(
  name: string,
  options: { readOnly?: boolean; subject?: (input: Record<string, unknown>) => ToolPermissionSubject } = {},
): Tool {
  return {
    name,
    description: name,
    inputSchema: { type: "object" },
    readOnly: options.readOnly,
    ...(options.subject === undefined ? {} : { permissionSubject: options.subject }),
    execute: async () => ({ content: "ran", isError: false }),
  };
}
const command = (input: Record<string, unknown>): ToolPermissionSubject => ({
  kind: "command",
  command: String(input.command),
});
const reads = (input: Record<string, unknown>): ToolPermissionSubject => ({
  kind: "path",
  path: String(input.path),
  access: "read",
});
const writes = (input: Record<string, unknown>): ToolPermissionSubject => ({
  kind: "path",
  path: String(input.path),
  access: "write",
});

const TOOLS = {
  Bash: tool("Bash", { subject: command }),
  Read: tool("Read", { readOnly: true, subject: reads }),
  Grep: tool("Grep", { readOnly: true, subject: reads }),
  Edit: tool("Edit", { subject: writes }),
  Write: tool("Write", { subject: writes }),
  NotebookEdit: tool("NotebookEdit"),
  WebFetch: tool("WebFetch", { subject: (input) => ({ kind: "url", url: String(input.url) }) }),
  TodoWrite: tool("TodoWrite"),
  Glance: tool("Glance", { readOnly: true }),
  mcpGet: tool("mcp__github__get_issue", { readOnly: true }),
  mcpCreate: tool("mcp__github__create_issue"),
  mcpOther: tool("mcp__gitlab__create_issue"),
};

let cwd: string;
let home: string;
let outside: string;
let project: string;

beforeAll(async () => {
  const base = await realpath(await mkdtemp(join(tmpdir(), "permissions-")));
  project = join(base, "project");
  cwd = join(project, "app");
  home = join(base, "home");
  outside = join(base, "outside");
  for (const dir of [
    join(cwd, "src"),
    join(cwd, "docs"),
    join(project, "docs"),
    join(home, "notes"),
    outside,
    join(base, "extra"),
  ])
    await mkdir(dir, { recursive: true });
  await writeFile(join(outside, "secret.txt"), "s");
  await symlink(outside, join(cwd, "link"));
});

type Outcome = "allow" | "deny" | "ask";

async function decide(
  mode: PermissionMode,
  rules: PermissionRuleLists,
  name: keyof typeof TOOLS,
  input: Record<string, unknown>,
  extra: Partial<PermissionGateOptions> & { hookDecision?: "allow" } = {},
): Promise<{ outcome: Outcome; by: string }> {
  let asked = false;
  const gate = createPermissionGate({
    cwd,
    homeDir: home,
    mode,
    rules,
    canUseTool: async () => {
      asked = true;
      return { behavior: "deny", message: "asked" };
    },
    ...extra,
  });
  const decision = await gate.authorize({
    tool: TOOLS[name],
    input,
    toolUseId: "t1",
    sessionId: "s",
    cwd,
    signal: new AbortController().signal,
    ...(extra.hookDecision === undefined ? {} : { hookDecision: extra.hookDecision }),
  });
  const by = decision.decidedBy.type === "rule" ? decision.decidedBy.rule.text : decision.decidedBy.type;
  return { outcome: asked ? "ask" : decision.behavior, by: asked ? "ask" : by };
}

const p = (...parts: string[]) => ({ path: join(...parts) });

describe("modes", () => {
  it.each<
    [
      string,
      PermissionMode,
      PermissionRuleLists,
      keyof typeof TOOLS,
      () => Record<string, unknown>,
      Outcome,
      string,
    ]
  >([
    [
      "default: a read inside the working directory",
      "default",
      {},
      "Read",
      () => p(cwd, "src/a.ts"),
      "allow",
      "default",
    ],
    ["default: a read outside", "default", {}, "Read", () => p(outside, "secret.txt"), "ask", "ask"],
    ["default: an edit", "default", {}, "Edit", () => p(cwd, "src/a.ts"), "ask", "ask"],
    ["default: a read-only tool without a subject", "default", {}, "Glance", () => ({}), "allow", "default"],
    ["default: a tool that writes, without a subject", "default", {}, "TodoWrite", () => ({}), "ask", "ask"],
    ["acceptEdits: an edit inside", "acceptEdits", {}, "Edit", () => p(cwd, "src/a.ts"), "allow", "mode"],
    [
      "acceptEdits: a new file inside",
      "acceptEdits",
      {},
      "Write",
      () => p(cwd, "new/dir/file.ts"),
      "allow",
      "mode",
    ],
    ["acceptEdits: an edit outside", "acceptEdits", {}, "Edit", () => p(outside, "x"), "ask", "ask"],
    ["acceptEdits: a command", "acceptEdits", {}, "Bash", () => ({ command: "mkdir x" }), "ask", "ask"],
    ["plan: a read", "plan", {}, "Read", () => p(cwd, "a"), "allow", "default"],
    ["plan: an edit", "plan", {}, "Edit", () => p(cwd, "a"), "deny", "mode"],
    [
      "plan: a command, even allowed by a rule",
      "plan",
      { allow: ["Bash"] },
      "Bash",
      () => ({ command: "ls" }),
      "deny",
      "mode",
    ],
    [
      "plan: a deny rule still names itself",
      "plan",
      { deny: ["Edit"] },
      "Edit",
      () => p(cwd, "a"),
      "deny",
      "Edit",
    ],
    [
      "bypassPermissions: anything",
      "bypassPermissions",
      {},
      "Bash",
      () => ({ command: "rm -rf build" }),
      "allow",
      "mode",
    ],
    ["bypassPermissions: outside", "bypassPermissions", {}, "Write", () => p(outside, "x"), "allow", "mode"],
    [
      "bypassPermissions: a deny rule",
      "bypassPermissions",
      { deny: ["Bash(rm:*)"] },
      "Bash",
      () => ({ command: "rm -rf /" }),
      "deny",
      "Bash(rm:*)",
    ],
    [
      "bypassPermissions: an ask rule",
      "bypassPermissions",
      { ask: ["Bash(git push:*)"] },
      "Bash",
      () => ({ command: "git push" }),
      "ask",
      "ask",
    ],
    [
      "dontAsk: what would be asked is denied",
      "dontAsk",
      {},
      "Edit",
      () => p(cwd, "a"),
      "deny",
      "no-one-to-ask",
    ],
    [
      "dontAsk: an allow rule still allows",
      "dontAsk",
      { allow: ["Edit"] },
      "Edit",
      () => p(cwd, "a"),
      "allow",
      "Edit",
    ],
    [
      "dontAsk: an ask rule denies, naming the rule",
      "dontAsk",
      { ask: ["Edit"] },
      "Edit",
      () => p(cwd, "a"),
      "deny",
      "Edit",
    ],
  ])("%s", async (_name, mode, rules, name, input, outcome, by) => {
    expect(await decide(mode, rules, name, input())).toEqual({ outcome, by });
  });
});

describe("MCP tools", () => {
  it("ask by default even when the server says they are read-only, and plan mode allows those", async () => {
    expect(await decide("default", {}, "mcpGet", {})).toEqual({ outcome: "ask", by: "ask" });
    expect(await decide("plan", {}, "mcpGet", {})).toEqual({ outcome: "ask", by: "ask" });
    expect(await decide("plan", {}, "mcpCreate", {})).toEqual({ outcome: "deny", by: "mode" });
    expect(await decide("plan", { allow: ["mcp__github"] }, "mcpGet", {})).toEqual({
      outcome: "allow",
      by: "mcp__github",
    });
  });
});

describe("rules", () => {
  it.each<[string, PermissionRuleLists, keyof typeof TOOLS, () => Record<string, unknown>, Outcome, string]>([
    [
      "prefix rule",
      { allow: ["Bash(npm test:*)"] },
      "Bash",
      () => ({ command: "npm test -- -u" }),
      "allow",
      "Bash(npm test:*)",
    ],
    [
      "prefix rule, word boundary",
      { allow: ["Bash(npm test:*)"] },
      "Bash",
      () => ({ command: "npm tests" }),
      "ask",
      "ask",
    ],
    [
      "exact rule",
      { allow: ["Bash(git status)"] },
      "Bash",
      () => ({ command: "git status" }),
      "allow",
      "Bash(git status)",
    ],
    [
      "exact rule, other arguments",
      { allow: ["Bash(git status)"] },
      "Bash",
      () => ({ command: "git status --porcelain" }),
      "ask",
      "ask",
    ],
    [
      "a compound command needs every part allowed",
      { allow: ["Bash(npm test:*)"] },
      "Bash",
      () => ({ command: "npm test && rm -rf x" }),
      "ask",
      "ask",
    ],
    [
      "every part allowed, by different rules",
      { allow: ["Bash(npm test:*)", "Bash(git status)"] },
      "Bash",
      () => ({ command: "npm test; git status | cat" }),
      "ask",
      "ask",
    ],
    [
      "every part allowed",
      { allow: ["Bash(npm test:*)", "Bash(git status)", "Bash(cat)"] },
      "Bash",
      () => ({ command: "npm test; git status | cat" }),
      "allow",
      "Bash(npm test:*)",
    ],
    [
      "a deny rule on any part",
      { allow: ["Bash"], deny: ["Bash(rm:*)"] },
      "Bash",
      () => ({ command: "ls && rm -rf x" }),
      "deny",
      "Bash(rm:*)",
    ],
    [
      "substitutions are never approved by a rule",
      { allow: ["Bash(echo:*)"] },
      "Bash",
      () => ({ command: "echo $(rm -rf x)" }),
      "ask",
      "ask",
    ],
    [
      "a bare Bash rule allows substitutions too",
      { allow: ["Bash"] },
      "Bash",
      () => ({ command: "echo `id`" }),
      "allow",
      "Bash",
    ],
    [
      "deny beats allow",
      { allow: ["Bash"], deny: ["Bash(curl:*)"] },
      "Bash",
      () => ({ command: "curl x" }),
      "deny",
      "Bash(curl:*)",
    ],
    [
      "ask beats allow",
      { allow: ["Bash"], ask: ["Bash(git push:*)"] },
      "Bash",
      () => ({ command: "git push origin" }),
      "ask",
      "ask",
    ],
    [
      "deny beats ask",
      { ask: ["Bash"], deny: ["Bash(git push:*)"] },
      "Bash",
      () => ({ command: "git push" }),
      "deny",
      "Bash(git push:*)",
    ],
    [
      "wildcard in the middle",
      { allow: ["Bash(git * main)"] },
      "Bash",
      () => ({ command: "git push origin main" }),
      "allow",
      "Bash(git * main)",
    ],
    ["deny Read of a file", { deny: ["Read(./.env)"] }, "Read", () => p(cwd, ".env"), "deny", "Read(./.env)"],
    [
      "a Read rule covers Grep",
      { deny: ["Read(./.env)"] },
      "Grep",
      () => p(cwd, ".env"),
      "deny",
      "Read(./.env)",
    ],
    [
      "gitignore-style: no slash matches at any depth",
      { deny: ["Read(*.env)"] },
      "Read",
      () => p(cwd, "src/deep/prod.env"),
      "deny",
      "Read(*.env)",
    ],
    [
      "gitignore-style: ** under a folder",
      { allow: ["Edit(docs/**)"] },
      "Edit",
      () => p(cwd, "docs/a/b.md"),
      "allow",
      "Edit(docs/**)",
    ],
    [
      "an Edit rule covers Write",
      { allow: ["Edit(docs/**)"] },
      "Write",
      () => p(cwd, "docs/new.md"),
      "allow",
      "Edit(docs/**)",
    ],
    [
      "an Edit rule's folder only",
      { allow: ["Edit(docs/**)"] },
      "Edit",
      () => p(cwd, "src/a.ts"),
      "ask",
      "ask",
    ],
    [
      "a bare Edit rule covers every writing tool",
      { allow: ["Edit"] },
      "NotebookEdit",
      () => ({}),
      "allow",
      "Edit",
    ],
    [
      "a Write rule is Write's only",
      { allow: ["Write(docs/**)"] },
      "Edit",
      () => p(cwd, "docs/a.md"),
      "ask",
      "ask",
    ],
    [
      "//abs is from the filesystem root",
      { deny: ["Edit(//etc/**)"] },
      "Write",
      () => ({ path: "/etc/passwd" }),
      "deny",
      "Edit(//etc/**)",
    ],
    [
      "~/ is from home, and allows outside",
      { allow: ["Read(~/notes/**)"] },
      "Read",
      () => p(home, "notes/a.md"),
      "allow",
      "Read(~/notes/**)",
    ],
    [
      "/path is from the rule's root (cwd for code rules)",
      { allow: ["Edit(/src/**)"] },
      "Edit",
      () => p(cwd, "src/a.ts"),
      "allow",
      "Edit(/src/**)",
    ],
    ["/path is anchored", { allow: ["Edit(/src/**)"] }, "Edit", () => p(cwd, "lib/src/a.ts"), "ask", "ask"],
    [
      "relative paths in the input resolve against cwd",
      { deny: ["Edit(src/**)"] },
      "Edit",
      () => ({ path: "src/a.ts" }),
      "deny",
      "Edit(src/**)",
    ],
    [
      "a symlink out of the working directory needs asking",
      {},
      "Read",
      () => p(cwd, "link/secret.txt"),
      "ask",
      "ask",
    ],
    [
      "a deny rule on the symlink's target",
      { deny: ["Read(//**/outside/**)"] },
      "Read",
      () => p(cwd, "link/secret.txt"),
      "deny",
      "Read(//**/outside/**)",
    ],
    [
      "an allow rule must cover the target too",
      { allow: ["Read(./link/**)"] },
      "Read",
      () => p(cwd, "link/secret.txt"),
      "ask",
      "ask",
    ],
    [
      "mcp__server covers its tools",
      { allow: ["mcp__github"] },
      "mcpCreate",
      () => ({}),
      "allow",
      "mcp__github",
    ],
    ["mcp__server__* too", { allow: ["mcp__github__*"] }, "mcpCreate", () => ({}), "allow", "mcp__github__*"],
    ["mcp__server is that server's only", { allow: ["mcp__github"] }, "mcpOther", () => ({}), "ask", "ask"],
    [
      "mcp__server__tool is that tool's only",
      { allow: ["mcp__github__get_issue"] },
      "mcpCreate",
      () => ({}),
      "ask",
      "ask",
    ],
    ["a deny rule on an MCP server", { deny: ["mcp__github"] }, "mcpGet", () => ({}), "deny", "mcp__github"],
    [
      "WebFetch by domain",
      { allow: ["WebFetch(domain:example.com)"] },
      "WebFetch",
      () => ({ url: "https://example.com/a" }),
      "allow",
      "WebFetch(domain:example.com)",
    ],
    [
      "WebFetch: another host",
      { allow: ["WebFetch(domain:example.com)"] },
      "WebFetch",
      () => ({ url: "https://evil.com/?example.com" }),
      "ask",
      "ask",
    ],
    [
      "WebFetch: a subdomain needs *.",
      { allow: ["WebFetch(domain:example.com)"] },
      "WebFetch",
      () => ({ url: "https://api.example.com/" }),
      "ask",
      "ask",
    ],
    [
      "WebFetch: *.domain",
      { allow: ["WebFetch(domain:*.example.com)"] },
      "WebFetch",
      () => ({ url: "https://api.example.com/" }),
      "allow",
      "WebFetch(domain:*.example.com)",
    ],
    [
      "a specifier never matches a tool without a subject",
      { deny: ["TodoWrite(x)"] },
      "TodoWrite",
      () => ({}),
      "ask",
      "ask",
    ],
  ])("%s", async (_name, rules, name, input, outcome, by) => {
    expect(await decide("default", rules, name, input())).toEqual({ outcome, by });
  });

  it("a /path rule from a settings file is relative to its project, not the working directory", async () => {
    const sources = [
      {
        allow: ["Read(/docs/**)"],
        source: { name: "project", file: join(project, ".claude/settings.json"), root: project },
      },
    ];
    expect(await decide("default", {}, "Read", p(project, "docs/a.md"), { sources })).toEqual({
      outcome: "allow",
      by: "Read(/docs/**)",
    });
    expect(await decide("default", {}, "Read", p(cwd, "docs/a.md"), { sources })).toEqual({
      outcome: "allow",
      by: "default",
    });
  });

  it("additional directories count as working directories", async () => {
    const extra = join(outside, "..", "extra");
    expect(await decide("default", {}, "Read", p(extra, "a"))).toEqual({ outcome: "ask", by: "ask" });
    expect(await decide("default", {}, "Read", p(extra, "a"), { additionalDirectories: [extra] })).toEqual({
      outcome: "allow",
      by: "default",
    });
    expect(
      await decide("acceptEdits", {}, "Edit", p(extra, "a"), { additionalDirectories: [extra] }),
    ).toEqual({ outcome: "allow", by: "mode" });
  });

  it("a PreToolUse allow skips asking, but not deny rules", async () => {
    expect(await decide("default", {}, "Edit", p(cwd, "a"), { hookDecision: "allow" })).toEqual({
      outcome: "allow",
      by: "hook",
    });
    expect(
      await decide("default", { deny: ["Edit"] }, "Edit", p(cwd, "a"), { hookDecision: "allow" }),
    ).toEqual({ outcome: "deny", by: "Edit" });
  });

  it("a deny rule that matches any part denies in every mode, whatever else is allowed", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PERMISSION_MODES),
        fc.array(fc.constantFrom("ls", "npm test", "git status", "cat a"), { maxLength: 3 }),
        fc.array(fc.constantFrom("Bash", "Bash(ls:*)", "Bash(rm:*)", "Bash(npm test:*)"), { maxLength: 3 }),
        fc.constantFrom(" && ", "; ", " | ", " || "),
        async (mode, before, allow, op) => {
          const result = await decide(mode, { allow, deny: ["Bash(rm:*)"] }, "Bash", {
            command: [...before, "rm -rf x"].join(op),
          });
          expect(result).toEqual(
            mode === "plan" ? { outcome: "deny", by: "Bash(rm:*)" } : { outcome: "deny", by: "Bash(rm:*)" },
          );
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe("asking", () => {
  const request = (
    name: keyof typeof TOOLS,
    input: Record<string, unknown>,
    signal = new AbortController().signal,
  ) => ({
    tool: TOOLS[name],
    input,
    toolUseId: "t1",
    sessionId: "s",
    cwd,
    signal,
  });

  it("allow once asks again next time; always adds a session rule", async () => {
    const answers: Parameters<CanUseTool>[2][] = [];
    let always = false;
    const gate = createPermissionGate({
      cwd,
      canUseTool: async (_tool, _input, options) => {
        answers.push(options);
        return always
          ? { behavior: "allow", updatedPermissions: options.suggestions }
          : { behavior: "allow" };
      },
    });
    expect(await gate.authorize(request("Bash", { command: "npm run build" }))).toMatchObject({
      behavior: "allow",
      decidedBy: { type: "user" },
    });
    expect(answers).toHaveLength(1);
    expect(answers[0]).toMatchObject({
      suggestions: [{ type: "addRules", behavior: "allow", rules: ["Bash(npm run:*)"] }],
      reason: "No rule allows Bash `npm run build`.",
      toolUseId: "t1",
    });
    always = true;
    await gate.authorize(request("Bash", { command: "npm run build" }));
    expect(answers).toHaveLength(2);
    const third = await gate.authorize(request("Bash", { command: "npm run lint" }));
    expect(answers).toHaveLength(2);
    expect(third).toMatchObject({
      behavior: "allow",
      decidedBy: { type: "rule", rule: { text: "Bash(npm run:*)", source: { name: "session" } } },
    });
    expect(gate.rules().map((rule) => rule.text)).toEqual(["Bash(npm run:*)"]);
  });

  it("adds a session rule once, and offers only rules that are not allowed already", async () => {
    const offered: PermissionUpdate[][] = [];
    const gate = createPermissionGate({
      cwd,
      canUseTool: async (_tool, _input, options) => {
        offered.push(options.suggestions);
        return { behavior: "allow", updatedPermissions: options.suggestions };
      },
    });
    // Two answers "always" about the same call (two questions open at once), and a rule added by hand.
    gate.update([{ type: "addRules", behavior: "allow", rules: ["Bash(npm test:*)", "Bash(npm test:*)"] }]);
    gate.update([{ type: "addRules", behavior: "allow", rules: ["Bash(npm test:*)"] }]);
    gate.update([{ type: "addDirectories", directories: [outside, outside] }]);
    gate.update([{ type: "addDirectories", directories: [outside] }]);
    expect(gate.rules().map((rule) => rule.text)).toEqual(["Bash(npm test:*)"]);
    expect(gate.directories()).toEqual([cwd, outside]);
    // The allowed part is not offered again: only what the question is about.
    await gate.authorize(request("Bash", { command: "npm test && git push origin" }));
    expect(offered.splice(0)).toEqual([
      [{ type: "addRules", behavior: "allow", rules: ["Bash(git push:*)"] }],
    ]);
    expect(gate.rules().map((rule) => rule.text)).toEqual(["Bash(npm test:*)", "Bash(git push:*)"]);
    // An ask rule asks about an allowed command: no rule would change that, so none is offered.
    gate.update([{ type: "addRules", behavior: "ask", rules: ["Bash(git push:*)"] }]);
    await gate.authorize(request("Bash", { command: "git push origin" }));
    expect(offered.splice(0)).toEqual([[]]);
    expect(gate.rules().map((rule) => `${rule.behavior} ${rule.text}`)).toEqual([
      "ask Bash(git push:*)",
      "allow Bash(npm test:*)",
      "allow Bash(git push:*)",
    ]);
  });

  it("offers acceptEdits and a folder rule for an edit, a directory for a path outside", async () => {
    const suggestions: unknown[] = [];
    const gate = createPermissionGate({
      cwd,
      canUseTool: async (_tool, _input, options) => {
        suggestions.push(options.suggestions, options.blockedPath);
        return { behavior: "allow", updatedPermissions: options.suggestions };
      },
    });
    await gate.authorize(request("Edit", p(cwd, "src/a.ts")));
    expect(suggestions.splice(0)).toEqual([
      [
        { type: "setMode", mode: "acceptEdits" },
        { type: "addRules", behavior: "allow", rules: ["Edit(./src/**)"] },
      ],
      undefined,
    ]);
    expect(gate.mode()).toBe("acceptEdits");
    await gate.authorize(request("Read", p(outside, "secret.txt")));
    expect(suggestions.splice(0)).toEqual([
      [{ type: "addDirectories", directories: [outside] }],
      join(outside, "secret.txt"),
    ]);
    expect(gate.directories()).toEqual([cwd, outside]);
    expect(await gate.authorize(request("Read", p(outside, "secret.txt")))).toMatchObject({
      decidedBy: { type: "default" },
    });
  });

  it("a denial carries the user's message; an edited input is returned", async () => {
    const gate = createPermissionGate({
      cwd,
      canUseTool: async (_tool, input) =>
        input.command === "rm -rf /"
          ? { behavior: "deny", message: "Never that. Clean build/ only." }
          : { behavior: "allow", updatedInput: { command: "npm test -- --ci" } },
    });
    expect(await gate.authorize(request("Bash", { command: "rm -rf /" }))).toMatchObject({
      behavior: "deny",
      message: "Never that. Clean build/ only.",
    });
    expect(await gate.authorize(request("Bash", { command: "npm test" }))).toMatchObject({
      behavior: "allow",
      input: { command: "npm test -- --ci" },
    });
  });

  it("fails closed: no one to ask, a callback that throws, an interrupted turn, an unreadable subject", async () => {
    const silent = createPermissionGate({ cwd });
    expect(await silent.authorize(request("Edit", p(cwd, "a")))).toMatchObject({
      behavior: "deny",
      message: expect.stringContaining("There is no one to ask"),
      decidedBy: { type: "no-one-to-ask" },
    });
    const throwing = createPermissionGate({
      cwd,
      canUseTool: async () => {
        throw new Error("UI gone");
      },
    });
    expect(await throwing.authorize(request("Edit", p(cwd, "a")))).toMatchObject({
      behavior: "deny",
      message: expect.stringContaining("UI gone"),
    });
    const controller = new AbortController();
    const slow = createPermissionGate({
      cwd,
      canUseTool: async () => {
        controller.abort();
        return { behavior: "allow" };
      },
    });
    expect(await slow.authorize(request("Edit", p(cwd, "a"), controller.signal))).toMatchObject({
      behavior: "deny",
      message: expect.stringContaining("interrupted"),
    });
    const broken = tool("Broken", {
      subject: () => {
        throw new Error("no path");
      },
    });
    expect(await silent.authorize({ ...request("Edit", {}), tool: broken })).toMatchObject({
      behavior: "deny",
      message: expect.stringContaining("no path"),
    });
  });

  it("says which rule denied, for the model", async () => {
    const gate = createPermissionGate({
      cwd,
      sources: [
        { deny: ["Bash(rm:*)"], source: { name: "project", file: "/p/.claude/settings.json", root: "/p" } },
      ],
    });
    const decision = await gate.authorize(request("Bash", { command: "rm -rf build" }));
    expect(decision).toMatchObject({
      behavior: "deny",
      reason: 'the deny rule "Bash(rm:*)" (/p/.claude/settings.json)',
      message:
        'Permission denied: Bash `rm -rf build` is refused by the deny rule "Bash(rm:*)" (/p/.claude/settings.json). Do not try it another way; do something else or ask the user.',
    });
  });

  it("a bad rule in an update changes nothing", () => {
    const gate = createPermissionGate({ cwd });
    expect(() =>
      gate.update([
        { type: "setMode", mode: "plan" },
        { type: "addRules", behavior: "allow", rules: ["Bash(x"] },
      ]),
    ).toThrow(/closing/);
    expect(gate.mode()).toBe("default");
  });
});

describe("Bash commands, as the shell runs them", () => {
  const request = (command: string) => ({
    tool: TOOLS.Bash,
    input: { command },
    toolUseId: "t1",
    sessionId: "s",
    cwd,
    signal: new AbortController().signal,
  });
  const asking = (answers: Parameters<CanUseTool>[2][]) =>
    (async (_tool, _input, options) => {
      answers.push(options);
      return { behavior: "deny", message: "no" };
    }) satisfies CanUseTool;

  it("names the part a deny rule refused", async () => {
    const gate = createPermissionGate({ cwd, rules: { allow: ["Bash"], deny: ["Bash(rm:*)"] } });
    expect(await gate.authorize(request("ls && timeout 5 rm -rf x"))).toMatchObject({
      behavior: "deny",
      message: expect.stringContaining(
        'refused by the deny rule "Bash(rm:*)" (options rules) (at `rm -rf x`)',
      ),
    });
  });

  it("refuses, in dontAsk, what it cannot read, and tells the model why", async () => {
    const gate = createPermissionGate({ cwd, mode: "dontAsk", rules: { allow: ["Bash(ls:*)"] } });
    const decision = await gate.authorize(request("$tool ls"));
    expect(decision).toMatchObject({ behavior: "deny", decidedBy: { type: "no-one-to-ask" } });
    expect(decision.behavior === "deny" && decision.message).toBe(
      "Permission denied: Bash `$tool ls` cannot be checked before it runs: the command name in `$tool ls` is only known when it runs. No rule can approve what it cannot see; spell the command out. There is no one to ask (dontAsk mode); the user can add an allow rule or change the mode. Do something else.",
    );
  });

  it("in bypassPermissions, asks when a deny rule may apply and it cannot tell, and refuses with no one to ask", async () => {
    const answers: Parameters<CanUseTool>[2][] = [];
    const rules = { deny: ["Bash(rm:*)"] };
    const gate = createPermissionGate({ cwd, mode: "bypassPermissions", rules, canUseTool: asking(answers) });
    await gate.authorize(request("eval $(cat plan.txt)"));
    expect(answers[0]?.reason).toBe(
      'Bash `eval $(cat plan.txt)` may run what the deny rule "Bash(rm:*)" (options rules) refuses, and the gate cannot tell before it runs: `eval $(cat plan.txt)`: `eval` runs text that is only known when it runs.',
    );
    expect(await gate.authorize(request("eval ls"))).toMatchObject({ behavior: "allow" });
    const silent = createPermissionGate({ cwd, mode: "bypassPermissions", rules });
    expect(await silent.authorize(request("c=rm; $c -rf x"))).toMatchObject({
      behavior: "deny",
      decidedBy: { type: "rule", rule: { text: "Bash(rm:*)" } },
    });
    // Without a deny rule there is nothing to protect: bypassPermissions runs it.
    const open = createPermissionGate({ cwd, mode: "bypassPermissions" });
    expect(await open.authorize(request("c=rm; $c -rf x"))).toMatchObject({ behavior: "allow" });
  });

  it("a bare Bash allow covers what cannot be read, unless a deny rule may apply", async () => {
    expect(await decide("default", { allow: ["Bash"] }, "Bash", { command: "$tool x" })).toEqual({
      outcome: "allow",
      by: "Bash",
    });
    expect(
      await decide("default", { allow: ["Bash"], deny: ["Bash(curl:*)"] }, "Bash", { command: "$tool x" }),
    ).toEqual({ outcome: "ask", by: "ask" });
  });

  it("asks before a redirection writes outside the working directories, offering the folder", async () => {
    const answers: Parameters<CanUseTool>[2][] = [];
    const target = join(outside, "notes.txt");
    const gate = createPermissionGate({ cwd, rules: { allow: ["Bash"] }, canUseTool: asking(answers) });
    await gate.authorize(request(`echo hi >> ${target}`));
    expect(answers[0]).toMatchObject({
      blockedPath: target,
      reason: `Bash \`echo hi >> ${target}\` writes ${target}, outside the working directories (${cwd}).`,
      // `Bash` is allowed already: only the folder is offered, never a rule that would change nothing.
      suggestions: [{ type: "addDirectories", directories: [outside] }],
    });
    // An Edit rule that covers the path allows it, as it would a Write.
    expect(
      await decide("default", { allow: ["Bash(echo:*)", `Edit(/${outside}/**)`] }, "Bash", {
        command: `echo hi > ${target}`,
      }),
    ).toEqual({ outcome: "allow", by: "Bash(echo:*)" });
    // Through a symlink out of the working directory too.
    expect(await decide("default", { allow: ["Bash"] }, "Bash", { command: "echo hi > link/x" })).toEqual({
      outcome: "ask",
      by: "ask",
    });
  });

  it("an Edit deny rule refuses a redirection or tee in every mode; acceptEdits does not allow a command", async () => {
    for (const mode of ["default", "acceptEdits", "bypassPermissions", "dontAsk"] as const)
      expect(
        await decide(mode, { allow: ["Bash"], deny: ["Edit(src/**)"] }, "Bash", {
          command: "date | tee -a src/a.ts",
        }),
      ).toEqual({ outcome: "deny", by: "Edit(src/**)" });
    expect(await decide("acceptEdits", {}, "Bash", { command: "echo hi > out.txt" })).toEqual({
      outcome: "ask",
      by: "ask",
    });
    expect(
      await decide("acceptEdits", { allow: ["Bash(echo:*)"] }, "Bash", { command: "echo hi > out.txt" }),
    ).toEqual({ outcome: "allow", by: "Bash(echo:*)" });
  });

  it("suggests a rule per command it runs, not for the wrappers around them", async () => {
    const answers: Parameters<CanUseTool>[2][] = [];
    const gate = createPermissionGate({ cwd, canUseTool: asking(answers) });
    await gate.authorize(request("timeout 60 npm run build && tsc -p . | tee log.txt"));
    expect(answers[0]?.suggestions).toEqual([
      { type: "addRules", behavior: "allow", rules: ["Bash(npm run:*)", "Bash(tsc:*)", "Bash(tee:*)"] },
    ]);
    expect(answers[0]?.reason).toBe(
      "No rule allows `npm run build`, which Bash `timeout 60 npm run build && tsc -p . | tee log.txt` runs.",
    );
  });

  it("an ask rule asks when a word it needs is only known at run time", async () => {
    expect(
      await decide("default", { allow: ["Bash"], ask: ["Bash(git push:*)"] }, "Bash", { command: "git $op" }),
    ).toEqual({ outcome: "ask", by: "ask" });
  });
});
