import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage, type Message } from "@unforget/core";
import { TranscriptWriter } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { openHistory } from "./session-history.ts";

// Someone searching for what they asked expects their own message first when a tool's output says the same.

async function sessionOf(messages: readonly Message[]): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), "unforget-history-user-")), "s1.jsonl");
  const writer = await TranscriptWriter.open(path, { sessionId: "s1" });
  for (const message of messages) await writer.appendMessage(message);
  await writer.close();
  return path;
}

describe("history_search's ranking", () => {
  it("puts the user's message before a tool output with the same words", async () => {
    const asked = "Fix the flaky retry test in the payment module";
    // The model read the to-do list first; the user then asked for its line in the same words.
    const path = await sessionOf([
      createMessage("user", "What is on the list?"),
      createMessage("assistant", [
        { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "TODO" } },
      ]),
      createMessage("user", [{ type: "tool_result", tool_use_id: "toolu_1", content: asked }]),
      createMessage("assistant", "One item."),
      createMessage("user", asked),
      createMessage("assistant", "On it."),
    ]);
    const history = await openHistory({ transcriptPath: path });
    const hits = await history.search("flaky retry payment");
    expect(hits.map((hit) => hit.kind).slice(0, 2)).toEqual(["user", "tool"]);
  });

  it("still puts a tool output that matches clearly better before a user message", async () => {
    // The words are all of the output, and three of the request's thirty: the output scores about 1.4 times higher.
    const path = await sessionOf([
      createMessage(
        "user",
        "Please look at the flaky retry test in payment when you have time, after the build and the docs and the release notes are done and reviewed by the team.",
      ),
      createMessage("assistant", [
        { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "npm test" } },
      ]),
      createMessage("user", [
        { type: "tool_result", tool_use_id: "toolu_1", content: "FAIL payment: flaky retry test timed out" },
      ]),
      createMessage("assistant", "One test failed."),
    ]);
    const history = await openHistory({ transcriptPath: path });
    const hits = await history.search("flaky retry payment");
    expect(hits.map((hit) => hit.kind).slice(0, 2)).toEqual(["tool", "user"]);
  });
});
