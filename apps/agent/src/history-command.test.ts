import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage } from "@unforget/core";
import { TranscriptWriter } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import { runInProcess } from "../test-support/run-cli.ts";

async function transcript(): Promise<{ path: string; output: string }> {
  const path = join(await mkdtemp(join(tmpdir(), "unforget-history-cli-")), "s1.jsonl");
  const output = "PORT=8443\nHOST=staging.local\n";
  const writer = await TranscriptWriter.open(path, { sessionId: "s1" });
  await writer.appendMessage(createMessage("user", "Which port?"));
  await writer.appendMessage(
    createMessage("assistant", [
      { type: "tool_use", id: "toolu_port", name: "Bash", input: { command: "cat .env" } },
    ]),
  );
  await writer.appendMessage(
    createMessage("user", [{ type: "tool_result", tool_use_id: "toolu_port", content: output }]),
  );
  await writer.close();
  return { path, output };
}

describe("unforget history", () => {
  it("searches a session and shows an item exactly as it was", async () => {
    const { path, output } = await transcript();
    const found = await runInProcess(["history", "search", path, "staging", "local"]);
    expect(found.code).toBe(0);
    expect(found.stdout).toMatch(/^toolu_port {2}turn 1 {2}Bash/);
    const shown = await runInProcess(["history", "show", path, "toolu_port"]);
    expect(shown).toMatchObject({ code: 0, stdout: output });
  });

  it("says what to do for an unknown session or id", async () => {
    const { path } = await transcript();
    const session = await runInProcess(["history", "search", join(path, "..", "nope.jsonl"), "x"]);
    expect(session.code).not.toBe(0);
    expect(session.stderr).toMatch(/nope\.jsonl/);
    const item = await runInProcess(["history", "show", path, "toolu_nope"]);
    expect(item.code).not.toBe(0);
    expect(item.stderr).toMatch(/toolu_nope/);
  });
});
