import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HookResultEntry } from "@unforget/transcript";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { getTaskHooks } from "../__fixtures__/task-hooks.ts";
import { defineHookGroup } from "../bus/hook-group.ts";
import { applyPlugins } from "../bus/hook-plugin.ts";
import { createSessionHooks } from "../bus/session-hooks.ts";
import type { HookError } from "../hook-error.ts";
import { PROMPT_BLOCK_ATTACHMENT_KIND, type PreCompactEvent, type SessionEventBase } from "../hook-events.ts";
import { createGateHook } from "../kinds/gate-hook.ts";
import { createTransformHook } from "../kinds/transform-hook.ts";
import type { HookCommandSettings } from "../settings/hook-settings.ts";
import { createCommandHooksPlugin } from "./command-hooks-plugin.ts";

let projectDir: string;

beforeEach(async () => {
  projectDir = await mkdtemp(join(tmpdir(), "unforget-hooks-"));
});

afterEach(async () => {
  await rm(projectDir, { recursive: true, force: true });
});

async function script(name: string, body: string): Promise<string> {
  const path = join(projectDir, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

function bus(settings: HookCommandSettings) {
  const entries: HookResultEntry[] = [];
  const errors: HookError[] = [];
  const hooks = createSessionHooks({ sessionId: "session-1", onHookError: (error) => errors.push(error) });
  applyPlugins(hooks, [
    createCommandHooksPlugin({
      settings,
      projectDir,
      transcriptPath: "/transcripts/session-1.jsonl",
      killGraceMs: 200,
      onHookResult: (entry) => entries.push(entry),
    }),
  ]);
  return { hooks, entries, errors };
}

const autoEvent: PreCompactEvent = {
  sessionId: "session-1",
  trigger: "auto",
  tokens: 170_000,
  threshold: 167_000,
};

function isGone(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return Promise.resolve(true);
  }
  // A killed process whose parent is gone may linger as a zombie until init reaps it: that counts as gone.
  return readFile(`/proc/${pid}/stat`, "utf8").then(
    (stat) => / Z /.test(stat),
    () => true,
  );
}

describe("command hooks on PreCompact", () => {
  it("a script that prints text adds instructions after the user's, and sees Claude Code's stdin and env", async () => {
    const command = await script(
      "add-instructions.sh",
      'cat > "$CLAUDE_PROJECT_DIR/stdin.json"\necho "$UNFORGET_PROJECT_DIR" > "$CLAUDE_PROJECT_DIR/env.txt"\necho "Keep the API design decisions."',
    );
    const { hooks, entries } = bus({
      PreCompact: [{ matcher: "auto", hooks: [{ type: "command", command }] }],
    });
    const result = await hooks.preCompact.promise({ instructions: "Focus on the parser." }, autoEvent);
    expect(result).toEqual({ instructions: "Focus on the parser.\n\nKeep the API design decisions." });
    const stdin = JSON.parse(await readFile(join(projectDir, "stdin.json"), "utf8"));
    expect(stdin).toMatchObject({
      session_id: "session-1",
      transcript_path: "/transcripts/session-1.jsonl",
      cwd: projectDir,
      hook_event_name: "PreCompact",
      trigger: "auto",
      custom_instructions: "Focus on the parser.",
    });
    expect((await readFile(join(projectDir, "env.txt"), "utf8")).trim()).toBe(projectDir);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      type: "hook_result",
      event: "PreCompact",
      handler: command,
      outcome: "success",
      output: "Keep the API design decisions.",
      exitCode: 0,
      sessionId: "session-1",
    });
    expect(entries[0]?.durationMs).toBeGreaterThan(0);
  });

  it("does not run a script whose matcher does not match the trigger", async () => {
    const command = await script("manual-only.sh", 'echo "MANUAL"');
    const { hooks, entries } = bus({
      PreCompact: [{ matcher: "manual", hooks: [{ type: "command", command }] }],
    });
    await expect(hooks.preCompact.promise({ instructions: "U" }, autoEvent)).resolves.toEqual({
      instructions: "U",
    });
    expect(entries).toHaveLength(0);
  });

  it("exit 2 vetoes a proactive compaction with stderr as the reason", async () => {
    const command = await script("veto.sh", 'echo "A release is being cut; compact later." >&2\nexit 2');
    const { hooks, entries } = bus({ PreCompact: [{ hooks: [{ type: "command", command }] }] });
    const result = await hooks.preCompact.promise({ instructions: "U" }, autoEvent);
    expect(result.veto).toEqual({ reason: "A release is being cut; compact later.", by: command });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      outcome: "blocked",
      exitCode: 2,
      reason: "A release is being cut; compact later.",
    });
  });

  it("exit 2 cannot veto a reactive compaction: reported, not blocked", async () => {
    const command = await script("veto.sh", 'echo "no" >&2\nexit 2');
    const { hooks, entries } = bus({
      PreCompact: [{ matcher: "auto", hooks: [{ type: "command", command }] }],
    });
    const result = await hooks.preCompact.promise(
      { instructions: "U" },
      { ...autoEvent, trigger: "reactive" },
    );
    expect(result).toEqual({ instructions: "U" });
    expect(entries[0]).toMatchObject({ outcome: "error", exitCode: 2 });
    expect(entries[0]?.reason).toContain("cannot block");
  });

  it("a UserPromptSubmit command that exits 2 blocks the prompt, with its stderr as the reason", async () => {
    const command = await script("guard.sh", 'echo "no secrets in prompts" >&2\nexit 2');
    const context = await script("context.sh", 'echo "the repo uses pnpm"');
    const { hooks, entries } = bus({
      UserPromptSubmit: [
        {
          hooks: [
            { type: "command", command: context },
            { type: "command", command },
          ],
        },
      ],
    });
    const attachments = await hooks.userPromptSubmit.promise([], {
      sessionId: "session-1",
      prompt: "key=123",
    });
    expect(attachments).toEqual([
      { kind: "hook-context", content: "the repo uses pnpm", source: context },
      { kind: PROMPT_BLOCK_ATTACHMENT_KIND, content: "no secrets in prompts", source: command },
    ]);
    expect(entries.map((entry) => entry.outcome).sort()).toEqual(["blocked", "success"]);
  });

  it("a script that hangs past its timeout is killed with its whole process group and does not block", async () => {
    const command = await script(
      "hang.sh",
      `sleep 30 >/dev/null 2>&1 &\necho $! > "${projectDir}/child.pid"\nsleep 30`,
    );
    const { hooks, entries } = bus({ PreCompact: [{ hooks: [{ type: "command", command, timeout: 0.5 }] }] });
    const result = await hooks.preCompact.promise({ instructions: "U" }, autoEvent);
    expect(result).toEqual({ instructions: "U" });
    expect(entries[0]).toMatchObject({ outcome: "timeout", handler: command });
    expect(entries[0]?.reason).toContain("process group was killed");
    const childPid = Number((await readFile(join(projectDir, "child.pid"), "utf8")).trim());
    expect(childPid).toBeGreaterThan(0);
    // SIGKILL follows SIGTERM after the grace period; wait it out before looking.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await isGone(childPid)).toBe(true);
  });

  it("a script that prints invalid JSON is reported and contributes nothing", async () => {
    const command = await script("bad-json.sh", "echo '{\"decision\": '");
    const { hooks, entries } = bus({ PreCompact: [{ hooks: [{ type: "command", command }] }] });
    const result = await hooks.preCompact.promise({ instructions: "U" }, autoEvent);
    expect(result).toEqual({ instructions: "U" });
    expect(entries[0]).toMatchObject({ outcome: "error", exitCode: 0 });
    expect(entries[0]?.reason).toContain("invalid JSON");
    expect(entries[0]?.output).toBeUndefined();
  });

  it("other non-zero exits are reported with stderr and do not block", async () => {
    const command = await script("fails.sh", 'echo "oops" >&2\nexit 1');
    const { hooks, entries } = bus({ PreCompact: [{ hooks: [{ type: "command", command }] }] });
    await expect(hooks.preCompact.promise({ instructions: "U" }, autoEvent)).resolves.toEqual({
      instructions: "U",
    });
    expect(entries[0]).toMatchObject({ outcome: "error", exitCode: 1, reason: "exit code 1: oops" });
  });

  it('reads JSON output: decision "block" vetoes, additionalContext adds, suppressOutput hides it from the entry', async () => {
    const blocker = await script("json-block.sh", 'echo \'{"decision": "block", "reason": "not now"}\'');
    const adder = await script(
      "json-add.sh",
      'echo \'{"suppressOutput": true, "hookSpecificOutput": {"hookEventName": "PreCompact", "additionalContext": "Keep TODOs."}}\'',
    );
    const add = bus({ PreCompact: [{ hooks: [{ type: "command", command: adder }] }] });
    await expect(add.hooks.preCompact.promise({ instructions: "" }, autoEvent)).resolves.toEqual({
      instructions: "Keep TODOs.",
    });
    expect(add.entries[0]).toMatchObject({ outcome: "success" });
    expect(add.entries[0]?.output).toBeUndefined();
    const block = bus({ PreCompact: [{ hooks: [{ type: "command", command: blocker }] }] });
    const result = await block.hooks.preCompact.promise({ instructions: "U" }, autoEvent);
    expect(result.veto).toEqual({ reason: "not now", by: blocker });
  });

  it("runs an identical command configured twice only once", async () => {
    const command = await script("count.sh", `echo x >> "${projectDir}/count.txt"`);
    const { hooks } = bus({
      PreCompact: [
        { hooks: [{ type: "command", command }] },
        { matcher: "*", hooks: [{ type: "command", command }] },
      ],
    });
    await hooks.preCompact.promise({ instructions: "" }, autoEvent);
    expect((await readFile(join(projectDir, "count.txt"), "utf8")).trim().split("\n")).toHaveLength(1);
  });
});

