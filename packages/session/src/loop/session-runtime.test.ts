import { readFile } from "node:fs/promises";
import type { Tool, ToolResultRetention } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { anthropicSuite, isSummaryRequest, modelCalls, summaryText } from "../__fixtures__/session-kit.ts";
import { createAgentSession } from "./agent-session.ts";

const suite = anthropicSuite("runtime");

/** A tool that answers each call with a record of about 600 tokens; `retention` as it declares it. */
function recordTool(name: string, retention?: ToolResultRetention): Tool {
  return {
    name,
    description: `Looks a record up (${name}).`,
    inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    ...(retention ? { resultRetention: retention } : {}),
    async execute(input) {
      const id = String(input.id);
      return { content: `${name} ${id}\n${`field of ${id}: value\n`.repeat(120)}`, isError: false };
    },
  };
}

describe("the session's context manager", () => {
  it("clears each tool's old results as the tool declares: saved first when not reproducible, never when kept", async () => {
    const session = await createAgentSession({
      provider: suite.provider,
      model: "claude-sonnet-4-6",
      tools: [recordTool("lookup"), recordTool("recall", "keep")],
      sessionsDir: suite.dir.path,
      permissions: { mode: "bypassPermissions" },
      context: { limits: { contextWindow: 16_000, maxOutputTokens: 2_000 } },
    });
    let calls = 0;
    suite.fake.setResponder((request) => {
      if (isSummaryRequest(request.body)) return { kind: "reply", text: summaryText("Records were read.") };
      if (calls >= 40) return { kind: "reply", text: "Read them all." };
      const index = calls++;
      const name = index % 2 === 0 ? "lookup" : "recall";
      return { kind: "reply", text: "Next.", toolCalls: [{ name, input: { id: `r${index}` } }] };
    });
    expect((await session.send("Read records r0 to r39.").result()).text).toBe("Read them all.");
    const sent = modelCalls(suite.fake)
      .filter((body) => !isSummaryRequest(body))
      .map((body) => JSON.stringify(body));
    // A kept tool's results are never cleared or folded into a record (a summary's continuation may name its
    // calls as done: that is the summary's, not a layer's record of a cleared output).
    for (const body of sent) {
      expect(body.replace(/<continuation>[\s\S]*?<\/continuation>/g, "")).not.toMatch(/recall\(/);
    }
    // Another tool's are, once saved to the session folder; the record says where.
    const pointers = sent.join("\n").match(/lookup\([^)]*\) → [^\]"]*? — saved at ([^\]"\\]+)/g) ?? [];
    expect(pointers.length).toBeGreaterThan(0);
    const path = /saved at ([^\]"\\]+)/.exec(pointers[0]!)![1]!.trim();
    expect(path.startsWith(suite.dir.path)).toBe(true);
    expect(await readFile(path, "utf8")).toMatch(/^lookup r\d+\n/);
    await session.close();
  }, 60_000);
});
