import type { ModelResponse } from "@unforget/core";
import { ModelResponseAccumulator } from "@unforget/provider-runtime";
import { describe, expect, it } from "vitest";
import { convertToVertexRequest } from "./convert-to-vertex-request.ts";
import { normalizeUsageMetadata, VertexStreamTranslator } from "./vertex-stream.ts";

function assemble(chunks: unknown[]): ModelResponse {
  const translator = new VertexStreamTranslator("digest", "gemini-2.5-pro");
  const accumulator = new ModelResponseAccumulator();
  for (const chunk of chunks) for (const event of translator.push(chunk)) accumulator.push(event);
  for (const event of translator.finish()) accumulator.push(event);
  return accumulator.finish();
}

describe("VertexStreamTranslator", () => {
  it("reports a prompt blocked before generation as a refusal with Google's reason", () => {
    const response = assemble([
      { promptFeedback: { blockReason: "PROHIBITED_CONTENT" }, usageMetadata: { promptTokenCount: 9 } },
    ]);
    expect(response.stopReason).toBe("refusal");
    expect(response.rawStopReason).toBe("PROHIBITED_CONTENT");
    expect(response.content).toEqual([]);
    expect(response.usage.inputTokens).toBe(9);
  });

  it("keeps a signature that arrives on a later empty text part with the text before it", () => {
    const response = assemble([
      { candidates: [{ content: { role: "model", parts: [{ text: "Hel" }] } }] },
      { candidates: [{ content: { role: "model", parts: [{ text: "lo" }] } }] },
      {
        candidates: [
          {
            content: { role: "model", parts: [{ text: "", thoughtSignature: "c2ln" }] },
            finishReason: "STOP",
          },
        ],
      },
    ]);
    expect(response.content).toEqual([
      { type: "text", text: "Hello" },
      { type: "thinking", thinking: "", signature: "c2ln" },
    ]);
    const sentBack = convertToVertexRequest({
      model: "gemini-2.5-pro",
      maxTokens: 10,
      messages: [{ role: "assistant", content: response.content }],
    });
    expect(sentBack.contents).toEqual([
      { role: "model", parts: [{ text: "Hello", thoughtSignature: "c2ln" }] },
    ]);
  });

  it("preserves unmodelled parts and sends them back as the bare part", () => {
    const part = { executableCode: { language: "PYTHON", code: "print(1)" } };
    const response = assemble([
      { candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP" }] },
    ]);
    expect(response.content).toEqual([{ type: "unknown", original: { type: "vertex_part", part } }]);
    const sentBack = convertToVertexRequest({
      model: "gemini-2.5-pro",
      maxTokens: 10,
      messages: [
        {
          role: "assistant",
          content: [...response.content, { type: "unknown", original: { type: "server_tool_use", id: "x" } }],
        },
      ],
    });
    expect(sentBack.contents).toEqual([{ role: "model", parts: [part] }]);
  });

  it("maps inline image output to an image block; a response without a finish reason is not an ended one", () => {
    const image = assemble([
      {
        candidates: [
          {
            content: { parts: [{ inlineData: { mimeType: "image/png", data: "AAAA" } }] },
            finishReason: "STOP",
          },
        ],
      },
    ]);
    expect(image.content).toEqual([
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
    ]);
    // `{}` is no answer: nothing says the message ended, so nothing pretends it did.
    const translator = new VertexStreamTranslator("digest", "gemini-2.5-pro");
    const events = [...translator.push({}), ...translator.finish()].map((event) => event.type);
    expect(events).toEqual(["message_start"]);
    expect(assemble([{}]).stopReason).toBe("other");
  });
});

describe("normalizeUsageMetadata", () => {
  it("splits cached tokens out of the prompt, adds tool-use prompt tokens to input and thoughts to output", () => {
    expect(
      normalizeUsageMetadata({
        promptTokenCount: 2095,
        cachedContentTokenCount: 1800,
        toolUsePromptTokenCount: 5,
        candidatesTokenCount: 503,
        thoughtsTokenCount: 120,
        totalTokenCount: 2723,
      }),
    ).toEqual({
      inputTokens: 300,
      cacheReadInputTokens: 1800,
      cacheCreationInputTokens: 0,
      outputTokens: 623,
    });
    expect(normalizeUsageMetadata(undefined)).toEqual({
      inputTokens: 0,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      outputTokens: 0,
    });
  });
});
