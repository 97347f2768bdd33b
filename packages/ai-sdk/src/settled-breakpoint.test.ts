import { syntheticToolOutput } from "@unforget/testing/arbitraries";
import { generateText, jsonSchema, type LanguageModel, type ModelMessage, stepCountIs, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { createScriptedModel, type ScriptedCall } from "./__fixtures__/scripted-model.ts";
import { type AiSdkContextOptions, createAiSdkContext } from "./ai-sdk-context.ts";

/** Where a call's prompt carries breakpoints: message index, and whether the adapter's marker is there. */
function breakpoints(prompt: readonly ModelMessage[]): number[] {
  const marked = (options: unknown) =>
    JSON.stringify(options ?? {}).includes('"cacheControl"') ||
    JSON.stringify(options ?? {}).includes('"cachePoint"');
  return prompt.flatMap((message, index) => {
    const parts = Array.isArray(message.content) ? message.content : [];
    const count =
      (marked(message.providerOptions) ? 1 : 0) +
      parts.filter((part) => marked((part as { providerOptions?: unknown }).providerOptions)).length;
    return Array.from({ length: count }, () => index);
  });
}

/** A 60-step tool loop at a 16K window through prepareStep, starting from `history`; the calls the model got. */
async function loop(
  history: ModelMessage[],
  options: Partial<AiSdkContextOptions> = {},
  toolName = "Read",
): Promise<ScriptedCall[]> {
  const { model, calls } = createScriptedModel(MockLanguageModelV4 as never, (_prompt, call) => ({
    tool: toolName,
    input: { path: `src/file${call}.ts` },
  }));
  let outputs = 0;
  const context = createAiSdkContext({
    model: "claude-sonnet-4-5",
    limits: { contextWindow: 16_000, maxOutputTokens: 4_000 },
    ...options,
  });
  await generateText({
    model: model as LanguageModel,
    tools: {
      [toolName]: tool({
        description: "Reads a file",
        inputSchema: jsonSchema<{ path: string }>({
          type: "object",
          properties: { path: { type: "string" } },
        }),
        execute: async () => syntheticToolOutput(++outputs, 600),
      }),
    },
    messages: history,
    stopWhen: stepCountIs(60),
    prepareStep: context.prepareStep,
  });
  return calls;
}

const task: ModelMessage = { role: "user", content: "Request 0: read sixty files." };
const marked = (text: string): ModelMessage => ({
  role: "user",
  content: [{ type: "text", text, providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } }],
});

describe("the settled prefix's breakpoint", () => {
  it("goes on the host's request, before the last message, once the cheap layers have settled a prefix", async () => {
    const calls = await loop([task]);
    const withMarker = calls.filter((call) => breakpoints(call.prompt).length > 0);
    expect(withMarker.length).toBeGreaterThan(calls.length / 2);
    for (const call of calls) {
      const at = breakpoints(call.prompt);
      expect(at.length).toBeLessThanOrEqual(1);
      for (const index of at) expect(index).toBeLessThan(call.prompt.length - 1);
    }
  });

  it("does not depend on the tool's name: a loop of a custom tool (get_record) carries it as a loop of Read does", async () => {
    const calls = await loop([task], {}, "get_record");
    const withMarker = calls.filter((call) => breakpoints(call.prompt).length > 0);
    expect(withMarker.length).toBeGreaterThan(calls.length / 2);
    for (const call of calls) {
      const at = breakpoints(call.prompt);
      expect(at.length).toBeLessThanOrEqual(1);
      for (const index of at) expect(index).toBeLessThan(call.prompt.length - 1);
    }
  });

  it("never moves a breakpoint the user placed, and adds none past the request's four", async () => {
    // One of the user's own: it stays where it is, and the settled one joins it.
    const one = await loop([
      marked("Request 0: read sixty files."),
      { role: "assistant", content: "On it." },
      task,
    ]);
    for (const call of one) expect(breakpoints(call.prompt)[0]).toBe(0);
    expect(one.some((call) => breakpoints(call.prompt).length === 2)).toBe(true);
    // Two of the user's own: with the tools' and the system prompt's that is four already.
    const two = await loop([
      marked("Rules: be brief."),
      { role: "assistant", content: "Noted." },
      marked("Request 0: read sixty files."),
    ]);
    for (const call of two) expect(breakpoints(call.prompt)).toEqual([0, 2]);
  });

  it("is left out with settledBreakpoint: false", async () => {
    const calls = await loop([task], { settledBreakpoint: false });
    for (const call of calls) expect(breakpoints(call.prompt)).toEqual([]);
  });
});
