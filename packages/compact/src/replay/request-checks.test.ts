import { createMessage, type Message, type RequestMessage } from "@unforget/core";
import { describe, expect, it } from "vitest";
import {
  collectCarriedUserMessages,
  fitCarriedUserMessages,
  renderCarriedUserMessages,
} from "../conversation/carried-user-messages.ts";
import { checkRequest } from "./request-checks.ts";

const users: Message[] = Array.from({ length: 60 }, (_, index) =>
  createMessage("user", `Prompt ${index}: carry on with the next part.`, { id: `u${index}` }),
);

/** A request whose first message is a summary carrying these blocks, then the newest user message verbatim. */
function request(block: string): RequestMessage[] {
  return [
    { role: "user", content: [{ type: "text", text: `Summary.\n\n${block}` }] },
    { role: "assistant", content: [{ type: "text", text: "ok" }] },
    { role: "user", content: users.at(-1)!.content },
  ];
}

describe("the request check", () => {
  it("counts a folded user message as kept only when the fold resolves to exactly it", async () => {
    const carried = await fitCarriedUserMessages(collectCarriedUserMessages([], users.slice(0, -1)), {
      budgetTokens: 200,
    });
    const fold = carried[0]!;
    if (!("folded" in fold)) throw new Error("expected a fold");
    const block = renderCarriedUserMessages(carried);
    expect(checkRequest(request(block), users)).toEqual([]);
    // A fold that claims one message more or less than lie between its ends keeps none of them.
    const miscounted = block.replace(`count="${fold.folded}"`, `count="${fold.folded + 1}"`);
    const lost = checkRequest(request(miscounted), users);
    expect(lost).toHaveLength(fold.folded);
    expect(lost[0]).toContain("the user's message u0 is neither in the context nor in its summary");
    // Without the fold, the messages it named are lost.
    const dropped = block.replace(/<user-messages-folded[\s\S]*?<\/user-messages-folded>\n/, "");
    expect(checkRequest(request(dropped), users)).toHaveLength(fold.folded);
    // Ends that are not the user's messages resolve to nothing.
    const elsewhere = block.replace(`first="${fold.first}"`, 'first="a9:0"');
    expect(checkRequest(request(elsewhere), users)).toHaveLength(fold.folded);
  });
});
