import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { getTaskHooks } from "../__fixtures__/task-hooks.ts";
import { loadHookSettings, parseHookSettings } from "./hook-settings.ts";

const group = (command: string) => [{ hooks: [{ type: "command", command }] }];

describe("unknown event names in hook settings", () => {
  it("reports a misspelt event with the closest valid name, and keeps its hooks", () => {
    const { hooks, problems } = parseHookSettings(
      { hooks: { precompact: group("a"), PreToolUs: group("b"), "session-start": group("c") } },
      "/p/settings.json",
    );
    expect(problems.map((problem) => problem.message)).toEqual([
      '/p/settings.json: hooks.precompact is not an event Unforget knows (did you mean "PreCompact"? Event names must match exactly, case included); its hooks run only if a hook group declares "precompact".',
      '/p/settings.json: hooks.PreToolUs is not an event Unforget knows (did you mean "PreToolUse"?); its hooks run only if a hook group declares "PreToolUs".',
      '/p/settings.json: hooks.session-start is not an event Unforget knows (did you mean "SessionStart"? Event names must match exactly, case included); its hooks run only if a hook group declares "session-start".',
    ]);
    expect(problems[0]?.path).toBe("/p/settings.json");
    expect(Object.keys(hooks)).toEqual(["precompact", "PreToolUs", "session-start"]);
  });

  it("accepts the bus's events, Claude Code's and the declared ones it is told about, and suggests those too", () => {
    const settings = {
      hooks: {
        PreCompact: group("a"),
        Stop: group("b"),
        SubagentStop: group("c"),
        Notification: group("d"),
        TaskSettled: group("e"),
        TaskSetled: group("f"),
        Whatever: group("g"),
      },
    };
    const told = parseHookSettings(settings, "s.json", { eventNames: getTaskHooks.eventNames });
    expect(told.problems.map((problem) => problem.message)).toEqual([
      's.json: hooks.TaskSetled is not an event Unforget knows (did you mean "TaskSettled"?); its hooks run only if a hook group declares "TaskSetled".',
      "s.json: hooks.Whatever is not an event Unforget knows (neither one of the bus's, nor Claude Code's, nor one passed in eventNames); its hooks run only if a hook group declares \"Whatever\".",
    ]);
    const untold = parseHookSettings(settings, "s.json");
    expect(untold.problems.map((problem) => problem.message)[0]).toContain(
      "hooks.TaskSettled is not an event",
    );
  });

  it("loadHookSettings passes the declared names through", async () => {
    const projectDir = await mkdtemp(join(tmpdir(), "unforget-settings-"));
    try {
      await mkdir(join(projectDir, ".unforget"));
      await writeFile(
        join(projectDir, ".unforget", "settings.json"),
        JSON.stringify({ hooks: { TaskSettled: group("notify"), precompact: group("x") } }),
      );
      const loaded = await loadHookSettings({
        projectDir,
        homeDir: join(projectDir, "home"),
        eventNames: getTaskHooks.eventNames,
      });
      expect(loaded.problems.map((problem) => problem.message)).toEqual([
        expect.stringContaining(
          'hooks.precompact is not an event Unforget knows (did you mean "PreCompact"?',
        ),
      ]);
      expect(Object.keys(loaded.hooks)).toEqual(["TaskSettled", "precompact"]);
    } finally {
      await rm(projectDir, { recursive: true, force: true });
    }
  });
});