describe("command hooks on other events", () => {
  it("SessionStart: matcher on source; stdout becomes a hook-context attachment", async () => {
    const onCompact = await script("reinject.sh", 'echo "Project rules: use pnpm."');
    const onStartup = await script("startup.sh", 'echo "STARTUP ONLY"');
    const { hooks } = bus({
      SessionStart: [
        { matcher: "compact", hooks: [{ type: "command", command: onCompact }] },
        { matcher: "startup", hooks: [{ type: "command", command: onStartup }] },
      ],
    });
    const attachments = await hooks.sessionStart.promise([], { sessionId: "session-1", source: "compact" });
    expect(attachments).toEqual([
      { kind: "hook-context", content: "Project rules: use pnpm.", source: onCompact },
    ]);
  });

  it("PreToolUse: exit 2 denies, permissionDecision deny denies, updatedInput rewrites, matchers select tools", async () => {
    const denyExit = await script("deny-exit.sh", 'echo "no rm" >&2\nexit 2');
    const rewrite = await script(
      "rewrite.sh",
      'echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"path": "/safe"}}}\'',
    );
    const denyJson = await script(
      "deny-json.sh",
      'echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "read only"}}\'',
    );
    const { hooks } = bus({
      PreToolUse: [
        { matcher: "Bash", hooks: [{ type: "command", command: denyExit }] },
        { matcher: "Edit|Write", hooks: [{ type: "command", command: rewrite }] },
        { matcher: "mcp__.*", hooks: [{ type: "command", command: denyJson }] },
      ],
    });
    const base = { sessionId: "session-1", toolUseId: "t1", input: { path: "/etc" } };
    await expect(hooks.preToolUse.promise({ ...base, toolName: "Bash" })).resolves.toEqual({
      behavior: "deny",
      reason: "no rm",
      by: denyExit,
    });
    await expect(hooks.preToolUse.promise({ ...base, toolName: "Write" })).resolves.toEqual({
      behavior: "rewrite",
      input: { path: "/safe" },
    });
    await expect(hooks.preToolUse.promise({ ...base, toolName: "mcp__db__query" })).resolves.toEqual({
      behavior: "deny",
      reason: "read only",
      by: denyJson,
    });
    await expect(hooks.preToolUse.promise({ ...base, toolName: "Read" })).resolves.toBeUndefined();
  });

  it("PostCompact: observers receive the summary and sizes; exit 2 is reported, not blocking", async () => {
    const command = await script("post.sh", `cat > "${projectDir}/post.json"\nexit 2`);
    const { hooks, entries } = bus({ PostCompact: [{ hooks: [{ type: "command", command }] }] });
    await hooks.postCompact.promise({
      sessionId: "session-1",
      trigger: "manual",
      layer: "full",
      summary: "the summary",
      tokensBefore: 1000,
      tokensAfter: 100,
      messagesSummarized: 12,
    });
    expect(JSON.parse(await readFile(join(projectDir, "post.json"), "utf8"))).toMatchObject({
      hook_event_name: "PostCompact",
      trigger: "manual",
      compact_summary: "the summary",
      tokens_before: 1000,
      tokens_after: 100,
      messages_summarized: 12,
    });
    expect(entries[0]).toMatchObject({ event: "PostCompact", outcome: "error", exitCode: 2 });
  });

  it("PostCompact carries the layer; a layer without a summary sends none; matchers can select layers", async () => {
    const log = join(projectDir, "layers.jsonl");
    const any = await script("any-layer.sh", `cat >> "${log}"\necho >> "${log}"`);
    const summaries = await script("summaries.sh", `echo summarising >> "${projectDir}/summaries.txt"`);
    const { hooks } = bus({
      PostCompact: [
        { hooks: [{ type: "command", command: any }] },
        { matcher: "full|reactive", hooks: [{ type: "command", command: summaries }] },
      ],
    });
    await hooks.postCompact.promise({
      sessionId: "session-1",
      layer: "microcompact",
      trigger: "auto",
      tokensBefore: 900,
      tokensAfter: 700,
    });
    await hooks.postCompact.promise({
      sessionId: "session-1",
      layer: "full",
      trigger: "manual",
      summary: "S",
      tokensBefore: 700,
      tokensAfter: 100,
      messagesSummarized: 30,
    });
    const [cleared, summarised] = (await readFile(log, "utf8"))
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line));
    expect(cleared).toMatchObject({
      layer: "microcompact",
      trigger: "auto",
      tokens_before: 900,
      tokens_after: 700,
    });
    expect(Object.keys(cleared)).not.toContain("compact_summary");
    expect(Object.keys(cleared)).not.toContain("messages_summarized");
    expect(summarised).toMatchObject({ layer: "full", compact_summary: "S", messages_summarized: 30 });
    expect((await readFile(join(projectDir, "summaries.txt"), "utf8")).trim().split("\n")).toHaveLength(1);
  });

  it("SessionEnd, PostToolUse and TaskSettled commands receive their fields; matchers use reason and tool name", async () => {
    const log = join(projectDir, "observers.jsonl");
    const command = await script("observe.sh", `cat >> "${log}"\necho >> "${log}"`);
    const { hooks, entries } = bus({
      SessionEnd: [{ matcher: "logout", hooks: [{ type: "command", command }] }],
      PostToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command }] }],
      TaskSettled: [{ hooks: [{ type: "command", command }] }],
    });
    await hooks.sessionEnd.promise({ sessionId: "session-1", reason: "other" });
    await hooks.sessionEnd.promise({ sessionId: "session-1", reason: "logout" });
    await hooks.postToolUse.promise({
      sessionId: "session-1",
      toolName: "Bash",
      toolUseId: "t9",
      input: { command: "ls" },
      output: "a\nb",
      isError: false,
    });
    await getTaskHooks(hooks).taskSettled.promise({
      sessionId: "session-1",
      taskId: "task-1",
      status: "failed",
    });
    const lines = (await readFile(log, "utf8"))
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line));
    expect(lines).toMatchObject([
      { hook_event_name: "SessionEnd", reason: "logout" },
      {
        hook_event_name: "PostToolUse",
        tool_name: "Bash",
        tool_use_id: "t9",
        tool_response: { output: "a\nb" },
      },
      { hook_event_name: "TaskSettled", task_id: "task-1", status: "failed" },
    ]);
    expect(entries.map((entry) => entry.event)).toEqual(["SessionEnd", "PostToolUse", "TaskSettled"]);
  });

  it("a matcher can name our reactive trigger, which Claude Code scripts see as auto", async () => {
    const command = await script("reactive.sh", 'echo "EMERGENCY"');
    const { hooks } = bus({ PreCompact: [{ matcher: "reactive", hooks: [{ type: "command", command }] }] });
    await expect(hooks.preCompact.promise({ instructions: "U" }, autoEvent)).resolves.toEqual({
      instructions: "U",
    });
    await expect(
      hooks.preCompact.promise({ instructions: "U" }, { ...autoEvent, trigger: "reactive" }),
    ).resolves.toEqual({ instructions: "U\n\nEMERGENCY" });
  });

  it("a missing script is reported as missing, not as a script to fix or a timeout to raise", async () => {
    const missing = join(projectDir, "missing.sh");
    const { hooks, entries, errors } = bus({
      UserPromptSubmit: [{ hooks: [{ type: "command", command: missing }] }],
      SessionStart: [
        { hooks: [{ type: "command", command: '"$CLAUDE_PROJECT_DIR/hooks/start.sh" --quiet' }] },
      ],
    });
    await expect(
      hooks.userPromptSubmit.promise([], { sessionId: "session-1", prompt: "hi" }),
    ).resolves.toEqual([]);
    await expect(
      hooks.sessionStart.promise([], { sessionId: "session-1", source: "startup" }),
    ).resolves.toEqual([]);
    expect(entries[0]).toMatchObject({ event: "UserPromptSubmit", outcome: "error", exitCode: 127 });
    expect(entries[0]?.reason).toBe(`the file ${missing} does not exist`);
    expect(errors[0]?.message).toBe(
      `Hook command "${missing}" failed on UserPromptSubmit: the file ${missing} does not exist. It added nothing and blocked nothing. Fix the path in the settings file, or create the script.`,
    );
    expect(errors[1]?.message).toContain(`the file ${join(projectDir, "hooks", "start.sh")} does not exist`);
    for (const error of errors) expect(error.message).not.toContain("timeout");
  });

  it("a script that is not executable, or a command not on PATH, says so", async () => {
    const notExecutable = join(projectDir, "plain.sh");
    await writeFile(notExecutable, "#!/bin/sh\necho hi\n");
    const { hooks, errors } = bus({
      SessionEnd: [
        { matcher: "other", hooks: [{ type: "command", command: notExecutable }] },
        { matcher: "logout", hooks: [{ type: "command", command: "unforget-no-such-command --flag" }] },
      ],
    });
    await hooks.sessionEnd.promise({ sessionId: "session-1", reason: "other" });
    await hooks.sessionEnd.promise({ sessionId: "session-1", reason: "logout" });
    expect(errors.map((error) => error.message)).toEqual([
      `Hook command "${notExecutable}" failed on SessionEnd: ${notExecutable} is not executable. It added nothing and blocked nothing. Make it executable (chmod +x) or run it through its interpreter (sh ${notExecutable}).`,
      'Hook command "unforget-no-such-command --flag" failed on SessionEnd: no command named "unforget-no-such-command" was found on PATH. It added nothing and blocked nothing. Install it, or fix the command in the settings file.',
    ]);
  });

  it("a working directory that does not exist is named as the problem", async () => {
    const gone = join(projectDir, "gone");
    const errors: HookError[] = [];
    const hooks = createSessionHooks({ sessionId: "session-1", onHookError: (error) => errors.push(error) });
    applyPlugins(hooks, [
      createCommandHooksPlugin({
        settings: { SessionEnd: [{ hooks: [{ type: "command", command: "true" }] }] },
        projectDir,
        cwd: gone,
      }),
    ]);
    await hooks.sessionEnd.promise({ sessionId: "session-1", reason: "other" });
    expect(errors.map((error) => error.message)).toEqual([
      `Hook command "true" failed on SessionEnd: its working directory ${gone} does not exist. It added nothing and blocked nothing. Pass an existing directory as cwd (or projectDir).`,
    ]);
  });

  it("a timeout says what to raise, and a failing script what happened", async () => {
    const hangs = await script("slow.sh", "sleep 30");
    const fails = await script("fails-loudly.sh", 'echo "no database" >&2\nexit 3');
    const { hooks, errors } = bus({
      PreToolUse: [
        { matcher: "Bash", hooks: [{ type: "command", command: hangs, timeout: 0.2 }] },
        { matcher: "Read", hooks: [{ type: "command", command: fails }] },
      ],
    });
    const base = { sessionId: "session-1", toolUseId: "t1", input: {} };
    await expect(hooks.preToolUse.promise({ ...base, toolName: "Bash" })).resolves.toBeUndefined();
    await expect(hooks.preToolUse.promise({ ...base, toolName: "Read" })).resolves.toBeUndefined();
    expect(errors.map((error) => error.message)).toEqual([
      `Hook command "${hangs}" timed out on PreToolUse: did not finish within 0.2s; its process group was killed. It added nothing and blocked nothing. Make it faster, or raise its "timeout" (in seconds) in the settings file.`,
      `Hook command "${fails}" failed on PreToolUse: exit code 3: no database. It added nothing and blocked nothing. Fix the script.`,
    ]);
  });

  it("taps nothing when no commands are configured", () => {
    const hooks = createSessionHooks();
    applyPlugins(hooks, [createCommandHooksPlugin({ settings: {}, projectDir: "/tmp" })]);
    expect(hooks.preCompact.taps).toHaveLength(0);
    expect(hooks.postCompact.taps).toHaveLength(0);
  });
});

