import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigurationError } from "@unforget/core";
import { afterEach, describe, expect, it } from "vitest";
import {
  CORPUS_DIR_ENV,
  CorpusMissingError,
  corpusDir,
  evaluationCorpus,
  findRepositoryRoot,
  listCorpusSessions,
  loadCorpusFile,
  sampleCorpus,
} from "./corpus.ts";

const saved = process.env[CORPUS_DIR_ENV];
afterEach(() => {
  if (saved === undefined) delete process.env[CORPUS_DIR_ENV];
  else process.env[CORPUS_DIR_ENV] = saved;
});

describe("corpus helpers", () => {
  it("resolves the corpus beside the repository root by default", () => {
    delete process.env[CORPUS_DIR_ENV];
    const root = findRepositoryRoot(import.meta.dirname);
    expect(root).toBeDefined();
    expect(corpusDir()).toBe(join(root!, "..", "shared", "corpus"));
  });

  it("uses UNFORGET_CORPUS_DIR, classifies files by folder and extension and skips licences", () => {
    const dir = mkdtempSync(join(tmpdir(), "unforget-corpus-"));
    try {
      for (const folder of ["claude-code/x", "sweagent/a/b", "mini-swe-agent", "openhands", "text"]) {
        mkdirSync(join(dir, folder), { recursive: true });
      }
      const files = [
        "claude-code/x/LICENSE",
        "claude-code/x/s.jsonl",
        "sweagent/a/b/run.traj",
        "mini-swe-agent/m.traj.json",
        "openhands/o.json",
        "openhands/eval.jsonl",
        "text/prose.txt",
        "README.md",
      ];
      for (const file of files) writeFileSync(join(dir, file), "{}");
      process.env[CORPUS_DIR_ENV] = dir;
      expect(corpusDir()).toBe(dir);
      expect(listCorpusSessions().map((session) => [session.relativePath, session.format])).toEqual([
        ["claude-code/x/s.jsonl", "claude-code"],
        ["mini-swe-agent/m.traj.json", "mini-swe-agent"],
        ["openhands/eval.jsonl", "openhands-evaluation"],
        ["openhands/o.json", "openhands"],
        ["sweagent/a/b/run.traj", "swe-agent"],
      ]);
      expect(loadCorpusFile("openhands/o.json")).toBe("{}");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("throws ConfigurationError naming the variable when the corpus folder is missing", () => {
    process.env[CORPUS_DIR_ENV] = join(tmpdir(), "no-such-unforget-corpus");
    expect(() => listCorpusSessions()).toThrow(ConfigurationError);
    expect(() => listCorpusSessions()).toThrow(CORPUS_DIR_ENV);
  });
});

describe("the evaluation corpus and the sample corpus", () => {
  it("evaluationCorpus fails, never skips, naming where it looked and the variable to set", () => {
    const missing = join(tmpdir(), "no-such-unforget-corpus");
    process.env[CORPUS_DIR_ENV] = missing;
    expect(() => evaluationCorpus()).toThrow(CorpusMissingError);
    const error = (() => {
      try {
        evaluationCorpus();
      } catch (caught) {
        return caught as CorpusMissingError;
      }
    })();
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error?.directory).toBe(missing);
    expect(error?.setting).toBe(CORPUS_DIR_ENV);
    expect(error?.message).toContain(missing);
    expect(error?.message).toContain(CORPUS_DIR_ENV);
  });

  it("evaluationCorpus fails on a folder without sessions and lists the sessions of one that has them", () => {
    const dir = mkdtempSync(join(tmpdir(), "unforget-corpus-"));
    try {
      process.env[CORPUS_DIR_ENV] = dir;
      expect(() => evaluationCorpus()).toThrow(CorpusMissingError);
      mkdirSync(join(dir, "sweagent"));
      writeFileSync(join(dir, "sweagent", "a.traj"), "{}");
      expect(evaluationCorpus()).toEqual({
        dir,
        sessions: [
          { path: join(dir, "sweagent", "a.traj"), relativePath: "sweagent/a.traj", format: "swe-agent" },
        ],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the sample corpus holds every format, texts and API fixtures, whatever UNFORGET_CORPUS_DIR says", () => {
    process.env[CORPUS_DIR_ENV] = join(tmpdir(), "no-such-unforget-corpus");
    const { dir, sessions } = sampleCorpus();
    expect(new Set(sessions.map((session) => session.format))).toEqual(
      new Set(["claude-code", "swe-agent", "mini-swe-agent", "openhands", "openhands-evaluation"]),
    );
    expect(readdirSync(join(dir, "text")).sort()).toEqual([
      "cjk",
      "code",
      "email",
      "json",
      "logs",
      "prose-en",
    ]);
    expect(loadCorpusFile("api-fixtures/anthropic-compaction.sample.json", dir)).toContain('"compaction"');
  });
});
