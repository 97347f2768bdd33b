import { mkdir, mkdtemp, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage, type Message } from "@unforget/core";
import { TranscriptWriter } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import {
  HistoryItemNotFoundError,
  HistoryRangeError,
  HistorySessionNotFoundError,
} from "./history-errors.ts";
import { openHistory } from "./session-history.ts";

let calls = 0;
function toolCall(name: string, input: Record<string, unknown>, output: string, isError = false): Message[] {
  const id = `toolu_${++calls}`;
  return [
    createMessage("assistant", [{ type: "tool_use", id, name, input }]),
    createMessage("user", [
      { type: "tool_result", tool_use_id: id, content: output, ...(isError ? { is_error: true } : {}) },
    ]),
  ];
}

async function newSession(): Promise<{ dir: string; path: string }> {
  const dir = await mkdtemp(join(tmpdir(), "unforget-history-"));
  return { dir, path: join(dir, "s1.jsonl") };
}

async function write(path: string, messages: Message[], sessionId = "s1"): Promise<void> {
  const writer = await TranscriptWriter.open(path, { sessionId });
  for (const message of messages) await writer.appendMessage(message);
  await writer.close();
}

describe("openHistory", () => {
  it("finds a tool result by a word of it and reads it back byte-exact under the tool_use id", async () => {
    const { path } = await newSession();
    const output = 'line one\n  the vault code is ZEBRA-4471 \u{1F600}\ttabs\r\nand "quotes" \\ end';
    await write(path, [
      createMessage("user", "Read the config"),
      ...toolCall("Read", { file_path: "/repo/config.ini" }, "nothing here"),
      ...toolCall("Bash", { command: "cat secrets.txt" }, output),
      createMessage("assistant", "Done reading."),
    ]);
    const history = await openHistory({ transcriptPath: path });
    const [hit] = await history.search("ZEBRA-4471");
    expect(hit).toMatchObject({ id: "toolu_2", kind: "tool", tool: "Bash", turn: 1 });
    expect(hit!.excerpt).toContain("ZEBRA-4471");
    const page = await history.read(hit!.id);
    expect(page.text).toBe(output);
    expect(page.input).toEqual({ command: "cat secrets.txt" });
    expect(page.nextOffset).toBeUndefined();
  });

  it("reads an item in pages that join to the original, never splitting a surrogate pair", async () => {
    const { path } = await newSession();
    const output = `${"ab\u{1F600}".repeat(50)}tail`;
    await write(path, [createMessage("user", "go"), ...toolCall("Bash", { command: "x" }, output)]);
    const history = await openHistory({ transcriptPath: path });
    const id = `toolu_${calls}`;
    let text = "";
    let offset: number | undefined = 0;
    let pages = 0;
    while (offset !== undefined) {
      const page = await history.read(id, { offset, limit: 7 });
      // Each page goes out as UTF-8 on its own: half a surrogate pair would arrive as U+FFFD.
      expect(Buffer.from(page.text, "utf8").toString("utf8")).toBe(page.text);
      text += page.text;
      offset = page.nextOffset;
      pages++;
    }
    expect(text).toBe(output);
    expect(pages).toBeGreaterThan(20);
  });

  it("indexes only what was appended since the last search, and keeps the ids across a resume", async () => {
    const { path } = await newSession();
    await write(path, [
      createMessage("user", "first"),
      ...toolCall("Grep", { pattern: "alpha" }, "alpha found"),
    ]);
    const history = await openHistory({ transcriptPath: path });
    const before = history.size;
    // The session is resumed: a new writer appends to the same file.
    await write(path, [
      createMessage("user", "second"),
      ...toolCall("Grep", { pattern: "omega" }, "omega found"),
    ]);
    const [hit] = await history.search("omega");
    expect(hit).toMatchObject({ kind: "tool", turn: 2 });
    expect(history.size).toBe(before + 2);
    const reopened = await openHistory({ transcriptPath: path });
    expect((await reopened.search("omega"))[0]?.id).toBe(hit!.id);
    expect((await reopened.search("alpha"))[0]?.id).toBe((await history.search("alpha"))[0]?.id);
  });

  it("filters by tool, path, turns and kind", async () => {
    const { path } = await newSession();
    await write(path, [
      createMessage("user", "one"),
      ...toolCall("Read", { file_path: "src/a.ts" }, "shared word apple"),
      createMessage("user", "two"),
      ...toolCall("Bash", { command: "grep apple src/b.ts" }, "shared word apple again"),
      createMessage("assistant", "apple is everywhere"),
    ]);
    const history = await openHistory({ transcriptPath: path });
    expect((await history.search("apple")).length).toBe(3);
    expect((await history.search("apple", { tool: "read" })).map((hit) => hit.tool)).toEqual(["Read"]);
    expect((await history.search("apple", { path: "src/b.ts" })).map((hit) => hit.tool)).toEqual(["Bash"]);
    expect((await history.search("apple", { turns: { from: 2 } })).map((hit) => hit.turn)).toEqual([2, 2]);
    expect((await history.search("apple", { kind: "assistant" })).map((hit) => hit.kind)).toEqual([
      "assistant",
    ]);
    expect((await history.search("apple", { limit: 1 })).length).toBe(1);
  });

  it("indexes compaction summaries and sub-agents' transcripts, but never the history tools' own results", async () => {
    const { dir, path } = await newSession();
    const agentCall = toolCall("Agent", { prompt: "look" }, "the agent reported back");
    const restored = toolCall("history_read", { id: "toolu_1" }, "restored quokka text");
    await write(path, [createMessage("user", "one"), createMessage("user", "two"), agentCall[0]!]);
    const writer = await TranscriptWriter.open(path, { sessionId: "s1" });
    await writer.append({
      type: "summary",
      kind: "compact",
      text: "Summary: the user wants the narwhal feature.",
      id: "summary_1",
    });
    await writer.appendMessage(agentCall[1]!);
    for (const message of restored) await writer.appendMessage(message);
    await writer.close();
    const agentPath = join(dir, "s1", "subagents", "agent-1.jsonl");
    await mkdir(join(dir, "s1", "subagents"), { recursive: true });
    const agentWriter = await TranscriptWriter.open(agentPath, { sessionId: "agent-1" });
    const parentToolUseId = (agentCall[0]!.content[0] as { id: string }).id;
    await agentWriter.append({ type: "metadata", data: { sidechain: true, parentToolUseId } });
    await agentWriter.appendMessage(createMessage("user", "look"));
    for (const message of toolCall("Read", { file_path: "x" }, "the platypus is here")) {
      await agentWriter.appendMessage(message);
    }
    await agentWriter.close();

    const history = await openHistory({ transcriptPath: path });
    expect((await history.search("narwhal"))[0]).toMatchObject({ id: "summary_1", kind: "summary", turn: 2 });
    expect((await history.read("summary_1")).text).toBe("Summary: the user wants the narwhal feature.");
    expect((await history.search("platypus"))[0]).toMatchObject({ agent: "agent-1", tool: "Read", turn: 2 });
    expect(await history.search("quokka")).toEqual([]);
  });

  it("says what to do for an unknown id, a bad range and a missing session", async () => {
    const { dir, path } = await newSession();
    await write(path, [createMessage("user", "hello there")]);
    const history = await openHistory({ transcriptPath: path });
    const [hit] = await history.search("hello");
    await expect(history.read("toolu_nope")).rejects.toBeInstanceOf(HistoryItemNotFoundError);
    await expect(history.read(hit!.id, { offset: 99 })).rejects.toBeInstanceOf(HistoryRangeError);
    await expect(history.read(hit!.id, { offset: 1.5 })).rejects.toBeInstanceOf(HistoryRangeError);
    await expect(history.read(hit!.id, { limit: 0 })).rejects.toBeInstanceOf(HistoryRangeError);
    expect((await history.read(hit!.id, { offset: 11 })).text).toBe("");
    await expect(openHistory({ transcriptPath: join(dir, "nope.jsonl") })).rejects.toBeInstanceOf(
      HistorySessionNotFoundError,
    );
  });

  it("reads text a writer stored as a string", async () => {
    const { path } = await newSession();
    const line = {
      v: 1,
      type: "message",
      id: "m1",
      timestamp: new Date(0).toISOString(),
      message: { id: "m1", role: "user", content: "plain string kiwi", timestamp: new Date(0).toISOString() },
    };
    await writeFile(path, `${JSON.stringify(line)}\n`);
    const history = await openHistory({ transcriptPath: path });
    const [hit] = await history.search("kiwi");
    expect((await history.read(hit!.id)).text).toBe("plain string kiwi");
  });
});

