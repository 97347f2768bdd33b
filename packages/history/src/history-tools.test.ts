import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage, type Tool, type ToolContext } from "@unforget/core";
import { TranscriptWriter } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { createHistoryTools } from "./history-tools.ts";
import { openHistory } from "./session-history.ts";

const context = {
  signal: new AbortController().signal,
  sessionId: "s1",
  toolUseId: "t",
  cwd: "/",
  sessionState: new Map(),
} as ToolContext;

async function tools(): Promise<{ search: Tool; read: Tool; output: string }> {
  const path = join(await mkdtemp(join(tmpdir(), "unforget-history-tools-")), "s1.jsonl");
  const output = `${"x".repeat(30)} the build id is HX-5521\n${"y".repeat(30)}`;
  const writer = await TranscriptWriter.open(path, { sessionId: "s1" });
  await writer.appendMessage(createMessage("user", "build it"));
  await writer.appendMessage(
    createMessage("assistant", [
      { type: "tool_use", id: "toolu_b1", name: "Bash", input: { command: "make" } },
    ]),
  );
  await writer.appendMessage(
    createMessage("user", [{ type: "tool_result", tool_use_id: "toolu_b1", content: output }]),
  );
  await writer.close();
  const history = await openHistory({ transcriptPath: path });
  const [search, read] = createHistoryTools(async () => history);
  return { search: search!, read: read!, output };
}

describe("createHistoryTools", () => {
  it("lists hits with their ids and reads one back in pages", async () => {
    const { search, read, output } = await tools();
    const found = await search.execute({ query: "HX-5521" }, context);
    expect(found.isError).toBe(false);
    expect(found.content).toMatch(/id=toolu_b1 turn 1 Bash/);
    const first = await read.execute({ id: "toolu_b1", limit: 40 }, context);
    const [header, ...rest] = String(first.content).split("\n");
    expect(header).toMatch(/Bash\(\{"command":"make"\}\).*of 85.*offset 40/);
    const second = await read.execute({ id: "toolu_b1", offset: 40 }, context);
    expect(rest.join("\n") + String(second.content).split("\n").slice(1).join("\n")).toBe(output);
  });

  it("answers an unknown id, a bad offset and an empty query with an error result", async () => {
    const { search, read } = await tools();
    expect(await read.execute({ id: "toolu_zz" }, context)).toMatchObject({ isError: true });
    const range = await read.execute({ id: "toolu_b1", offset: 500 }, context);
    expect(range).toMatchObject({ isError: true });
    expect(range.content).toMatch(/85/);
    expect(await search.execute({ query: " " }, context)).toMatchObject({ isError: true });
    expect((await search.execute({ query: "nothingmatches" }, context)).isError).toBe(false);
  });
});
