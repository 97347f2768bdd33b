import type { Tool } from "@unforget/core";
import { describe, expect, it, vi } from "vitest";
import { createPermissionGate } from "./permission-gate.ts";

// The parser is a dependency: this file stands for an install where it cannot be loaded.
vi.mock("unbash", () => {
  throw new Error("Cannot find package 'unbash'");
});

const bash: Tool = {
  name: "Bash",
  description: "Bash",
  inputSchema: { type: "object" },
  permissionSubject: (input) => ({ kind: "command", command: String(input.command) }),
  execute: async () => ({ content: "ran", isError: false }),
};

describe("the Bash gate without its parser", () => {
  it("allows no command by a rule with a specifier, and says why", async () => {
    const gate = createPermissionGate({
      cwd: process.cwd(),
      mode: "dontAsk",
      rules: { allow: ["Bash(ls:*)"] },
    });
    const decision = await gate.authorize({
      tool: bash,
      input: { command: "ls" },
      toolUseId: "t1",
      sessionId: "s",
      cwd: process.cwd(),
      signal: new AbortController().signal,
    });
    expect(decision).toMatchObject({ behavior: "deny" });
    expect(decision.behavior === "deny" && decision.message).toMatch(
      /^Permission denied: Bash `ls` cannot be checked before it runs: the shell parser could not be loaded \(/,
    );
  });
});
