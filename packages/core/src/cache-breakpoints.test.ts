import { describe, expect, it } from "vitest";
import { type CacheablePrompt, withCacheBreakpoints } from "./cache-breakpoints.ts";
import { contentBlocks, type RequestMessage } from "./message.ts";
import type { ToolDefinition } from "./provider.ts";

const tools: ToolDefinition[] = [
  { name: "Read", inputSchema: { type: "object" } },
  { name: "Bash", inputSchema: { type: "object" } },
];

describe("withCacheBreakpoints", () => {
  it("marks the last tool, the system prompt and the last block of the last message", () => {
    const messages: RequestMessage[] = [
      { role: "user", content: [{ type: "text", text: "Fix the test." }] },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "npm test" } }],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "FAIL" }] },
    ];
    const prompt = withCacheBreakpoints({ system: "You are careful.", tools, messages });
    expect(prompt.tools?.map((tool) => tool.cache_control)).toEqual([undefined, { type: "ephemeral" }]);
    expect(prompt.system).toEqual([
      { type: "text", text: "You are careful.", cache_control: { type: "ephemeral" } },
    ]);
    expect(prompt.messages[2]!.content[0]).toMatchObject({
      type: "tool_result",
      cache_control: { type: "ephemeral" },
    });
    expect(prompt.messages.slice(0, 2)).toEqual(messages.slice(0, 2));
    // Nothing given was changed.
    expect(JSON.stringify(messages)).not.toContain("cache_control");
    expect(tools[1]).not.toHaveProperty("cache_control");
  });

  it("skips a trailing thinking block and carries the one-hour lifetime", () => {
    const messages: RequestMessage[] = [
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me look." },
          { type: "thinking", thinking: "…", signature: "s" },
        ],
      },
    ];
    const prompt = withCacheBreakpoints<CacheablePrompt>({ messages }, { ttl: "1h" });
    expect(prompt.messages[0]!.content[0]).toMatchObject({ cache_control: { type: "ephemeral", ttl: "1h" } });
    expect(prompt.messages[0]!.content[1]).not.toHaveProperty("cache_control");
    expect(prompt.system).toBeUndefined();
  });
});

describe("withCacheBreakpoints with settled blocks", () => {
  const messages: RequestMessage[] = [
    {
      role: "user",
      content: [
        { type: "text", text: "Fix it." },
        { type: "text", text: "[folded records]" },
      ],
    },
    { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: {} }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] },
  ];

  it("marks the last settled block as well as the last message", () => {
    const prompt = withCacheBreakpoints({ messages }, { settledBlocks: 2 });
    expect(contentBlocks(prompt.messages[0]!.content).map((block) => "cache_control" in block)).toEqual([
      false,
      true,
    ]);
    expect(prompt.messages[1]).toBe(messages[1]);
    expect(prompt.messages[2]!.content[0]).toHaveProperty("cache_control");
  });

  it("adds nothing when nothing is settled or the settled part reaches the last message", () => {
    for (const settledBlocks of [0, 4, 9]) {
      const marked = withCacheBreakpoints({ messages }, { settledBlocks }).messages.flatMap((message) =>
        contentBlocks(message.content).filter((block) => "cache_control" in block),
      );
      expect(marked).toHaveLength(1);
    }
  });

  it("marks a last message given as a string as one text block", () => {
    const prompt = withCacheBreakpoints({ messages: [{ role: "user", content: "Fix the build." }] });
    expect(prompt.messages[0]!.content).toEqual([
      { type: "text", text: "Fix the build.", cache_control: { type: "ephemeral" } },
    ]);
  });
});