describe("settings files", () => {
  it("loads user and project files, ours and Claude Code's, merged in order", async () => {
    const { loadHookSettings } = await import("../settings/hook-settings.ts");
    const home = join(projectDir, "home");
    const project = join(projectDir, "project");
    const write = async (path: string, value: unknown) => {
      await mkdir(join(path, ".."), { recursive: true });
      await writeFile(path, typeof value === "string" ? value : JSON.stringify(value));
    };
    const group = (command: string) => ({
      hooks: { PreCompact: [{ hooks: [{ type: "command", command }] }] },
    });
    await write(join(home, ".claude", "settings.json"), group("user-claude"));
    await write(join(home, ".unforget", "settings.json"), group("user-ours"));
    await write(join(project, ".claude", "settings.json"), group("project-claude"));
    await write(join(project, ".unforget", "settings.json"), "{ not json");
    await write(join(project, ".claude", "settings.local.json"), {
      hooks: {
        PreCompact: [
          {
            hooks: [
              { type: "prompt", prompt: "x" },
              { type: "command", command: "local" },
            ],
          },
        ],
      },
    });
    const loaded = await loadHookSettings({ projectDir: project, homeDir: home });
    expect(loaded.hooks.PreCompact?.flatMap((g) => g.hooks.map((hook) => hook.command))).toEqual([
      "user-claude",
      "user-ours",
      "project-claude",
      "local",
    ]);
    expect(loaded.files).toHaveLength(4);
    expect(loaded.problems.map((problem) => problem.message)).toEqual([
      expect.stringContaining("not valid JSON"),
      expect.stringContaining("only command hooks are supported"),
    ]);
  });
});

