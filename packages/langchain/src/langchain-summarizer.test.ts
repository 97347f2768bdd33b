import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { SUMMARY_SECTIONS } from "@unforget/compact";
import { PromptTooLongError, ProviderRequestError } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { createContextTrimmer } from "./context-trimmer.ts";
import { createLangChainSummarizer } from "./langchain-summarizer.ts";

const request = {
  messages: [
    {
      id: "u1",
      role: "user" as const,
      timestamp: "",
      content: [{ type: "text" as const, text: "Request 1: port the parser." }],
    },
    {
      id: "a1",
      role: "assistant" as const,
      timestamp: "",
      content: [{ type: "text" as const, text: "On it." }],
    },
  ],
  scope: "all" as const,
  maxTokens: 2_000,
};

describe("createLangChainSummarizer", () => {
  it("has the chat model write the nine sections, and reports its calls and tokens", async () => {
    let received: BaseMessage[] = [];
    const model = fakeModel().respond((messages) => {
      received = messages;
      const body = SUMMARY_SECTIONS.map((title, index) => `${index + 1}. ${title}:\n- noted`).join("\n");
      return new AIMessage({
        content: `<analysis>scratch</analysis><summary>\n${body}\n</summary>`,
        usage_metadata: { input_tokens: 321, output_tokens: 54, total_tokens: 375 },
      });
    });
    const summary = await createLangChainSummarizer({ model }).summarize(request);
    expect(summary).toMatchObject({ calls: 1, inputTokens: 321, outputTokens: 54 });
    expect(summary.text).toContain("6. All User Messages:");
    expect(summary.text).not.toContain("<analysis>");
    // The model read the conversation and then the compaction prompt.
    expect(JSON.stringify(received.map((message) => message.content))).toContain(
      "Request 1: port the parser.",
    );
    expect(received[0]?.getType()).toBe("system");
  });

  it("turns the model's errors into typed ones: too long, or a request error", async () => {
    const tooLong = fakeModel().alwaysThrow(new Error("prompt is too long: 250000 tokens > 200000 maximum"));
    const failure = createLangChainSummarizer({ model: tooLong }).summarize(request);
    await expect(failure).rejects.toBeInstanceOf(PromptTooLongError);
    await expect(failure).rejects.toMatchObject({ actualTokens: 250_000, limitTokens: 200_000 });
    const broken = fakeModel().alwaysThrow(Object.assign(new Error("overloaded"), { status: 529 }));
    await expect(createLangChainSummarizer({ model: broken }).summarize(request)).rejects.toMatchObject({
      name: "CompactionFailedError",
      cause: expect.any(ProviderRequestError),
    });
  });
});

describe("a chat model given as the adapters' model", () => {
  it("writes the summaries of the conversation it answers", async () => {
    const sections = SUMMARY_SECTIONS.map((title, index) => `${index + 1}. ${title}:\n- noted`).join("\n");
    const model = fakeModel();
    for (let call = 0; call < 200; call++)
      model.respond((messages) =>
        JSON.stringify(messages.at(-1)?.content).includes("<summary> tags")
          ? new AIMessage(`<summary>\n${sections}\n</summary>`)
          : new AIMessage(`Answer ${call}: ${"detail ".repeat(500)}`),
      );
    const layers: { layer: string; summarizer?: string }[] = [];
    const trimmer = createContextTrimmer({
      model,
      limits: { contextWindow: 16_000, maxOutputTokens: 2_000 },
      onEvent: (event) => {
        if (event.type === "layer") layers.push(event);
      },
    });
    const chain = trimmer.pipe(model);
    const history: BaseMessage[] = [];
    for (let turn = 0; turn < 30; turn++) {
      history.push(new HumanMessage(`Question ${turn}`));
      history.push(await chain.invoke(history));
    }
    expect(layers.some((layer) => layer.layer === "summary" && layer.summarizer === "model")).toBe(true);
  });
});
