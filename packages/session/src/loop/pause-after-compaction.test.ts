import { findToolPairViolations, getMessageText, type ModelRequest } from "@unforget/core";
import { describe, expect, it } from "vitest";
import {
  createInstantProvider,
  inspectingTurns,
  keptInspectTool,
  longSessionOptions,
  printedPart,
} from "../../bench/instant-provider.ts";
import { tempDirPerTest } from "../__fixtures__/session-kit.ts";
import { type AgentSessionOptions, createAgentSession } from "../index.ts";

// `pauseAfterCompaction`: a summary that replaces what the model was working on mid-turn ends the turn before
// the next request, so that the user can read it and steer (what users of other agents ask for after drifts).

const dir = tempDirPerTest("pause");

/** One user turn of 40 `inspect` calls (about 1,200 tokens each) at a 16K window: summaries come mid-turn. */
function session(pauseAfterCompaction: boolean) {
  const requests: ModelRequest[] = [];
  const script = inspectingTurns(40, (call) => `Inspecting part ${call}.`);
  const provider = createInstantProvider((request) => {
    requests.push(request);
    return script(request);
  });
  const options: AgentSessionOptions = {
    ...longSessionOptions(provider, [keptInspectTool(printedPart)], dir.path),
    pauseAfterCompaction,
  };
  return { requests, open: () => createAgentSession(options) };
}

const lastUserText = (request: ModelRequest) => {
  const last = request.messages.at(-1)!;
  return typeof last.content === "string" ? last.content : getMessageText({ content: last.content });
};

describe("pauseAfterCompaction", () => {
  it("ends the turn before the request after a mid-turn summary; the next send goes on from there", async () => {
    const { requests, open } = session(true);
    const agent = await open();
    expect(agent.summary()).toBeUndefined();
    const first = await agent.send("Inspect every part.").result();
    expect(first.stopReason).toBe("compacted");
    expect(agent.status().compactions).toBe(1);
    // What the status shows is the context the summary left (the request that was not sent), summary included.
    expect(agent.status().breakdown.summary).toBeGreaterThan(0);
    // And the summary itself, as the model will read it: the user's message carried verbatim.
    expect(agent.summary()).toContain("Inspect every part.");
    // Every call the turn counts was sent; the one the summary came before was not.
    expect(requests).toHaveLength(first.turns);
    expect(first.turns).toBeGreaterThan(1);
    expect(first.turns).toBeLessThan(40);

    const sent = requests.length;
    const second = await agent.send("Go on, but skip the parts you already inspected.").result();
    // The request that goes on holds the summary and the user's new message, and every call its result.
    const next = requests[sent]!;
    expect(JSON.stringify(next.messages)).toContain("<summary>");
    expect(lastUserText(next)).toContain("Go on, but skip the parts you already inspected.");
    const asMessages = next.messages.map((message, index) => ({
      ...message,
      content:
        typeof message.content === "string"
          ? [{ type: "text" as const, text: message.content }]
          : message.content,
      id: `m${index}`,
      timestamp: "",
    }));
    expect(findToolPairViolations(asMessages)).toEqual([]);
    expect(["compacted", "end_turn"]).toContain(second.stopReason);
    await agent.close();
  });

  it("is off by default: the same turn carries on through its summaries", async () => {
    const { requests, open } = session(false);
    const agent = await open();
    const result = await agent.send("Inspect every part.").result();
    expect(result.stopReason).toBe("end_turn");
    expect(agent.status().compactions).toBeGreaterThanOrEqual(1);
    expect(requests).toHaveLength(41);
    await agent.close();
  });
});
