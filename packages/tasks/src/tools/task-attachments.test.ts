import { describe, expect, it } from "vitest";
import type { TaskInfo } from "../task/task-info.ts";
import { createTaskNotificationAttachment, renderTaskStatus } from "./task-attachments.ts";

const NOW = 1_800_000_000_000;
const task = (overrides: Partial<TaskInfo>): TaskInfo => ({
  id: "bash-1",
  type: "local_bash",
  description: "npm test",
  status: "running",
  createdAt: NOW - 252_000,
  outputPath: "/tmp/t/bash-1/output.log",
  outputBytes: 12_600,
  watchedBy: "this manager",
  ...overrides,
});

describe("renderTaskStatus", () => {
  it("lists running tasks first, then recently ended ones, and leaves old ones out", () => {
    const text = renderTaskStatus(
      [
        task({ id: "bash-old", status: "completed", endedAt: NOW - 7_200_000, exitCode: 0 }),
        task({
          id: "bash-done",
          description: "npm run build",
          status: "completed",
          endedAt: NOW - 120_000,
          exitCode: 0,
          createdAt: NOW - 300_000,
        }),
        task({ id: "bash-run", lastOutputAt: NOW - 3_000 }),
        task({
          id: "agent-1",
          type: "local_agent",
          description: "triage",
          status: "failed",
          endedAt: NOW - 60_000,
          error: "provider unreachable",
          createdAt: NOW - 100_000,
        }),
      ],
      { now: NOW },
    );
    expect(text).toBe(
      [
        "Background tasks (they keep running on their own; do not start them again — read their output with task_output, stop them with task_stop):",
        "- bash-run (local_bash) npm test — running for 4m 12s, 12.3 KB of output, last output 3s ago",
        "- agent-1 (local_agent) triage — failed 1m 0s ago: provider unreachable",
        "- bash-done (local_bash) npm run build — completed 2m 0s ago (exit code 0), 12.3 KB of output",
      ].join("\n"),
    );
    expect(renderTaskStatus([task({ status: "killed", endedAt: NOW - 7_200_000 })], { now: NOW })).toBe("");
  });
});

describe("createTaskNotificationAttachment", () => {
  it("turns notifications into one attachment for the next turn", () => {
    const base = {
      taskId: "bash-1",
      type: "local_bash" as const,
      description: "apt-get install jq",
      at: NOW,
      outputPath: "/x",
    };
    const attachment = createTaskNotificationAttachment([
      {
        ...base,
        kind: "stalled",
        prompt: "yes/no question",
        tail: "Do you want to continue? [Y/n] ",
        quietMs: 45_000,
      },
      {
        ...base,
        taskId: "bash-2",
        description: "make",
        kind: "failed",
        reason: "exit",
        exitCode: 2,
        error: "exited with code 2",
        tail: "make: *** [all] Error 2\n",
      },
    ]);
    expect(attachment).toEqual({
      kind: "task-notification",
      source: "@unforget/tasks",
      metadata: { taskIds: ["bash-1", "bash-2"] },
      content: [
        "Background task bash-1 (apt-get install jq) printed nothing for 45s and seems to wait for input (yes/no question). Answer it with task_input, stop it with task_stop, or ask the user. Last output:",
        "Do you want to continue? [Y/n] ",
        "",
        "Background task bash-2 (make) failed (exit): exited with code 2. Last output:",
        "make: *** [all] Error 2",
      ].join("\n"),
    });
    expect(createTaskNotificationAttachment([])).toBeUndefined();
  });
});