// Each test indexes six hundred items at least twice: seconds on an idle machine, far more beside other work.
describe("the saved index", { timeout: 120_000 }, () => {
  /** A session of `count` tool calls, each result holding one unique key. */
  function manyCalls(count: number, from = 0): Message[] {
    const messages: Message[] = [createMessage("user", `Check the keys from ${from}.`)];
    for (let n = from; n < from + count; n++)
      messages.push(
        ...toolCall("Bash", { command: `cat key${n}.txt` }, `alpha beta\nthe key is k${n}q\ngamma`),
      );
    return messages;
  }

  /** The same as `write`, without a sync per line: six hundred calls are written in a moment. */
  async function writeFast(path: string, messages: Message[]): Promise<void> {
    const writer = await TranscriptWriter.open(path, { sessionId: "s1", fsync: "never" });
    for (const message of messages) await writer.appendMessage(message);
    await writer.close();
  }

  it("is saved by an open that read many items, and the next open loads it and reads only what was appended", async () => {
    const { dir, path } = await newSession();
    await writeFast(path, manyCalls(600));
    const first = await openHistory({ transcriptPath: path });
    expect(first.opened).toEqual({ loaded: 0, read: 601 });
    const transcript = await readFile(path);
    expect((await stat(join(dir, "s1", "history-index.json"))).isFile()).toBe(true);
    await writeFast(path, manyCalls(3, 600));
    const second = await openHistory({ transcriptPath: path });
    expect(second.opened).toEqual({ loaded: 601, read: 4 });
    // Old and new items are found and read back as before.
    for (const key of [0, 299, 599, 601]) {
      const [hit] = await second.search(`k${key}q`, { limit: 3 });
      expect((await second.read(hit!.id)).text).toBe(`alpha beta\nthe key is k${key}q\ngamma`);
    }
    expect(second.size).toBe(605);
    expect((await readFile(path)).subarray(0, transcript.length)).toEqual(transcript);
  });

  it("is ignored when the transcript was replaced by another, even of the same length, or when it is broken", async () => {
    const { dir, path } = await newSession();
    await writeFast(path, manyCalls(600));
    await openHistory({ transcriptPath: path });
    // The same length, one key changed near the start: what was indexed is no longer what the file holds.
    const text = await readFile(path, "utf8");
    await writeFile(path, text.replace("k30q", "k99q"));
    const replaced = await openHistory({ transcriptPath: path });
    expect(replaced.opened.loaded).toBe(0);
    expect(await replaced.search("k30q")).toEqual([]);
    expect((await replaced.search("k99q", { limit: 3 })).map((hit) => hit.id)).toHaveLength(2);
    await writeFile(join(dir, "s1", "history-index.json"), "{ not json");
    const broken = await openHistory({ transcriptPath: path });
    expect(broken.opened).toEqual({ loaded: 0, read: 601 });
    expect((await broken.search("k10q"))[0]?.id).toBeDefined();
  });

  it("is neither read nor written with savedIndex: false, and a folder it cannot write into only costs the save", async () => {
    const { dir, path } = await newSession();
    await writeFast(path, manyCalls(600));
    await openHistory({ transcriptPath: path, savedIndex: false });
    await expect(stat(join(dir, "s1", "history-index.json"))).rejects.toMatchObject({ code: "ENOENT" });
    // A file where the session's folder should be: the save fails, the history works.
    await writeFile(join(dir, "s1"), "not a folder");
    const history = await openHistory({ transcriptPath: path });
    expect(history.opened.read).toBe(601);
    expect((await history.search("k5q"))[0]?.id).toBeDefined();
  });
});
