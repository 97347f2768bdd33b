import { describe, expect, it } from "vitest";
import { mcpResultToToolOutput } from "./mcp-tool-output.ts";

describe("mcpResultToToolOutput", () => {
  it.each([
    ["one text", { content: [{ type: "text", text: "hi" }] }, { content: "hi", isError: false }],
    [
      "texts joined",
      {
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      },
      { content: "a\nb", isError: false },
    ],
    [
      "an error",
      { content: [{ type: "text", text: "bad" }], isError: true },
      { content: "bad", isError: true },
    ],
    [
      "structured content only",
      { content: [], structuredContent: { n: 1 } },
      { content: '{"n":1}', isError: false },
    ],
    [
      "text wins over structured content",
      { content: [{ type: "text", text: "n is 1" }], structuredContent: { n: 1 } },
      { content: "n is 1", isError: false },
    ],
    ["nothing", { content: [] }, { content: "(the tool returned no content)", isError: false }],
    [
      "an error with nothing",
      { content: [], isError: true },
      { content: "The tool failed and said nothing more.", isError: true },
    ],
    [
      "an image",
      {
        content: [
          { type: "text", text: "see" },
          { type: "image", data: "AAAA", mimeType: "image/png" },
        ],
      },
      {
        content: [
          { type: "text", text: "see" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
        ],
        isError: false,
      },
    ],
    [
      "an image type providers refuse",
      { content: [{ type: "image", data: "AAAA", mimeType: "image/tiff" }] },
      {
        content: "[image (image/tiff, about 3 bytes) not shown: the model cannot read it here]",
        isError: false,
      },
    ],
    [
      "audio",
      { content: [{ type: "audio", data: "AAAAAAAA", mimeType: "audio/wav" }] },
      {
        content: "[audio (audio/wav, about 6 bytes) not shown: the model cannot read it here]",
        isError: false,
      },
    ],
    [
      "a resource link",
      { content: [{ type: "resource_link", uri: "file:///a.txt", name: "a.txt", description: "notes" }] },
      { content: "[resource a.txt at file:///a.txt: notes]", isError: false },
    ],
    [
      "an embedded text resource",
      { content: [{ type: "resource", resource: { uri: "file:///a.txt", text: "hello" } }] },
      { content: "[resource file:///a.txt]\nhello", isError: false },
    ],
    [
      "an embedded binary resource",
      {
        content: [
          { type: "resource", resource: { uri: "file:///a.bin", blob: "AAAA", mimeType: "application/zip" } },
        ],
      },
      {
        content:
          "[resource from file:///a.bin (application/zip, about 3 bytes) not shown: the model cannot read it here]",
        isError: false,
      },
    ],
  ])("%s", (_name, result, expected) => {
    expect(mcpResultToToolOutput(result)).toEqual(expected);
  });
});
