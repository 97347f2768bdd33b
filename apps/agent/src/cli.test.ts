import { createHash } from "node:crypto";
import {
  chmodSync,
  closeSync,
  copyFileSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sampleCorpus } from "@unforget/testing/corpus";
import { afterAll, describe, expect, it } from "vitest";
import { runCliProcess } from "../test-support/run-cli.ts";

const scratch = mkdtempSync(join(tmpdir(), "unforget-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const emptyHome = join(scratch, "empty-home");
mkdirSync(emptyHome);
const claudeSession = join(sampleCorpus().dir, "claude-code", "sample", "weather_session.jsonl");

/** A file's bytes and modification time, to prove the replay never wrote to it. */
function fingerprint(path: string): string {
  const info = statSync(path);
  return `${createHash("sha256").update(readFileSync(path)).digest("hex")}:${info.mtimeMs}:${info.size}`;
}

/** A failure is one clear line on stderr: the message, no stack trace, no JSON on stdout. */
function expectCleanFailure(result: { code: number; stdout: string; stderr: string }, pattern: RegExp): void {
  expect(result.code).not.toBe(0);
  expect(result.stderr).toMatch(/^unforget: /);
  expect(result.stderr).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stdout).toBe("");
}

/** One line of a Claude Code session file, `second` seconds into 2026. */
function sessionLine(fields: Record<string, unknown>, second: number): string {
  return JSON.stringify({ ...fields, timestamp: `2026-01-01T00:00:${String(second).padStart(2, "0")}.000Z` });
}
const userLine = (content: string, second: number) =>
  sessionLine({ type: "user", message: { role: "user", content } }, second);
const assistantLine = (text: string, second: number) =>
  sessionLine(
    { type: "assistant", message: { role: "assistant", content: [{ type: "text", text }] } },
    second,
  );

describe("unforget replay, run as users run it", () => {
  it("explains itself with --help", async () => {
    const result = await runCliProcess(["replay", "--help"], { env: { HOME: emptyHome } });
    expect(result.code).toBe(0);
    for (const option of ["--window", "--summarizer", "--json", "--report", "--dump-requests", "Examples:"]) {
      expect(result.stdout).toContain(option);
    }
  });

  it("replays the demo session when there is no Claude Code session", async () => {
    const result = await runCliProcess(["replay", "--window", "32K", "--json"], { env: { HOME: emptyHome } });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("replaying the demo session");
    const stats = JSON.parse(result.stdout);
    expect(stats.calls).toBeGreaterThan(100);
    expect(stats.overflows).toBe(0);
    expect(stats.violations).toEqual([]);
    expect(stats.compactions).toBeGreaterThan(0);
  });

  it("replays the demo with --demo even where a Claude Code session exists, and refuses --demo with a SESSION", async () => {
    const home = join(scratch, "home-for-demo");
    mkdirSync(join(home, ".claude", "projects", "-work-app"), { recursive: true });
    copyFileSync(claudeSession, join(home, ".claude", "projects", "-work-app", "session.jsonl"));
    const result = await runCliProcess(["replay", "--demo", "--window", "32K", "--json"], {
      env: { HOME: home },
    });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("session.jsonl");
    const stats = JSON.parse(result.stdout);
    expect(stats.session.format).toBe("unforget");
    expect(stats.calls).toBeGreaterThan(100);
    const both = await runCliProcess(["replay", "--demo", claudeSession], { env: { HOME: home } });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/^unforget: --demo replays the demo session, so it takes no SESSION/);
  });

  it("exits 3 when requests go over the window, and says so apart from the invariants", async () => {
    // The user's own message is larger than the window: it is never dropped, so the request cannot fit.
    const path = join(scratch, "too-large-for-8k.jsonl");
    const log = Array.from({ length: 2_500 }, (_, index) => `line ${index}: the build failed here`);
    writeFileSync(
      path,
      [
        userLine("Why does the build fail?", 1),
        assistantLine("Paste the log.", 2),
        userLine(`Here it is:\n${log.join("\n")}`, 3),
        assistantLine("Line 0.", 4),
      ].join("\n"),
    );
    const result = await runCliProcess(["replay", path, "--window", "8K"], { env: { HOME: emptyHome } });
    expect(result.code, result.stderr).toBe(3);
    expect(result.stdout).toMatch(/overflows\s+│\s+[1-9]/);
    expect(result.stdout).toMatch(/invariant violations\s+│\s+none/);
    expect(result.stderr).toMatch(/^unforget: \d+ of \d+ requests? (was|were) over the 8K-token window/m);
  });

  it("replays the newest Claude Code session under $HOME/.claude/projects", async () => {
    const home = join(scratch, "home-with-sessions");
    const project = join(home, ".claude", "projects", "-work-app");
    mkdirSync(join(project, "older-session", "subagents"), { recursive: true });
    copyFileSync(claudeSession, join(project, "older-session.jsonl"));
    copyFileSync(claudeSession, join(project, "newest-session.jsonl"));
    // A subagent's file is newer still, but it is never the session to replay.
    copyFileSync(claudeSession, join(project, "older-session", "subagents", "agent-1.jsonl"));
    utimesSync(join(project, "older-session.jsonl"), new Date("2026-01-01"), new Date("2026-01-01"));
    utimesSync(join(project, "newest-session.jsonl"), new Date("2026-01-02"), new Date("2026-01-02"));
    const result = await runCliProcess(["replay", "--json"], { env: { HOME: home } });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(join(project, "newest-session.jsonl"));
    expect(JSON.parse(result.stdout).session.format).toBe("claude-code");
  });

  it("keeps subagent (sidechain) messages out of the main context", async () => {
    const path = join(scratch, "with-subagent.jsonl");
    writeFileSync(
      path,
      [
        userLine("Fix the failing test.", 1),
        assistantLine("Looking into it.", 2),
        sessionLine(
          { type: "user", isSidechain: true, message: { role: "user", content: "SUBAGENT-ONLY prompt" } },
          3,
        ),
        sessionLine(
          {
            type: "assistant",
            isSidechain: true,
            message: { role: "assistant", content: [{ type: "text", text: "SUBAGENT-ONLY reply" }] },
          },
          4,
        ),
        userLine("Thanks, go on.", 5),
        assistantLine("Fixed.", 6),
      ].join("\n"),
    );
    const folder = join(scratch, "sidechain-dump");
    const result = await runCliProcess(["replay", path, "--json", "--dump-requests", folder], {
      env: { HOME: emptyHome },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).calls).toBe(2);
    const bodies = readdirSorted(folder).map((file) => readFileSync(join(folder, file), "utf8"));
    expect(bodies).toHaveLength(2);
    expect(bodies.join("\n")).toContain("Thanks, go on.");
    expect(bodies.join("\n")).not.toContain("SUBAGENT-ONLY");
  });

  it("prints the table on stdout and progress as plain lines on stderr when not on a terminal", async () => {
    const result = await runCliProcess(["replay", claudeSession, "--window", "16K"], {
      env: { HOME: emptyHome },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/model calls\s+│\s+\d+/);
    expect(result.stdout).toMatch(/peak tokens \/ window/);
    expect(result.stdout).toMatch(/invariant violations\s+│\s+none/);
    expect(result.stderr).toMatch(/replayed \d+\/\d+ calls \(100%\)/);
  });

  it("refuses a missing file", async () => {
    const result = await runCliProcess(["replay", join(scratch, "nope.jsonl")], { env: { HOME: emptyHome } });
    expectCleanFailure(result, /does not exist/);
  });

  it("refuses an empty file", async () => {
    const path = join(scratch, "empty.jsonl");
    writeFileSync(path, "");
    const result = await runCliProcess(["replay", path], { env: { HOME: emptyHome } });
    expectCleanFailure(result, /is empty/);
  });

  it("refuses a binary file and leaves it untouched", async () => {
    const path = join(scratch, "image.bin");
    writeFileSync(path, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0xff, 0x00]));
    const before = fingerprint(path);
    const result = await runCliProcess(["replay", path], { env: { HOME: emptyHome } });
    expectCleanFailure(result, /binary data/);
    expect(fingerprint(path)).toBe(before);
  });

  it("refuses a 1 GB file before reading it", async () => {
    const path = join(scratch, "huge.jsonl");
    const handle = openSync(path, "w");
    ftruncateSync(handle, 1024 ** 3);
    closeSync(handle);
    const result = await runCliProcess(["replay", path], { env: { HOME: emptyHome } });
    expectCleanFailure(result, /1\.0 GiB, more than the 256(\.0)? MiB/);
  });

  it("names the line of a defect it worked around, and the column of a JSON error in it", async () => {
    const lines = readFileSync(claudeSession, "utf8").trimEnd().split("\n");
    const path = join(scratch, "broken-line.jsonl");
    writeFileSync(
      path,
      [...lines.slice(0, 3), '{"type": "user", "message": {', ...lines.slice(3)].join("\n"),
    );
    const result = await runCliProcess(["replay", path, "--json"], { env: { HOME: emptyHome } });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      "First: line 4: the line is not valid JSON (Expected property name or '}' at column 30); it was skipped.",
    );
  });

  it("replays what is readable of a file whose last line was cut off, without writing to it", async () => {
    const path = join(scratch, "truncated.jsonl");
    const text = readFileSync(claudeSession, "utf8").trimEnd();
    writeFileSync(path, text.slice(0, text.length - 40));
    chmodSync(path, 0o444);
    const before = fingerprint(path);
    const result = await runCliProcess(["replay", path, "--json"], { env: { HOME: emptyHome } });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/worked around 1 defect/);
    expect(JSON.parse(result.stdout).calls).toBeGreaterThan(0);
    expect(fingerprint(path)).toBe(before);
  });

  it("names the formats it tried for a file in none of them", async () => {
    const path = join(scratch, "notes.txt");
    writeFileSync(path, "Just some notes, not a session.\n");
    const result = await runCliProcess(["replay", path], { env: { HOME: emptyHome } });
    expectCleanFailure(result, /not a session in any format/);
    for (const format of ["claude-code", "swe-agent", "mini-swe-agent", "openhands"])
      expect(result.stderr).toContain(format);
  });

  it("refuses a window it cannot use, with exit code 2", async () => {
    const result = await runCliProcess(["replay", claudeSession, "--window", "lots"], {
      env: { HOME: emptyHome },
    });
    expectCleanFailure(result, /16000, 16K or 1M/);
    expect(result.code).toBe(2);
  });

  it("refuses a cache lifetime the API does not have, with exit code 2", async () => {
    const result = await runCliProcess(["replay", claudeSession, "--cache-ttl", "2h"], {
      env: { HOME: emptyHome },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^unforget: --cache-ttl 2h: use one of 5m, 1h\.\n/);
    expect(result.stdout).toBe("");
  });

  it("refuses an unknown option with exit code 2 and says where help is", async () => {
    const result = await runCliProcess(["replay", claudeSession, "--windw", "16K"], {
      env: { HOME: emptyHome },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^unforget: Unknown option '--windw'/);
    expect(result.stderr).toContain("--help");
    expect(result.stdout).toBe("");
  });

  it("says what is wrong with an agent option as the app's other errors do, exit code 2", async () => {
    const turns = await runCliProcess(["-p", "hi", "--max-turns", "x"], { env: { HOME: emptyHome } });
    expect(turns.code).toBe(2);
    expect(turns.stderr).toBe(
      "unforget: --max-turns x: give a whole number of at least 1.\n(add --help for usage)\n",
    );
    const format = await runCliProcess(["-p", "hi", "--output-format", "xml"], { env: { HOME: emptyHome } });
    expect(format.stderr).toMatch(/^unforget: --output-format xml: use one of text, json, stream-json\.\n/);
  });

  it("refuses a dump folder that is not empty", async () => {
    const folder = join(scratch, "used-dump");
    mkdirSync(folder);
    writeFileSync(join(folder, "000001.json"), "{}");
    const result = await runCliProcess(["replay", claudeSession, "--dump-requests", folder], {
      env: { HOME: emptyHome },
    });
    expectCleanFailure(result, /is not empty/);
  });

  it("says what to configure for --summarizer model when no provider is set", async () => {
    const result = await runCliProcess(["replay", claudeSession, "--summarizer", "model"], {
      env: { HOME: emptyHome },
    });
    expectCleanFailure(result, /UNFORGET_PROVIDER/);
  });
});

describe("determinism", () => {
  it("gives byte-identical JSON, dumps and report for the same input", async () => {
    const outputs: string[] = [];
    for (const run of ["first", "second"]) {
      const folder = join(scratch, `determinism-${run}`);
      const result = await runCliProcess(
        [
          "replay",
          "--window",
          "32K",
          "--json",
          "--report",
          join(scratch, `${run}.html`),
          "--dump-requests",
          folder,
        ],
        { env: { HOME: emptyHome } },
      );
      expect(result.code).toBe(0);
      const files = readdirSorted(folder);
      outputs.push(
        [
          result.stdout,
          readFileSync(join(scratch, `${run}.html`), "utf8"),
          ...files.map((file) => `${file}\n${readFileSync(join(folder, file), "utf8")}`),
        ].join("\n"),
      );
    }
    expect(outputs[0]!.length).toBeGreaterThan(100_000);
    expect(outputs[1]).toBe(outputs[0]);
  });
});

function readdirSorted(folder: string): string[] {
  return readdirSync(folder).sort();
}