describe("command hooks report through the bus they are applied to", () => {
  it("without a plugin sink, results go to the bus's onHookResult and failures to its onHookError", async () => {
    const ok = await script("adds.sh", 'echo "Keep the TODO list."');
    const fails = await script("fails-on-bus.sh", 'echo "boom" >&2\nexit 1');
    const hangs = await script("hangs-on-bus.sh", "sleep 30");
    const entries: HookResultEntry[] = [];
    const errors: HookError[] = [];
    const hooks = createSessionHooks({
      sessionId: "session-1",
      onHookError: (error) => errors.push(error),
      onHookResult: (entry) => entries.push(entry),
    });
    applyPlugins(hooks, [
      createCommandHooksPlugin({
        settings: {
          PreCompact: [
            {
              hooks: [
                { type: "command", command: ok },
                { type: "command", command: fails },
                { type: "command", command: hangs, timeout: 0.2 },
              ],
            },
          ],
        },
        projectDir,
        killGraceMs: 100,
      }),
    ]);
    const result = await hooks.preCompact.promise({ instructions: "U" }, autoEvent);
    expect(result).toEqual({ instructions: "U\n\nKeep the TODO list." });
    // Commands run in parallel: entries arrive in completion order.
    expect(entries.map((entry) => [entry.handler, entry.outcome]).sort()).toEqual(
      [
        [ok, "success"],
        [fails, "error"],
        [hangs, "timeout"],
      ].sort(),
    );
    expect(entries.every((entry) => entry.sessionId === "session-1")).toBe(true);
    expect(errors.map((error) => [error.hook, error.handler])).toEqual([
      ["preCompact", fails],
      ["preCompact", hangs],
    ]);
    expect(errors[0]?.message).toContain("boom");
    expect(errors[1]?.message).toContain("did not finish within 0.2s");
  });

  it("a command that prints invalid JSON reaches onHookError, not only the transcript", async () => {
    const command = await script("bad-json-reported.sh", "echo '{\"decision\": '");
    const { hooks, errors } = bus({ PreCompact: [{ hooks: [{ type: "command", command }] }] });
    await hooks.preCompact.promise({ instructions: "U" }, autoEvent);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toContain("invalid JSON");
  });

  it("a plugin sink that throws neither vetoes the compaction nor denies the tool call; it is reported", async () => {
    const ok = await script("ok.sh", 'echo "Extra."');
    const allow = await script("allow.sh", "exit 0");
    const errors: HookError[] = [];
    const hooks = createSessionHooks({ sessionId: "session-1", onHookError: (error) => errors.push(error) });
    applyPlugins(hooks, [
      createCommandHooksPlugin({
        settings: {
          PreCompact: [{ hooks: [{ type: "command", command: ok }] }],
          PreToolUse: [{ hooks: [{ type: "command", command: allow }] }],
        },
        projectDir,
        onHookResult: () => {
          throw new Error("disk full");
        },
      }),
    ]);
    await expect(hooks.preCompact.promise({ instructions: "U" }, autoEvent)).resolves.toEqual({
      instructions: "U\n\nExtra.",
    });
    await expect(
      hooks.preToolUse.promise({ sessionId: "session-1", toolName: "Bash", toolUseId: "t1", input: {} }),
    ).resolves.toBeUndefined();
    expect(errors).toHaveLength(2);
    expect(errors[0]?.message).toContain("disk full");
  });
});

