import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createExtractiveSummarizer } from "@unforget/compact";
import { ConfigurationError } from "@unforget/core";
import { syntheticToolOutput } from "@unforget/testing/arbitraries";
import type { ModelMessage } from "ai";
import * as ai7 from "ai";
import { MockLanguageModelV4 } from "ai/test";
import * as ai6 from "ai-v6";
import { MockLanguageModelV3 } from "ai-v6/test";
import { describe, expect, it } from "vitest";
import { createScriptedModel, type ScriptedReply } from "./__fixtures__/scripted-model.ts";
import { createAiSdkContext } from "./ai-sdk-context.ts";

const majors = [
  { name: "AI SDK 7", api: ai7, Mock: MockLanguageModelV4 },
  { name: "AI SDK 6", api: ai6, Mock: MockLanguageModelV3 },
] as const;

/** The result text of the prompt's last tool message. */
function lastToolResult(prompt: readonly ModelMessage[]): string {
  const message = prompt.findLast((entry) => entry.role === "tool");
  const part = Array.isArray(message?.content) ? message.content.at(-1) : undefined;
  const output = part && "output" in part ? (part.output as { value?: unknown }) : undefined;
  return typeof output?.value === "string" ? output.value : JSON.stringify(output?.value);
}

const READS = 40;
const MARKER = "build id HX-5521";

describe.each(majors)("history tools through createAiSdkContext on the $name", (major) => {
  it("a scripted model finds a cleared result with history_search and gets its original bytes from history_read", async () => {
    const api = major.api as unknown as {
      generateText(options: unknown): Promise<{ steps: unknown[] }>;
      stepCountIs(count: number): unknown;
      tool(options: unknown): unknown;
      jsonSchema(schema: Record<string, unknown>): unknown;
    };
    const outputs: string[] = [];
    const read = api.tool({
      description: "Reads a file",
      inputSchema: api.jsonSchema({ type: "object", properties: { path: { type: "string" } } }),
      execute: async () => {
        const lines = syntheticToolOutput(outputs.length + 1, 600).split("\n");
        if (outputs.length === 1) lines.splice(30, 0, MARKER);
        const output = lines.join("\n");
        outputs.push(output);
        return output;
      },
    });
    let searched: string | undefined;
    let restored: string | undefined;
    let promptBeforeSearch = "";
    const { model } = createScriptedModel(major.Mock as never, (prompt, call): ScriptedReply => {
      if (call <= READS) return { tool: "Read", input: { path: `src/file${call}.ts` } };
      if (call === READS + 1) {
        promptBeforeSearch = JSON.stringify(prompt);
        return { tool: "history_search", input: { query: "HX-5521" } };
      }
      if (call === READS + 2) {
        searched = lastToolResult(prompt);
        const id = /id=(\S+)/.exec(searched)?.[1] ?? "none";
        return { tool: "history_read", input: { id } };
      }
      restored = lastToolResult(prompt);
      return { text: "The build id was HX-5521." };
    });
    const context = createAiSdkContext({
      model: model as ai7.LanguageModel,
      limits: { contextWindow: 16_000, maxOutputTokens: 2_000 },
      summarizer: createExtractiveSummarizer(),
      sessionDir: await mkdtemp(join(tmpdir(), "unforget-aisdk-history-")),
      history: true,
    });
    expect(Object.keys(context.historyTools)).toEqual(["context_status", "history_search", "history_read"]);
    await api.generateText({
      model,
      tools: { Read: read, ...context.historyTools },
      prompt: "Read every file, then tell me the build id.",
      stopWhen: api.stepCountIs(READS + 3),
      prepareStep: context.prepareStep,
    });
    // The second read's output was cleared from the context before the model searched for it.
    expect(promptBeforeSearch).not.toContain(MARKER);
    expect(searched).toContain("id=call_2");
    const [header, ...body] = (restored ?? "").split("\n");
    expect(header).toContain("id=call_2");
    expect(body.join("\n")).toBe(outputs[1]);
  });
});

describe("history option", () => {
  it("needs a transcript or a sessionDir, and says which to pass", () => {
    expect(() => createAiSdkContext({ model: "claude-sonnet-4-5", history: true })).toThrow(
      ConfigurationError,
    );
    expect(() => createAiSdkContext({ model: "claude-sonnet-4-5", history: true })).toThrow(/sessionDir/);
    expect(createAiSdkContext({ model: "claude-sonnet-4-5" }).historyTools).toEqual({});
  });
});
