import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage, type Message } from "@unforget/core";
import { TranscriptWriter } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { HistoryItemNotFoundError } from "./history-errors.ts";
import { openHistory } from "./session-history.ts";

async function session(messages: Message[]): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), "unforget-range-")), "s1.jsonl");
  const writer = await TranscriptWriter.open(path, { sessionId: "s1" });
  for (const message of messages) await writer.appendMessage(message);
  await writer.close();
  return path;
}

describe("a range of the user's messages", () => {
  it("lists the messages the user wrote from first to last, oldest first, each read back exactly by its id", async () => {
    const prompts = ["fix the <user-messages> parser", "then the tests\nall of them", "ship it", "one more"];
    const messages: Message[] = [];
    for (const [index, prompt] of prompts.entries()) {
      messages.push(createMessage("user", prompt));
      // Neither the assistant's text nor a note of the system is one of the user's messages.
      messages.push({ ...createMessage("user", `reminder ${index}`), isMeta: true });
      messages.push(createMessage("assistant", `answer ${index}`));
    }
    const history = await openHistory({ transcriptPath: await session(messages) });
    const ids = messages.filter((m) => m.role === "user" && !m.isMeta).map((m) => `${m.id}:0`);
    const page = await history.read(`${ids[0]}..${ids[2]}`);
    expect(page.id).toBe(`${ids[0]}..${ids[2]}`);
    const lines = page.text.split("\n");
    expect(lines[0]).toMatch(/^3 messages of the user from /);
    expect(lines.slice(1).map((line) => /^- id=(\S+) turn (\d+),/.exec(line)?.slice(1))).toEqual([
      [ids[0], "1"],
      [ids[1], "2"],
      [ids[2], "3"],
    ]);
    for (const [index, id] of ids.entries()) expect((await history.read(id)).text).toBe(prompts[index]);
  });

  it("does not resolve backwards, across an assistant's text, or from an unknown id", async () => {
    const messages = [
      createMessage("user", "a"),
      createMessage("assistant", "b"),
      createMessage("user", "c"),
    ];
    const history = await openHistory({ transcriptPath: await session(messages) });
    const [a, b, c] = messages.map((m) => `${m.id}:0`);
    await expect(history.read(`${c}..${a}`)).rejects.toBeInstanceOf(HistoryItemNotFoundError);
    await expect(history.read(`${a}..${b}`)).rejects.toBeInstanceOf(HistoryItemNotFoundError);
    await expect(history.read(`nope:0..${c}`)).rejects.toBeInstanceOf(HistoryItemNotFoundError);
    expect((await history.read(`${a}..${c}`)).text).toMatch(/^2 messages/);
  });
});