describe("command hooks next to plugins", () => {
  it("a command printing permissionDecision allow does not bypass a guard plugin placed after it", async () => {
    const allow = await script(
      "allow-json.sh",
      'echo \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}\'',
    );
    const hooks = createSessionHooks({ sessionId: "session-1", onHookError: () => {} });
    applyPlugins(hooks, [
      createCommandHooksPlugin({
        settings: { PreToolUse: [{ hooks: [{ type: "command", command: allow }] }] },
        projectDir,
      }),
      {
        name: "guard",
        apply(bus) {
          bus.preToolUse.tap("guard", (event) =>
            event.toolName === "Bash" ? { behavior: "deny", reason: "no shell" } : undefined,
          );
        },
      },
    ]);
    const base = { sessionId: "session-1", toolUseId: "t1", input: {} };
    await expect(hooks.preToolUse.promise({ ...base, toolName: "Bash" })).resolves.toEqual({
      behavior: "deny",
      reason: "no shell",
      by: "guard",
    });
    await expect(hooks.preToolUse.promise({ ...base, toolName: "Read" })).resolves.toEqual({
      behavior: "allow",
    });
  });

  it("a PreToolUse command sees the input an earlier plugin rewrote", async () => {
    const command = await script("see-input.sh", `cat > "${projectDir}/tool.json"`);
    const hooks = createSessionHooks({ sessionId: "session-1", onHookError: () => {} });
    applyPlugins(hooks, [
      {
        name: "sandbox",
        apply(bus) {
          bus.preToolUse.tap("sandbox", (event) => ({
            behavior: "rewrite",
            input: { ...event.input, sandbox: true },
          }));
        },
      },
      createCommandHooksPlugin({
        settings: { PreToolUse: [{ hooks: [{ type: "command", command }] }] },
        projectDir,
      }),
    ]);
    await hooks.preToolUse.promise({
      sessionId: "session-1",
      toolName: "Bash",
      toolUseId: "t1",
      input: { command: "ls" },
    });
    const stdin = JSON.parse(await readFile(join(projectDir, "tool.json"), "utf8"));
    expect(stdin.tool_input).toEqual({ command: "ls", sandbox: true });
  });

  it("PreCompact: custom_instructions is the user's own text; unforget_instructions has what plugins added", async () => {
    const command = await script("see-instructions.sh", `cat > "${projectDir}/compact.json"`);
    const hooks = createSessionHooks({ sessionId: "session-1", onHookError: () => {} });
    applyPlugins(hooks, [
      {
        name: "keep-api",
        apply(bus) {
          bus.preCompact.tap("keep-api", (result) => ({
            ...result,
            instructions: `${result.instructions}\nKeep the API decisions.`,
          }));
        },
      },
      createCommandHooksPlugin({
        settings: { PreCompact: [{ hooks: [{ type: "command", command }] }] },
        projectDir,
      }),
    ]);
    await hooks.preCompact.promise({ instructions: "Focus on the parser." }, autoEvent);
    const stdin = JSON.parse(await readFile(join(projectDir, "compact.json"), "utf8"));
    expect(stdin.custom_instructions).toBe("Focus on the parser.");
    expect(stdin.unforget_instructions).toBe("Focus on the parser.\nKeep the API decisions.");
  });
});

