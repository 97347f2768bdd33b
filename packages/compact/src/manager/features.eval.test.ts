import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createMessage, normalizeContent } from "@unforget/core";
import { evaluationCorpus } from "@unforget/testing/corpus";
import { describe, expect, it } from "vitest";
import { getServerCompaction, portableMessages } from "./native-context.ts";

const { dir } = evaluationCorpus();

describe("server compaction in a recorded Anthropic response (corpus api-fixtures)", () => {
  it("finds the compaction block and makes it portable text", async () => {
    const recorded = JSON.parse(
      await readFile(join(dir, "api-fixtures", "anthropic-compaction.1.json"), "utf8"),
    ) as { content: unknown };
    const content = normalizeContent(recorded.content);
    const block = getServerCompaction(content[0]!);
    expect(block?.content).toContain("Summary of Conversation");
    const portable = portableMessages([createMessage("assistant", content)]);
    expect(portable[0]?.content[0]).toMatchObject({
      type: "text",
      text: expect.stringContaining("Summary of Conversation"),
    });
  });
});
