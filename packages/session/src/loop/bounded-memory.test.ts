import type { ModelRequest } from "@unforget/core";
import { readTranscript } from "@unforget/transcript";
import { describe, expect, it } from "vitest";
import {
  createInstantProvider,
  inspectingTurns,
  keptInspectTool,
  longSessionOptions,
  printedPart,
} from "../../bench/instant-provider.ts";
import { tempDirPerTest } from "../__fixtures__/session-kit.ts";
import { createAgentSession } from "./agent-session.ts";

// A long session through the real loop: what the session holds in memory (its messages, the manager's entries)
// stays bounded by the context, however many compactions it goes through; the transcript on disk has it all.

const dir = tempDirPerTest("bounded");

const CALLS_PER_TURN = 8;

/** A tool whose ~1,200-token results are kept (only summaries free room), and a provider that calls it. */
function scripted() {
  const inspect = keptInspectTool(printedPart);
  const requests: ModelRequest[] = [];
  const turns = inspectingTurns(CALLS_PER_TURN, (call) => `Step ${call}: reading the next part.`);
  const provider = createInstantProvider((request) => {
    requests.push(request);
    return turns(request);
  });
  return { inspect, provider, requests };
}

describe("a session through many compactions", () => {
  it("holds messages and entries bounded by the context, the transcript every message once, across a model change", async () => {
    const { inspect, provider } = scripted();
    const session = await createAgentSession(longSessionOptions(provider, [inspect], dir.path));
    let appended = 0;
    let mostHeld = 0;
    for (let turn = 1; turn <= 40; turn++) {
      if (turn === 20) {
        // A manual compaction between turns summarises up to the last message (the one `prepare` never saw),
        // then a model change rebuilds the manager from what it kept: nothing may be taken for new again.
        await session.compact();
        session.setModel("claude-haiku-4-5");
      }
      const result = await session.send(`Next step ${turn}.`).result();
      // A turn's result still has every message it appended, whatever was trimmed meanwhile.
      expect(result.messages[0]).toMatchObject({ role: "user" });
      expect(result.messages.filter((message) => message.role === "assistant")).toHaveLength(
        CALLS_PER_TURN + 1,
      );
      appended += result.messages.length;
      if (session.status().compactions > 0) mostHeld = Math.max(mostHeld, session.messages.length);
    }
    await session.close();
    expect(session.status().compactions).toBeGreaterThan(10);
    expect(appended).toBeGreaterThan(700);
    // In memory: a few rounds, not the session (700 messages and more by now).
    expect(mostHeld).toBeLessThan(60);
    const { entries } = await readTranscript(session.transcriptPath, { quarantine: false });
    const ids = entries.flatMap((entry) => (entry.type === "message" ? [entry.message.id] : []));
    // On disk: every message, each once (the managers never wrote one the session had written, nor twice).
    expect(ids.length).toBe(appended);
    expect(new Set(ids).size).toBe(ids.length);
    const last = session.messages.at(-1);
    expect(ids.at(-1)).toBe(last?.id);
  });

  it("resumes a long session with the context it had, and goes on", async () => {
    const { inspect, provider, requests } = scripted();
    const options = longSessionOptions(
      provider,
      [inspect],
      dir.path,
      process.env.RETAIN_ALL ? { retainEntries: "all" } : {},
    );
    const first = await createAgentSession(options);
    for (let turn = 1; turn <= 12; turn++) await first.send(`Next step ${turn}.`).result();
    expect(first.status().compactions).toBeGreaterThan(5);
    await first.close();
    const before = requests.length;
    const resumed = await createAgentSession({ ...options, resume: first.sessionId });
    for (let turn = 13; turn <= 24; turn++) await resumed.send(`Next step ${turn}.`).result();
    // The first request after the resume goes on from the last one before it (breakpoints aside).
    const plain = (request: ModelRequest | undefined) =>
      JSON.stringify(request?.messages, (key, value) => (key === "cache_control" ? undefined : value));
    const last = plain(requests[before - 1]);
    expect(plain(requests[before]).startsWith(last.slice(0, -1))).toBe(true);
    expect(resumed.messages.length).toBeLessThan(60);
    await resumed.close();
    const { entries } = await readTranscript(resumed.transcriptPath, { quarantine: false });
    const ids = entries.flatMap((entry) => (entry.type === "message" ? [entry.message.id] : []));
    expect(new Set(ids).size).toBe(ids.length);
  });
});
