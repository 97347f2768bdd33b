import type { ContentBlock, Message } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { drawConversation, REDRAWN_TURNS } from "./draw-conversation.ts";

let next = 0;
const message = (role: Message["role"], content: ContentBlock[]): Message => ({
  id: `m${++next}`,
  role,
  content,
  timestamp: new Date(0).toISOString(),
});
const prompt = (text: string) => message("user", [{ type: "text", text }]);
const reply = (text: string) => message("assistant", [{ type: "text", text }]);

describe("drawConversation (what a resumed session draws)", () => {
  it("draws the last turns, an edit as its change as it was drawn live", () => {
    const messages: Message[] = [
      prompt("first"),
      reply("one"),
      prompt("change c"),
      message("assistant", [
        {
          type: "tool_use",
          id: "t1",
          name: "Edit",
          input: { file_path: "src/a.js", old_string: "  return 3;", new_string: "  return 33;" },
        },
      ]),
      message("user", [
        {
          type: "tool_result",
          tool_use_id: "t1",
          content:
            "Edited src/a.js. The changed lines now read:\n     7\tfunction c() {\n     8\t  return 33;\n     9\t}",
        },
      ]),
      reply("Changed."),
    ];
    const items = drawConversation(messages);
    const tool = items.find((item) => item.kind === "tool");
    expect(tool).toMatchObject({ kind: "tool", ok: true });
    expect(tool && "diff" in tool ? tool.diff?.lines : undefined).toEqual([
      { kind: "removed", line: 8, text: "  return 3;" },
      { kind: "added", line: 8, text: "  return 33;" },
    ]);
    expect(
      items.filter((item) => item.kind === "user").map((item) => ("text" in item ? item.text : "")),
    ).toEqual(["first", "change c"]);
  });

  it(`keeps to the last ${REDRAWN_TURNS} turns`, () => {
    const messages = Array.from({ length: REDRAWN_TURNS + 2 }, (_, index) => [
      prompt(`p${index}`),
      reply(`r${index}`),
    ]).flat();
    const users = drawConversation(messages).filter((item) => item.kind === "user");
    expect(users).toHaveLength(REDRAWN_TURNS);
  });
});
