import { createMessage, type Message } from "@unforget/core";
import { createTranscriptEntry, type TranscriptEntry } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { trimConversation } from "./trim-conversation.ts";

const now = new Date("2026-01-01T00:00:00Z");
const conversation = () =>
  Array.from({ length: 10 }, (_, index) =>
    createMessage(index % 2 === 0 ? "user" : "assistant", `message ${index}`, { id: `m${index}` }),
  );
/** The manager's entries when it projects from these messages (a boundary and a summary before them). */
const entriesHolding = (messages: readonly Message[]): TranscriptEntry[] => [
  createTranscriptEntry(
    {
      type: "compact_boundary",
      id: "boundary-1",
      trigger: "auto",
      layer: "summary",
      tokensBefore: 100,
      tokensAfter: 40,
      messagesSummarized: 7,
      logicalParentId: "m6",
    },
    { now },
  ),
  ...messages.map((message) => createTranscriptEntry({ type: "message", message }, { now })),
];
const ids = (messages: readonly Message[]) => messages.map((message) => message.id);

describe("trimConversation", () => {
  it("keeps the messages the manager holds and the last one passed", () => {
    const messages = conversation();
    trimConversation(messages, entriesHolding(messages.slice(7, 9)), undefined);
    expect(ids(messages)).toEqual(["m7", "m8", "m9"]);
  });

  it("keeps what memory extraction has not read yet, from its cursor on, and everything before its first run", () => {
    const messages = conversation();
    const entries = entriesHolding(messages.slice(7, 9));
    trimConversation(messages, entries, { cursor: undefined });
    expect(messages).toHaveLength(10);
    trimConversation(messages, entries, { cursor: "m3" });
    expect(ids(messages)).toEqual(["m3", "m4", "m5", "m6", "m7", "m8", "m9"]);
    // The cursor stays too: the next trim still finds where extraction stopped.
    trimConversation(messages, entries, { cursor: "m3" });
    expect(ids(messages)[0]).toBe("m3");
  });
});