describe("command hook environment", () => {
  const secretName = "UNFORGET_HOOKS_TEST_SECRET";
  beforeEach(() => {
    process.env[secretName] = "sk-test-secret";
  });
  afterEach(() => {
    delete process.env[secretName];
  });

  async function environmentSeen(options: Parameters<typeof createCommandHooksPlugin>[0]["inheritEnv"]) {
    const command = await script("print-env.sh", `env > "${projectDir}/env.out"`);
    const hooks = createSessionHooks({ sessionId: "session-1", onHookError: () => {} });
    applyPlugins(hooks, [
      createCommandHooksPlugin({
        settings: { SessionStart: [{ hooks: [{ type: "command", command }] }] },
        projectDir,
        inheritEnv: options,
        env: { EXTRA: "1" },
      }),
    ]);
    await hooks.sessionStart.promise([], { sessionId: "session-1", source: "startup" });
    const lines = (await readFile(join(projectDir, "env.out"), "utf8")).split("\n");
    return new Map(
      lines.map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
    );
  }

  it("inherits the whole process environment by default, as Claude Code does", async () => {
    const seen = await environmentSeen(undefined);
    expect(seen.get(secretName)).toBe("sk-test-secret");
    expect(seen.get("EXTRA")).toBe("1");
    expect(seen.get("CLAUDE_PROJECT_DIR")).toBe(projectDir);
  });

  it("inheritEnv: false passes only `env` and the project dir", async () => {
    const seen = await environmentSeen(false);
    expect(seen.has(secretName)).toBe(false);
    expect(seen.has("HOME")).toBe(false);
    expect(seen.get("EXTRA")).toBe("1");
    expect(seen.get("CLAUDE_PROJECT_DIR")).toBe(projectDir);
    expect(seen.get("UNFORGET_PROJECT_DIR")).toBe(projectDir);
  });

  it("inheritEnv: a list passes only those variables of the process environment", async () => {
    const seen = await environmentSeen(["PATH", "HOME"]);
    expect(seen.has(secretName)).toBe(false);
    expect(seen.get("PATH")).toBe(process.env.PATH);
    expect(seen.get("EXTRA")).toBe("1");
  });
});

