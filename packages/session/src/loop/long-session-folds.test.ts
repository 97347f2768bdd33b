import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createExtractiveSummarizer } from "@unforget/compact";
import { openHistory } from "@unforget/history";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createInstantProvider, inspectingTurns, keptInspectTool } from "../../bench/instant-provider.ts";
import { createAgentSession } from "./agent-session.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "unforget-folds-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A tool whose results compaction keeps: only summaries make room. */
const inspect = keptInspectTool((part) =>
  Array.from({ length: 80 }, (_, row) => `  row_${row}(${part}); // value ${row}`).join("\n"),
);

const FOLD = /<user-messages-folded count="(\d+)" first="([^"]+)" last="([^"]+)">\n([^\n]*)\n/;

describe("a long session of short prompts", () => {
  it("folds the oldest prompts into a range the history reads back byte-exact, and never overflows the window", async () => {
    const provider = createInstantProvider(inspectingTurns(1, () => "Looking."));
    const session = await createAgentSession({
      provider,
      model: "claude-sonnet-4-6",
      system: "You are a careful agent.",
      tools: [inspect],
      sessionsDir: dir,
      context: {
        limits: { contextWindow: 8_000, maxOutputTokens: 1_000 },
        summarizer: createExtractiveSummarizer(),
      },
    });
    const prompts: string[] = [];
    for (let turn = 0; turn < 300; turn++) {
      // Each a different shape, quotes and a tag included: what comes back must be the very text.
      prompts.push(`Step ${turn}: "go on" with <part ${turn}>${turn % 7 === 0 ? "\n  and check it" : ""}`);
      for await (const _event of session.send(prompts.at(-1)!)) {
        // Drained.
      }
    }
    await session.close();
    // The newest summary, as the transcript holds it.
    const summaries = (await readFile(session.transcriptPath, "utf8"))
      .split("\n")
      .filter((line) => line.includes('"type":"summary"'))
      .map((line) => JSON.parse(line) as { type: string; text?: string })
      .filter((entry) => entry.type === "summary");
    expect(summaries.length).toBeGreaterThan(20);
    const match = FOLD.exec(summaries.at(-1)?.text ?? "");
    expect(match, "the summary folds the oldest prompts").not.toBeNull();
    const [, count, first, last, pointer] = match!;
    // The pointer names the range the model gives history_read.
    expect(pointer).toContain(`history_read id "${first}..${last}"`);
    const history = await openHistory({ transcriptPath: session.transcriptPath });
    const listing = await history.read(`${first}..${last}`, { limit: 1_000_000 });
    const ids = [...listing.text.matchAll(/^- id=(\S+) /gm)].map((line) => line[1]!);
    expect(ids).toHaveLength(Number(count));
    expect(listing.text.split("\n")[0]).toMatch(new RegExp(`^${count} messages of the user`));
    // The oldest first, each one byte-exact.
    for (const [index, id] of ids.entries()) expect((await history.read(id)).text).toBe(prompts[index]);
  }, 60_000);
});
