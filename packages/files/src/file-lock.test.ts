import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileLockedError, withFileLock } from "./file-lock.ts";

const HOLDER = join(dirname(fileURLToPath(import.meta.url)), "__fixtures__", "hold-lock.ts");
const HOUR = 3_600_000;

let folder: string;
let lockPath: string;
const children: ChildProcess[] = [];
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), "unforget-lock-"));
  lockPath = join(folder, "store");
});
afterEach(async () => {
  for (const child of children.splice(0)) child.kill();
  await rm(folder, { recursive: true, force: true });
});

function holder(mode: "exit" | "crash" | "wait"): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", HOLDER, lockPath, mode], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  children.push(child);
  return child;
}
const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
const printed = (child: ChildProcess, text: string) =>
  new Promise<void>((resolve, reject) => {
    let output = "";
    child.stdout?.on("data", (chunk) => {
      output += chunk;
      if (output.includes(text)) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the holder exited (${code}) before printing ${text}`)));
  });
/** A lock file as a holder writes it. */
const writeLock = (owner: { pid: number; host: string }) =>
  writeFile(`${lockPath}.lock`, JSON.stringify({ ...owner, token: "theirs" }));
const ageLock = (ms: number) => {
  const then = new Date(Date.now() - ms);
  return utimes(`${lockPath}.lock`, then, then);
};
/** The pid of a process that has run and exited. */
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid as number;
const refusal = (options: { staleMs?: number }) =>
  withFileLock(lockPath, async () => "ran", { ...options, timeoutMs: 0 }).catch((error: unknown) => error);

describe("withFileLock", () => {
  it("runs one task at a time, and removes the lock after each", async () => {
    let active = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        withFileLock(lockPath, async () => {
          active++;
          most = Math.max(most, active);
          for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
          order.push(index);
          active--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(order.sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, index) => index));
    expect(await readdir(folder)).toEqual([]);
  });

  it("gives the task's value and error back, and releases the lock either way", async () => {
    expect(await withFileLock(lockPath, async () => 42)).toBe(42);
    const failure = new RangeError("task failed");
    await expect(withFileLock(lockPath, async () => Promise.reject(failure))).rejects.toBe(failure);
    expect(existsSync(`${lockPath}.lock`)).toBe(false);
  });

  it("creates the lock's folder when it is missing", async () => {
    lockPath = join(folder, "deep", "er", "store");
    expect(await withFileLock(lockPath, async () => "ran")).toBe("ran");
  });

  it("refuses with file_locked while another process holds the lock, and takes it once released", async () => {
    const child = holder("wait");
    await printed(child, "held");
    const error = await refusal({ staleMs: HOUR });
    expect(error).toBeInstanceOf(FileLockedError);
    expect(error).toMatchObject({ code: "file_locked", lockPath });
    expect((error as Error).message).toContain(`${lockPath}.lock`);
    const taken = withFileLock(lockPath, async () => "ran", { staleMs: HOUR });
    child.stdin?.end();
    expect(await taken).toBe("ran");
    await exited(child);
  });

  it("removes the lock when the process exits while holding it", async () => {
    const child = holder("exit");
    await exited(child);
    expect(child.exitCode).toBe(0);
    expect(existsSync(`${lockPath}.lock`)).toBe(false);
  });

  it("takes over at once the lock of a process of this machine that no longer runs", async () => {
    const child = holder("crash");
    await exited(child);
    expect(child.signalCode).toBe("SIGKILL");
    expect(existsSync(`${lockPath}.lock`)).toBe(true);
    expect(await withFileLock(lockPath, async () => "ran", { staleMs: HOUR, timeoutMs: 0 })).toBe("ran");
    await writeLock({ pid: deadPid(), host: hostname() });
    expect(await withFileLock(lockPath, async () => "ran", { staleMs: HOUR, timeoutMs: 0 })).toBe("ran");
  });

  it("takes over a lock not refreshed for staleMs, and only then", async () => {
    await writeLock({ pid: process.pid, host: hostname() });
    expect(await refusal({ staleMs: 60_000 })).toBeInstanceOf(FileLockedError);
    await ageLock(120_000);
    expect(await refusal({ staleMs: 60_000 })).toBe("ran");
  });

  it("judges another machine's lock by its age alone, its pid means nothing here", async () => {
    await writeLock({ pid: deadPid(), host: `not-${hostname()}` });
    expect(await refusal({ staleMs: 60_000 })).toBeInstanceOf(FileLockedError);
    await ageLock(120_000);
    expect(await refusal({ staleMs: 60_000 })).toBe("ran");
  });

  it("respects an older version's lock folder, and takes it over once stale", async () => {
    await mkdir(`${lockPath}.lock`);
    expect(await refusal({ staleMs: 60_000 })).toBeInstanceOf(FileLockedError);
    await ageLock(120_000);
    expect(await refusal({ staleMs: 60_000 })).toBe("ran");
    expect(await readdir(folder)).toEqual([]);
  });

  it("keeps the lock fresh while it is held", async () => {
    await withFileLock(
      lockPath,
      async () => {
        await ageLock(HOUR);
        // Waits for the refresh (every staleMs / 2); the test's timeout bounds it.
        while ((await stat(`${lockPath}.lock`)).mtimeMs < Date.now() - 60_000)
          await new Promise((resolve) => setTimeout(resolve, 50));
      },
      { staleMs: 400 },
    );
  });

  it("leaves alone, on release, a lock that another holder took over", async () => {
    await withFileLock(lockPath, async () => {
      await writeLock({ pid: process.pid, host: hostname() });
    });
    expect(JSON.parse(await readFile(`${lockPath}.lock`, "utf8"))).toMatchObject({ token: "theirs" });
  });
});
