import { describe, expect, it } from "vitest";
import { runHookCommand } from "./run-hook-command.ts";

describe("runHookCommand", () => {
  it("a timeout longer than setTimeout's 24.8-day maximum does not fire at once", async () => {
    const run = await runHookCommand({
      command: "sleep 0.2; echo finished",
      input: "",
      cwd: process.cwd(),
      env: process.env,
      timeoutMs: 30 * 24 * 60 * 60 * 1000,
    });
    expect(run.timedOut).toBe(false);
    expect(run.exitCode).toBe(0);
    expect(run.stdout.trim()).toBe("finished");
  });
});
