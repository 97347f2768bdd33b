import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { groupExists, signalGroup, terminateGroup } from "./process-group.ts";
import { currentProcessIdentity, isProcessAlive, readProcessIdentity } from "./process-identity.ts";
import { shellCommandLine, spawnShellCommand } from "./spawn-group.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "unforget-process-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Waits (the test's timeout is the limit) until the file holds `lines` lines. */
async function linesOf(path: string, lines: number): Promise<string[]> {
  for (;;) {
    const text = await readFile(path, "utf8").catch(() => "");
    const found = text.split("\n").filter((line) => line !== "");
    if (found.length >= lines) return found;
    await sleep(20);
  }
}

describe("process groups", () => {
  it("ends the whole group, a grandchild included, and a recycled pid never passes for the process", async () => {
    const outputPath = join(dir, "out.log");
    const { child, identity, exited } = spawnShellCommand("sleep 60 & echo $!; wait", { outputPath });
    child.stdin?.end();
    const [grandchild] = await linesOf(outputPath, 1);
    expect(identity).toBeDefined();
    expect(isProcessAlive(identity!)).toBe(true);
    expect(isProcessAlive({ pid: identity!.pid, startTime: "not its start time" })).toBe(false);
    expect(await terminateGroup(identity!.pid, 5_000)).toBe("terminated");
    expect(groupExists(identity!.pid)).toBe(false);
    expect(readProcessIdentity(Number(grandchild))).toBeUndefined();
    expect(await exited).toMatchObject({ signal: "SIGTERM" });
    expect(await terminateGroup(identity!.pid, 5_000)).toBe("gone");
  });

  it.runIf(process.platform === "linux")(
    "a group left with only zombies (exited, not yet reaped by its parent) counts as ended",
    async () => {
      // The parent puts its child in a group of its own and never reaps it, as a slow first process of a
      // container does with orphans: the kernel still finds the group, but nothing in it runs.
      // bash with job control puts the background job in a group of its own; `exec sleep` then replaces the
      // shell with a program that never waits for it. The job ends only once the shell is gone (`$$` is the
      // shell's pid in the job too): had it ended first, bash would have reaped it.
      const script =
        'set -m; (while [ "$(cat /proc/$$/comm)" != sleep ]; do sleep 0.02; done) & echo $!; exec sleep 60';
      const parent = spawn("bash", ["-c", script], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      try {
        const pid = Number(
          await new Promise<string>((resolve) => parent.stdout.once("data", (data) => resolve(String(data)))),
        );
        const stat = () => readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
        for (let state = await stat(); !/\) Z /.test(state); state = await stat()) {
          if (state === "")
            throw new Error(`process ${pid} is gone: it was reaped before it could be a zombie`);
          await sleep(20);
        }
        expect(signalGroup(pid, 0)).toBe(true);
        expect(groupExists(pid)).toBe(false);
        expect(await terminateGroup(pid, 60_000)).toBe("gone");
      } finally {
        parent.kill("SIGKILL");
      }
    },
  );

  it("kills with SIGKILL what ignores SIGTERM past the grace period", async () => {
    const outputPath = join(dir, "out.log");
    const { child, identity } = spawnShellCommand("trap '' TERM; echo ready; while :; do sleep 0.05; done", {
      outputPath,
    });
    child.stdin?.end();
    await linesOf(outputPath, 1);
    expect(await terminateGroup(identity!.pid, 100)).toBe("killed");
    expect(groupExists(identity!.pid)).toBe(false);
  });

  it("adds env to the base environment, pipes stdout when asked, and reports a shell that cannot start", async () => {
    const outputPath = join(dir, "out.log");
    const piped = spawnShellCommand('echo "$A $B"; echo err >&2', {
      outputPath,
      baseEnv: { A: "base", PATH: process.env.PATH },
      env: { B: "added" },
      stdout: "pipe",
    });
    piped.child.stdin?.end();
    let stdout = "";
    piped.child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    expect(await piped.exited).toMatchObject({ code: 0 });
    expect(stdout).toBe("base added\n");
    expect(await readFile(outputPath, "utf8")).toBe("err\n");

    const missing = spawnShellCommand("true", { outputPath, shell: join(dir, "no-such-shell") });
    expect(missing.identity).toBeUndefined();
    expect((await missing.exited).error).toBeInstanceOf(Error);
  });

  it("runs bash without its startup files, and knows this process", () => {
    expect(shellCommandLine("ls", "/bin/bash")).toEqual(["/bin/bash", "--norc", "--noprofile", "-c", "ls"]);
    expect(shellCommandLine("ls", "/bin/sh")).toEqual(["/bin/sh", "-c", "ls"]);
    expect(currentProcessIdentity()).toEqual(readProcessIdentity(process.pid));
  });
});
