import { createHash } from "node:crypto";
import { mkdir, mkdtemp, open, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigurationError, createMessage } from "@unforget/core";
import { sampleCorpus } from "@unforget/testing/corpus";
import { TranscriptWriter } from "@unforget/transcript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeFormatRecognition } from "../__fixtures__/corpus-checks.ts";
import { ImportError, SessionFileError, UnrecognizedSessionError } from "../shared/session-errors.ts";
import { importSessionFile } from "./import-session-file.ts";
import { importSessionText } from "./import-session-text.ts";

const jsonl = (lines: unknown[]) => `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "unforget-import-file-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
const file = async (name: string, content: string | Uint8Array) => {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
};
const failure = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ImportError);
  return error as ImportError;
};
const claudeCodeLines = [
  {
    type: "user",
    uuid: "u1",
    parentUuid: null,
    sessionId: "s1",
    cwd: "/repo",
    timestamp: "2025-05-01T10:00:00Z",
    message: { role: "user", content: "List the files" },
  },
  {
    type: "assistant",
    uuid: "a1",
    parentUuid: "u1",
    timestamp: "2025-05-01T10:00:02Z",
    message: {
      id: "r1",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } }],
    },
  },
  {
    type: "user",
    uuid: "r1",
    parentUuid: "a1",
    timestamp: "2025-05-01T10:00:03Z",
    message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "a.ts" }] },
  },
];

describeFormatRecognition(sampleCorpus());

describe("importSessionFile recognises every format by content", () => {
  it("an Unforget transcript, whatever its file name, and text given directly", async () => {
    const path = join(dir, "notes.txt");
    const writer = await TranscriptWriter.open(path, { sessionId: "u-1" });
    await writer.appendMessage(createMessage("user", "hi"));
    await writer.appendMessage(createMessage("assistant", "hello"));
    await writer.close();
    const imported = await importSessionFile(path);
    expect(imported).toMatchObject({ format: "unforget", sessionId: "u-1", subagents: [], instances: [] });
    expect(importSessionText(await readFile(path, "utf8")).format).toBe("unforget");
    expect(importSessionText(jsonl(claudeCodeLines))).toMatchObject({
      format: "claude-code",
      sessionId: "s1",
    });
  });

  it("a Claude Code session with its subagents, from the session file or its folder", async () => {
    const project = join(dir, "project");
    await mkdir(join(project, "s1", "subagents"), { recursive: true });
    const main = jsonl([
      claudeCodeLines[0],
      {
        type: "assistant",
        uuid: "a1",
        parentUuid: "u1",
        message: {
          id: "r1",
          role: "assistant",
          content: [{ type: "tool_use", id: "task-1", name: "Task", input: { prompt: "Count the tests" } }],
        },
      },
      {
        type: "user",
        uuid: "r1",
        parentUuid: "a1",
        message: { role: "user", content: [{ type: "tool_result", tool_use_id: "task-1", content: "40" }] },
        toolUseResult: { agentId: "abc" },
      },
    ]);
    await writeFile(join(project, "s1.jsonl"), main);
    await writeFile(
      join(project, "s1", "subagents", "agent-abc.jsonl"),
      jsonl([
        {
          type: "user",
          uuid: "x1",
          parentUuid: null,
          isSidechain: true,
          message: { role: "user", content: "Count the tests" },
        },
        {
          type: "assistant",
          uuid: "x2",
          parentUuid: "x1",
          isSidechain: true,
          message: { id: "rx", role: "assistant", content: "40" },
        },
      ]),
    );
    for (const path of [join(project, "s1.jsonl"), join(project, "s1"), `${join(project, "s1")}/`]) {
      const imported = await importSessionFile(path);
      expect(imported).toMatchObject({
        format: "claude-code",
        path: join(project, "s1.jsonl"),
        sessionId: "s1",
      });
      expect(imported.subagents.map((subagent) => [subagent.agentId, subagent.parentToolUseId])).toEqual([
        ["abc", "task-1"],
      ]);
    }
  });

  it("imports as the format it is told, and that importer says what does not fit", async () => {
    const path = await file(
      "forced.json",
      JSON.stringify({ history: [{ role: "user", content: "Fix it" }] }),
    );
    expect((await importSessionFile(path, { format: "swe-agent" })).format).toBe("swe-agent");
    const error = await failure(importSessionFile(path, { format: "mini-swe-agent" }));
    expect(error.message).toMatch(/mini-swe-agent trajectory/);
  });
});

describe("importSessionFile refuses what it cannot read with a typed error that says why", () => {
  it("lists every format it tried, and why each did not fit", async () => {
    const path = await file("package.json", JSON.stringify({ name: "x", version: "1.0.0" }));
    const error = await failure(importSessionFile(path));
    expect(error).toBeInstanceOf(UnrecognizedSessionError);
    const { attempts } = error as UnrecognizedSessionError;
    expect(attempts.map((attempt) => attempt.format)).toEqual([
      "claude-code",
      "unforget",
      "swe-agent",
      "mini-swe-agent",
      "openhands",
      "openhands-evaluation",
    ]);
    for (const attempt of attempts) expect(attempt.reason).toContain("keys name, version");
    expect(error.message).toContain(path);
    expect(error.message).toContain("- swe-agent: expects a JSON object with a `history`");
    const prose = await failure(importSessionFile(await file("prose.md", "# Notes\n\nNot a session.\n")));
    expect((prose as UnrecognizedSessionError).attempts[0]?.reason).toContain('line 1 starts "# Notes"');
  });

  it("a missing path, a folder that is not a session, an empty file and a binary file", async () => {
    const missing = await failure(importSessionFile(join(dir, "nope.jsonl")));
    expect(missing).toMatchObject({ kind: "not_found" });
    expect(missing).toBeInstanceOf(SessionFileError);
    await mkdir(join(dir, "just-a-folder"));
    expect(await failure(importSessionFile(join(dir, "just-a-folder")))).toMatchObject({
      kind: "not_a_file",
    });
    expect(await failure(importSessionFile(await file("empty.jsonl", "")))).toMatchObject({ kind: "empty" });
    expect(await failure(importSessionFile(await file("blank.jsonl", "\n \n\t\n")))).toMatchObject({
      kind: "empty",
    });
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]);
    const binary = await failure(importSessionFile(await file("image.jsonl", png)));
    expect(binary).toMatchObject({ kind: "binary" });
    expect(binary.message).toMatch(/not UTF-8 text/);
    const utf16 = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(JSON.stringify(claudeCodeLines[0]), "utf16le"),
    ]);
    expect((await failure(importSessionFile(await file("utf16.jsonl", utf16)))).message).toMatch(/UTF-16/);
  });

  it("a 1 GiB file is refused before it is read; maxBytes bounds it and is itself checked", async () => {
    const huge = join(dir, "huge.jsonl");
    await writeFile(huge, "");
    await truncate(huge, 1024 ** 3); // sparse: no gigabyte is written to disk
    const error = await failure(importSessionFile(huge));
    expect(error).toMatchObject({ kind: "too_large" });
    expect(error.message).toMatch(/1\.0 GiB, more than the 256\.0 MiB .*maxBytes/);
    const small = await file("small.jsonl", jsonl(claudeCodeLines));
    expect(await failure(importSessionFile(small, { maxBytes: 100 }))).toMatchObject({ kind: "too_large" });
    await expect(importSessionFile(small, { maxBytes: 2 ** 40 })).rejects.toBeInstanceOf(ConfigurationError);
    await expect(importSessionFile(small, { maxBytes: -1 })).rejects.toThrow(/maxBytes/);
  });
});

describe("importSessionFile imports what is readable and reports the rest", () => {
  it("a JSONL session whose last line was cut off: every whole line is imported, the cut one reported", async () => {
    const text = jsonl(claudeCodeLines);
    const cut = text.slice(0, text.length - 40);
    const imported = await importSessionFile(await file("cut.jsonl", cut));
    expect(imported.format).toBe("claude-code");
    expect(imported.messages.map((message) => message.id)).toEqual(["u1", "a1", "a1-results"]);
    expect(imported.report.problems).toEqual([
      expect.objectContaining({ kind: "torn_line", location: { line: 3 } }),
    ]);

    const path = join(dir, "transcript.jsonl");
    const writer = await TranscriptWriter.open(path);
    await writer.appendMessage(createMessage("user", "hi"));
    await writer.close();
    const transcript = await readFile(path, "utf8");
    const torn = await importSessionFile(
      await file("torn-transcript.jsonl", `${transcript}{"v":1,"type":"mess`),
    );
    expect(torn.format).toBe("unforget");
    expect(torn.report.problems.map((problem) => problem.kind)).toEqual(["torn_line"]);

    const evaluation = jsonl([
      { instance_id: "i1", history: [{ id: 0, source: "user", action: "message", args: { content: "go" } }] },
      {
        instance_id: "i2",
        history: [{ id: 0, source: "user", action: "message", args: { content: "again" } }],
      },
    ]);
    const cutEvaluation = await importSessionFile(await file("eval.jsonl", evaluation.slice(0, -30)));
    expect(cutEvaluation.format).toBe("openhands-evaluation");
    expect(cutEvaluation.instances.map((instance) => instance.instanceId)).toEqual(["i1"]);
    expect(cutEvaluation.report.problems).toEqual([
      expect.objectContaining({ kind: "torn_line", location: { line: 2 } }),
    ]);
  });

  it("a JSON document cut off is not guessed at: the error says it ends early", async () => {
    const trajectory = JSON.stringify(
      {
        history: [
          { role: "user", content: "Fix it" },
          { role: "assistant", content: "ok" },
        ],
      },
      null,
      2,
    );
    const error = await failure(importSessionFile(await file("cut.traj", trajectory.slice(0, 60))));
    expect(error).toBeInstanceOf(UnrecognizedSessionError);
    expect(error.message).toMatch(/ends early .*cut off/);
  });

  it("a document cut anywhere says it ends early, on every Node: the cut is found from the text, not the parser's wording", () => {
    const trajectory = JSON.stringify(
      {
        history: [
          { role: "user", content: 'Fix "it" \\ now \u00e9 \ud83d\ude00' },
          { role: "assistant", content: "ok", tokens: -12.5e-3, done: true, extra: null, list: [false] },
        ],
      },
      null,
      2,
    );
    const endsEarly = (text: string) => {
      try {
        importSessionText(text);
      } catch (error) {
        return error instanceof UnrecognizedSessionError && /ends early .*cut off/.test(error.message);
      }
      return false;
    };
    const misread = [];
    // Every cut inside a value, a key, an escape, a number, a literal or between tokens.
    for (let end = 1; end < trajectory.length; end++) {
      if (!endsEarly(trajectory.slice(0, end))) misread.push(trajectory.slice(Math.max(0, end - 12), end));
    }
    expect(misread).toEqual([]);
    // Whole documents that are wrong are not called cut off; a literal cut short and deep nesting cut are.
    const cases: Array<[string, boolean]> = [
      ['{"history": bad}', false],
      ['{"history": [1, 2,]}', false],
      ['{"history": NaN}', false],
      ['{"history": []} and more', false],
      ['{"history" []}', false],
      ['{"history": "a raw\nnewline"}', false],
      ['{"history": [1] /* a comment */}', false],
      ['{"history": 01}', false],
      ['{"history": "\\x"}', false],
      ['{"history": tru', true],
      ['{"history": [-', true],
      ['{"history": [1e+', true],
      [`{"history": ${"[".repeat(100_000)}`, true],
    ];
    for (const [text, cut] of cases)
      expect([text.slice(0, 40), endsEarly(text)]).toEqual([text.slice(0, 40), cut]);
  });

  it("never writes to the source: the folder and every file are byte-identical afterwards", async () => {
    const source = join(dir, "readonly");
    await mkdir(source);
    // A transcript with an invalid line: core's readTranscript would quarantine it in a .bad file.
    await writeFile(
      join(source, "t.jsonl"),
      `not json\n${JSON.stringify({ v: 1, type: "message", id: "m", timestamp: "2025-01-01T00:00:00Z", message: { id: "m", role: "user", content: "hi" } })}\n`,
    );
    await writeFile(join(source, "c.jsonl"), jsonl(claudeCodeLines).slice(0, -10));
    const snapshot = async () => {
      const names = (await readdir(source)).sort();
      return Promise.all(
        names.map(async (name) => {
          const path = join(source, name);
          const { mtimeMs, size } = await stat(path);
          return {
            name,
            mtimeMs,
            size,
            hash: createHash("sha256")
              .update(await readFile(path))
              .digest("hex"),
          };
        }),
      );
    };
    const before = await snapshot();
    for (const name of ["t.jsonl", "c.jsonl"]) await importSessionFile(join(source, name));
    expect(await snapshot()).toEqual(before);
  });

  it("a session still being written is read up to the size it had when opened", async () => {
    const path = await file("live.jsonl", jsonl(claudeCodeLines.slice(0, 2)));
    const handle = await open(path, "a");
    const importing = importSessionFile(path);
    await handle.write(JSON.stringify(claudeCodeLines[2]));
    await handle.close();
    const imported = await importing;
    expect(imported.messages.length).toBeGreaterThanOrEqual(2);
    expect(imported.report.remainingViolations).toEqual([]);
  });
});
