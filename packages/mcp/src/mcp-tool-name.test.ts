import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_TOOL_NAME_LENGTH, mcpToolName } from "./mcp-tool-name.ts";

/** What Anthropic, Bedrock and Gemini all accept as a tool name. */
const ACCEPTED = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

describe("mcpToolName", () => {
  it.each([
    ["github", "create_issue", "mcp__github__create_issue"],
    ["my server", "read.file", "mcp__my_server__read_file"],
    ["fs", "tool with spaces/and.dots", "mcp__fs__tool_with_spaces_and_dots"],
    ["ünï", "cödé", "mcp___n___c_d_"],
  ])("%s / %s → %s", (server, tool, expected) => {
    expect(mcpToolName(server, tool)).toBe(expected);
  });

  it("cuts long names to the providers' limit and keeps them apart with a hash", () => {
    const long = "x".repeat(100);
    const a = mcpToolName("server", `${long}a`);
    const b = mcpToolName("server", `${long}b`);
    expect(a).toHaveLength(MAX_TOOL_NAME_LENGTH);
    expect(a).not.toBe(b);
    expect(mcpToolName("server", `${long}a`)).toBe(a);
  });

  it("never gives a name that is taken", () => {
    const first = mcpToolName("a.b", "c");
    const second = mcpToolName("a_b", "c", new Set([first]));
    expect(second).not.toBe(first);
    expect(second.startsWith("mcp__a_b__c_")).toBe(true);
  });

  it("always gives a name every provider accepts, unique among those taken", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string(), fc.string({ minLength: 1 })), { maxLength: 20 }),
        (pairs) => {
          const taken = new Set<string>();
          for (const [server, tool] of pairs) {
            const name = mcpToolName(server, tool, taken);
            expect(name).toMatch(ACCEPTED);
            expect(taken.has(name)).toBe(false);
            taken.add(name);
          }
        },
      ),
    );
  });
});
