import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message } from "@unforget/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { conversationBuilder, filler } from "../__fixtures__/builders.ts";
import { resultText } from "../conversation/conversation.ts";
import { isClearedResult } from "../layers/clearable-outputs.ts";
import { microcompact } from "../layers/microcompact.ts";
import { type SaveOutput, withSavedOutputs } from "../layers/saved-outputs.ts";
import { createContextManager } from "../manager/context-manager.ts";
import type { ContextManagerOptions } from "../manager/context-manager-options.ts";
import { retentionLookup } from "./compactable-tools.ts";

const LIMITS = { contextWindow: 16_000, maxOutputTokens: 4_000 };

/**
 * The same scripted agent run for any tool name: 81 steps, one call each whose output is a record of ~600
 * tokens, a new request from the user every 20 steps. Returns the summaries written and the last projection.
 */
async function scriptedRun(tool: string, options: Partial<ContextManagerOptions> = {}) {
  const c = conversationBuilder();
  const manager = createContextManager({ model: "test", limits: LIMITS, clock: c.now, ...options });
  let projected: Message[] = [];
  for (let step = 0; step < 81; step++) {
    if (step % 20 === 0) c.user(`Request ${step / 20 + 1}: check the next twenty records.`);
    c.tool(tool, { id: `rec-${step}` }, `record rec-${step}\n${filler(600, step)}`);
    projected = (await manager.prepare(c.messages)).projected;
  }
  return { summaries: manager.status().compactions, projected };
}

const folds = (messages: readonly Message[]) =>
  messages.flatMap((message) =>
    message.content.flatMap((block) =>
      block.type === "text" && block.text.startsWith("[Earlier tool activity") ? [block.text] : [],
    ),
  );

const outputs = (messages: readonly Message[]) =>
  messages.flatMap((message) =>
    message.content.flatMap((block) => (block.type === "tool_result" ? [resultText(block)] : [])),
  );

describe("tool results of any tool", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "unforget-retention-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true, maxRetries: 5 });
  });

  it("take the same number of summaries with a custom tool name as with read", async () => {
    const read = await scriptedRun("read");
    // Declared reproducible (as a host's tool definition says it), no folder needed.
    const declared = await scriptedRun("get_record", { resultRetention: { get_record: "reproducible" } });
    expect(declared.summaries).toBe(read.summaries);
    // Not declared: saved to the session folder, then cleared like any other.
    const saved = await scriptedRun("get_record", { sessionDir: dir });
    expect(saved.summaries).toBe(read.summaries);
    const mcp = await scriptedRun("mcp__records__get", { sessionDir: join(dir, "mcp") });
    expect(mcp.summaries).toBe(read.summaries);
  });

  it("keep a result that is not reproducible when there is no folder to save it in", async () => {
    const read = await scriptedRun("read");
    const kept = await scriptedRun("get_record");
    expect(kept.summaries).toBeGreaterThan(read.summaries);
    expect(outputs(kept.projected).some(isClearedResult)).toBe(false);
    expect(folds(kept.projected)).toEqual([]);
    expect(folds(read.projected).length).toBeGreaterThan(0);
  });

  it("save a result before it is cleared, byte for byte, and point the record there", async () => {
    const { projected } = await scriptedRun("get_record", { sessionDir: dir });
    const cleared = outputs(projected).filter(isClearedResult);
    const pointers = [...cleared, ...folds(projected)]
      .join("\n")
      .match(/saved at (\S+?tool-results\/\S+?)(?=[\]\s]|$)/g);
    expect(pointers?.length).toBeGreaterThan(0);
    for (const pointer of pointers ?? []) {
      const path = pointer.slice("saved at ".length);
      const text = await readFile(path, "utf8");
      expect(text).toMatch(/^record rec-\d+\n/);
    }
  });

  it("are not written by a dry run (an estimate), which still counts them as cleared", async () => {
    const c = conversationBuilder().user("look up the records");
    for (let index = 0; index < 8; index++) c.tool("get_record", { id: index }, filler(200, index));
    c.assistant("done");
    const now = c.now() + 61 * 60_000;
    const pass = (saveOutput: SaveOutput | undefined) =>
      microcompact(c.messages, { now, ...(saveOutput ? { saveOutput } : {}) });
    const estimate = await withSavedOutputs({ sessionDir: dir, dryRun: true }, pass);
    expect(estimate.stats.cleared).toBe(3);
    await expect(readdir(join(dir, "tool-results"))).rejects.toThrow();
    const real = await withSavedOutputs({ sessionDir: dir }, pass);
    expect(real.stats).toMatchObject({ cleared: 3, saved: 3 });
    expect(await readdir(join(dir, "tool-results"))).toHaveLength(3);
  });

  it("stay when their file cannot be written", async () => {
    const c = conversationBuilder().user("look up the records");
    for (let index = 0; index < 8; index++) c.tool("get_record", { id: index }, filler(200, index));
    c.assistant("done");
    const now = c.now() + 61 * 60_000;
    // The session folder is a file: nothing can be written under it.
    const blocked = join(dir, "not-a-folder");
    await writeFile(blocked, "");
    const result = await withSavedOutputs({ sessionDir: blocked }, (saveOutput) =>
      microcompact(c.messages, { now, ...(saveOutput ? { saveOutput } : {}) }),
    );
    expect(result.edits).toEqual([]);
    expect(result.stats).toMatchObject({ saveFailed: 3 });
  });

  it("never clear or fold a result of a tool that is kept, even with a folder", async () => {
    const kept = await scriptedRun("memory", { sessionDir: dir, resultRetention: { memory: "keep" } });
    expect(outputs(kept.projected).some(isClearedResult)).toBe(false);
    expect(folds(kept.projected)).toEqual([]);
  });

  it("let a layer's compactableTools override what the tools declare", async () => {
    const c = conversationBuilder().user("look up the records");
    for (let index = 0; index < 8; index++) c.tool("get_record", { id: index }, filler(200, index));
    c.assistant("done");
    const later = c.now() + 61 * 60_000;
    expect(microcompact(c.messages, { now: later }).edits).toEqual([]);
    const listed = microcompact(c.messages, { now: later, compactableTools: ["get_record"] });
    expect(listed.stats.cleared).toBe(3);
    // Listing a tool makes the others not reproducible: a read is then kept without a folder.
    const reads = conversationBuilder().user("read");
    for (let index = 0; index < 8; index++)
      reads.tool("Read", { file_path: `f${index}` }, filler(200, index));
    reads.assistant("done");
    expect(microcompact(reads.messages, { now: later, compactableTools: ["get_record"] }).edits).toEqual([]);
    expect(
      microcompact(reads.messages, {
        now: later,
        retention: retentionLookup({ Read: "keep" }),
      }).edits,
    ).toEqual([]);
  });
});