interface NoteEvent extends SessionEventBase {
  topicPath: string;
  query?: string;
}

const getNoteHooks = defineHookGroup("notes-test", () => ({
  beforeWrite: createGateHook<[NoteEvent]>(["event"], "beforeWrite", {
    eventName: "NoteWrite",
    matcherValue: (event) => event.topicPath,
  }),
  recall: createTransformHook<[string[], NoteEvent]>(["notes", "event"], "recall", {
    eventName: "NoteRecall",
    addCommandContext: (notes, contexts) => [...notes, ...contexts.map((context) => context.text)],
  }),
  summarize: createTransformHook<[string[], NoteEvent]>(["notes", "event"], "summarize", {
    eventName: "NoteSummarize",
  }),
}));

describe("command hooks on events other packages declare", () => {
  it("subscribe by eventName, with the event snake_cased on stdin, whether the group exists before or after", async () => {
    const log = join(projectDir, "declared.jsonl");
    const command = await script("declared.sh", `cat >> "${log}"\necho >> "${log}"`);
    const settings: HookCommandSettings = {
      TaskSettled: [{ matcher: "failed", hooks: [{ type: "command", command }] }],
    };
    // The emitter's group is created before the plugins are applied on one bus, after on the other.
    const early = createSessionHooks({ sessionId: "early", onHookError: () => {} });
    getTaskHooks(early);
    applyPlugins(early, [createCommandHooksPlugin({ settings, projectDir })]);
    const late = bus(settings);
    for (const [hooks, sessionId] of [
      [early, "early"],
      [late.hooks, "session-1"],
    ] as const) {
      await getTaskHooks(hooks).taskSettled.promise({ sessionId, taskId: "t1", status: "completed" });
      await getTaskHooks(hooks).taskSettled.promise({
        sessionId,
        taskId: "t2",
        status: "failed",
        outputPath: "/tasks/t2.out",
      });
    }
    const lines = (await readFile(log, "utf8"))
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      {
        session_id: "early",
        transcript_path: "",
        cwd: projectDir,
        hook_event_name: "TaskSettled",
        task_id: "t2",
        status: "failed",
        output_path: "/tasks/t2.out",
      },
      expect.objectContaining({ session_id: "session-1", hook_event_name: "TaskSettled", task_id: "t2" }),
    ]);
    expect(late.entries.map((entry) => [entry.event, entry.handler, entry.outcome])).toEqual([
      ["TaskSettled", command, "success"],
    ]);
  });

  it("on a declared gate, exit 2 denies with stderr and the matcher tests the declared value", async () => {
    const deny = await script("deny-index.sh", 'echo "the index is generated" >&2\nexit 2');
    const { hooks, entries } = bus({
      NoteWrite: [{ matcher: "MEMORY\\.md", hooks: [{ type: "command", command: deny }] }],
    });
    const gate = getNoteHooks(hooks).beforeWrite;
    await expect(gate.promise({ sessionId: "session-1", topicPath: "MEMORY.md" })).resolves.toEqual({
      behavior: "deny",
      reason: "the index is generated",
      by: deny,
    });
    await expect(gate.promise({ sessionId: "session-1", topicPath: "topics/a.md" })).resolves.toBeUndefined();
    expect(entries.map((entry) => [entry.event, entry.outcome])).toEqual([["NoteWrite", "blocked"]]);
  });

  it("on a declared transform, output joins the value through addCommandContext; without it, commands only observe", async () => {
    const prints = await script("prints.sh", 'echo "the parser uses Pratt parsing"');
    const { hooks, entries, errors } = bus({
      NoteRecall: [{ hooks: [{ type: "command", command: prints }] }],
      NoteSummarize: [{ hooks: [{ type: "command", command: prints }] }],
    });
    const event = { sessionId: "session-1", topicPath: "topics/parser.md", query: "parser" };
    await expect(getNoteHooks(hooks).recall.promise(["app note"], event)).resolves.toEqual([
      "app note",
      "the parser uses Pratt parsing",
    ]);
    await expect(getNoteHooks(hooks).summarize.promise(["app note"], event)).resolves.toEqual(["app note"]);
    expect(entries.map((entry) => [entry.event, entry.output])).toEqual([
      ["NoteRecall", "the parser uses Pratt parsing"],
      ["NoteSummarize", "the parser uses Pratt parsing"],
    ]);
    expect(errors).toEqual([]);
  });
});
