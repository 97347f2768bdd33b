import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { type AnthropicFakeServer, type RecordedRequest, startAnthropicFake } from "@unforget/testing/fakes";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type AgentFolders,
  agentFolders,
  isSummaryRequest,
  SUMMARY_STEP,
} from "../../test-support/agent-fixture.ts";
import { KEYS, type PtyAgent, startPtyAgent } from "../../test-support/pty-agent.ts";

/** The least a stdio MCP server must answer (newline-delimited JSON-RPC, as the spec's stdio transport says). */
const MINIMAL_MCP_SERVER = `import { createInterface } from "node:readline";
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\\n");
for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line);
  if (message.id === undefined) continue;
  if (message.method === "initialize")
    send({ id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "later", version: "1.0.0" } } });
  else if (message.method === "tools/list")
    send({ id: message.id, result: { tools: [{ name: "ping", description: "Answers pong.", inputSchema: { type: "object", properties: {} } }] } });
  else if (message.method === "tools/call") send({ id: message.id, result: { content: [{ type: "text", text: "pong" }] } });
  else send({ id: message.id, result: {} });
}
`;

let fake: AnthropicFakeServer;
let folders: AgentFolders;
let agents: PtyAgent[] = [];
beforeAll(async () => {
  fake = await startAnthropicFake();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  folders = agentFolders("repl");
});
afterEach(async () => {
  for (const agent of agents) agent.kill();
  // A killed agent may still be writing (a tool output it saves after a step, the transcript) until it exits.
  const settled = new Promise((resolve) => setTimeout(resolve, 5_000).unref());
  await Promise.race([Promise.all(agents.map((agent) => agent.exited)), settled]);
  agents = [];
  folders.cleanup();
});

async function start(args: string[] = [], ready?: string | RegExp | false): Promise<PtyAgent> {
  const agent = await startPtyAgent({
    cwd: folders.project,
    env: { HOME: folders.home, ANTHROPIC_BASE_URL: fake.url },
    args,
    ...(ready !== undefined ? { ready } : {}),
  });
  agents.push(agent);
  return agent;
}

/** The text of every user prompt a request carries (the tool results' text left out). */
function prompts(request: RecordedRequest): string[] {
  const messages = (
    request.body as { messages?: { role: string; content: { type: string; text?: string }[] }[] }
  ).messages;
  return (messages ?? [])
    .filter((message) => message.role === "user")
    .flatMap((message) =>
      message.content.filter((block) => block.type === "text").map((block) => block.text ?? ""),
    );
}

/** The names of the tools a request offered the model. */
function sentTools(request: RecordedRequest | undefined): string[] {
  return ((request?.body as { tools?: { name: string }[] } | undefined)?.tools ?? []).map(
    (tool) => tool.name,
  );
}

function endsWithToolResult(request: RecordedRequest): boolean {
  const messages = (request.body as { messages: { role: string; content: { type: string }[] }[] }).messages;
  return messages.at(-1)?.content.some((block) => block.type === "tool_result") ?? false;
}

/** A model that reads `file N` when asked to, then says it did. */
function readingModel(request: RecordedRequest) {
  if (isSummaryRequest(request)) return SUMMARY_STEP;
  const asked = prompts(request)
    .flatMap((text) => [...text.matchAll(/read file (\d+)/g)].map((match) => match[1]))
    .at(-1);
  if (asked === undefined) return { kind: "reply" as const, text: "ok" };
  if (endsWithToolResult(request)) return { kind: "reply" as const, text: `Read file ${asked}.` };
  return {
    kind: "reply" as const,
    text: `Reading file ${asked}.`,
    toolCalls: [{ name: "Read", input: { file_path: `data/file-${asked}.txt` } }],
  };
}

function writeDataFiles(count: number): void {
  for (let index = 0; index < count; index++) {
    const line = `record ${index}: ${"the quick brown fox jumps over the lazy dog ".repeat(3)}\n`;
    folders.write(`project/data/file-${index}.txt`, line.repeat(40));
  }
}

/** Every reading of the gauge drawn after `from`, in tokens. */
function gaugeReadings(screen: string): number[] {
  return [...screen.matchAll(/ (\d+(?:\.\d)?)(K?)\/12K \(/g)].map(
    (match) => Number(match[1]) * (match[2] === "K" ? 1000 : 1),
  );
}

// Each test drives the real CLI through many turns on a shared, loaded machine: generous limits, no timing.
describe("unforget, the REPL in a pseudo-terminal, on the Anthropic fake", { timeout: 300_000 }, () => {
  it("a long session compacts while the gauge moves, and keeps working", async () => {
    folders.write("home/.unforget/settings.json", { compaction: { threshold: { tokens: 12_000 } } });
    writeDataFiles(12);
    fake.setResponder(readingModel);
    const agent = await start();
    for (let index = 0; index < 12; index++) {
      const from = agent.mark();
      await agent.send(`read file ${index}`);
      await agent.waitFor(`Read file ${index}.`, { from });
      // The turn is over once the prompt is back.
      await agent.waitFor("ask, or /help", { from });
    }
    const screen = agent.screen;
    expect(screen).toMatch(/Compacted: [a-z-]+ freed [\d.]+K? tokens/);
    const readings = gaugeReadings(screen);
    const peak = Math.max(...readings);
    expect(peak).toBeGreaterThan(6000);
    // After the peak the gauge came down: a compaction freed room, and the session went on.
    expect(readings.slice(readings.indexOf(peak)).some((tokens) => tokens < peak * 0.8)).toBe(true);
    expect(screen).toContain("Read file 11.");
  });

  // Six files read, then /compact: the files restored after the summary must not undo it (they once did, and
  // the screen said "Nothing was compacted").
  it("/context shows the breakdown and /compact compacts; an unknown command gets a suggestion", async () => {
    writeDataFiles(7);
    fake.setResponder(readingModel);
    const agent = await start();
    let from = agent.mark();
    for (let index = 0; index < 6; index++) {
      from = agent.mark();
      await agent.send(`read file ${index}`);
      await agent.waitFor(`Read file ${index}.`, { from });
      await agent.waitFor("ask, or /help", { from });
    }
    from = agent.mark();
    await agent.send("/context");
    const context = await agent.waitFor("compactions so far", { from });
    for (const part of ["system prompt", "tools", "tool results", "messages", "total", "threshold"])
      expect(context).toContain(part);
    from = agent.mark();
    await agent.send("/cmpact");
    await agent.waitFor("Unknown command /cmpact. Did you mean /compact?", { from });
    from = agent.mark();
    await agent.send("/compact --preview keep the file names");
    await agent.waitFor(
      /Preview, nothing applied: the (summary|session-memory) would take the context from [\d.]+K? to [\d.]+K? tokens/,
      { from },
    );
    from = agent.mark();
    await agent.send("/compact keep the file names");
    const compacted = await agent.waitFor(
      /Compacted \((summary|full|session-memory)\): [\d.]+K? → [\d.]+K? tokens/,
      { from },
    );
    // The gauge shows the compacted size at once, before any request.
    const after = /→ ([\d.]+K?) tokens/.exec(compacted)?.[1] ?? "none";
    await agent.waitFor(new RegExp(` ${after.replace(".", "\\.")}/[\\d.]+K? \\(`), { from });
    expect(fake.requests.filter((request) => request.operation !== "count_tokens").at(-1)).toSatisfy(
      isSummaryRequest,
    );
    const summaryCall = fake.requests.find(isSummaryRequest);
    expect(JSON.stringify(summaryCall?.body)).toContain("keep the file names");
    from = agent.mark();
    await agent.send("read file 6");
    await agent.waitFor("Read file 6.", { from });
  });

  // Prompts typed while /compact runs used to wait in the queue until the next prompt's turn ended, and then ran
  // after it: out of order, and not at all when nothing else was typed.
  it("prompts typed during /compact run after it, in the order typed", async () => {
    writeDataFiles(3);
    const lastPrompt = (request: RecordedRequest) => prompts(request).at(-1) ?? "";
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    fake.setResponder((request) => {
      // The summary is held until two prompts have been typed while it is written.
      if (isSummaryRequest(request)) return { ...SUMMARY_STEP, holdUntil: held };
      const typed = /^after (one|two)$/.exec(lastPrompt(request));
      if (typed) return { kind: "reply", text: `Answered after ${typed[1]}.` };
      return readingModel(request);
    });
    const agent = await start();
    for (let index = 0; index < 3; index++) {
      const from = agent.mark();
      await agent.send(`read file ${index}`);
      await agent.waitFor(`Read file ${index}.`, { from });
      await agent.waitFor("ask, or /help", { from });
    }
    const from = agent.mark();
    await agent.send("/compact");
    await expect.poll(() => fake.requests.some(isSummaryRequest), { timeout: 30_000 }).toBe(true);
    await agent.send("after one");
    // Each prompt lands before the next is typed: typed at once, the two read as one pasted prompt of two lines.
    await agent.waitFor("queued: after one", { from });
    await agent.send("after two");
    await agent.waitFor("queued: after one · after two", { from });
    release();
    const screen = await agent.waitFor("Answered after two.", { from });
    expect(screen.indexOf("Compacted (")).toBeGreaterThan(-1);
    expect(screen.indexOf("Compacted (")).toBeLessThan(screen.indexOf("Answered after one."));
    expect(screen.indexOf("Answered after one.")).toBeLessThan(screen.indexOf("Answered after two."));
    const calls = fake.requests.filter((request) => request.operation !== "count_tokens");
    const summaryAt = calls.findIndex(isSummaryRequest);
    const oneAt = calls.findIndex((request) => lastPrompt(request) === "after one");
    const twoAt = calls.findIndex((request) => lastPrompt(request) === "after two");
    expect(summaryAt).toBeGreaterThan(-1);
    expect([summaryAt < oneAt, oneAt < twoAt]).toEqual([true, true]);
  });

  it("/compact with nothing to compact says so in words and calls no model", async () => {
    const agent = await start();
    const from = agent.mark();
    await agent.send("/compact");
    await agent.waitFor("There is nothing to compact yet: the conversation has no reply", { from });
    expect(fake.requests.filter((request) => request.operation !== "count_tokens")).toEqual([]);
  });

  it("asks before a tool call the rules leave open: yes runs it, no tells the model", async () => {
    fake.enqueue(
      { kind: "reply", toolCalls: [{ name: "Bash", input: { command: "touch made-by-yes" } }] },
      { kind: "reply", text: "Created it." },
      { kind: "reply", toolCalls: [{ name: "Bash", input: { command: "touch made-by-no" } }] },
      { kind: "reply", text: "Understood, I did not." },
    );
    const agent = await start();
    let from = agent.mark();
    await agent.send("make a file");
    await agent.waitFor("Allow Bash(touch made-by-yes)?", { from });
    agent.press("1");
    await agent.waitFor("Created it.", { from });
    expect(existsSync(join(folders.project, "made-by-yes"))).toBe(true);
    from = agent.mark();
    await agent.send("make another");
    await agent.waitFor("Allow Bash(touch made-by-no)?", { from });
    agent.press(KEYS.escape);
    const denied = await agent.waitFor("Understood, I did not.", { from });
    expect(existsSync(join(folders.project, "made-by-no"))).toBe(false);
    // Drawn once: a second line looked as if the model had tried again.
    expect(denied.split("Bash(touch made-by-no) denied").length - 1).toBe(1);
    const denial = JSON.stringify(fake.requests.at(-1)?.body);
    expect(denial).toContain("The user denied this call");
  });

  it("offers only the rules not allowed already, and lists a rule once", async () => {
    fake.enqueue(
      { kind: "reply", toolCalls: [{ name: "Bash", input: { command: "true && touch made-once" } }] },
      { kind: "reply", text: "Made it." },
      { kind: "reply", toolCalls: [{ name: "Bash", input: { command: "touch made-once" } }] },
      { kind: "reply", text: "Made it again." },
    );
    const agent = await start(["--allowedTools", "Bash(true:*)"]);
    let from = agent.mark();
    await agent.send("make a file");
    const asked = await agent.waitFor("Allow Bash(true && touch made-once)?", { from });
    await agent.waitFor("for this session", { from });
    expect(agent.screen.slice(from)).toContain("2. Yes, and allow Bash(touch made-once:*) for this session");
    expect(asked).not.toMatch(/allow Bash\(true:\*\)/);
    agent.press("2");
    await agent.waitFor("Made it.", { from });
    from = agent.mark();
    await agent.send("make it again");
    await agent.waitFor("Made it again.", { from });
    from = agent.mark();
    await agent.send("/permissions allow Bash(touch made-once:*)");
    await agent.waitFor("(for this session)", { from });
    from = agent.mark();
    await agent.send("/permissions");
    const listed = await agent.waitFor("Bash(true:*)", { from });
    expect(listed.match(/Bash\(touch made-once:\*\)/g)).toHaveLength(1);
  });

  it("Ctrl-C in the middle of a reply cancels the call; the session goes on; Ctrl-C twice exits", async () => {
    fake.enqueue(
      {
        kind: "reply",
        text: "This reply starts streaming and then never finishes, because",
        hangAfterEvents: 4,
      },
      { kind: "reply", text: "Back again." },
    );
    const agent = await start();
    let from = agent.mark();
    await agent.send("tell me a long story");
    await agent.waitFor("This reply starts", { from });
    agent.press(KEYS.ctrlC);
    await agent.waitFor("Interrupted.", { from });
    await agent.waitFor("Press Ctrl-C again to exit.", { from });
    // The provider request was aborted: its connection closed while it hung.
    await expect.poll(() => fake.requests[0]?.closedDuringHang, { timeout: 60_000 }).toBe(true);
    from = agent.mark();
    await agent.send("again");
    await agent.waitFor("Back again.", { from });
    // The conversation sent after the cancel is valid: the partial reply, then the new prompt.
    expect(JSON.stringify(fake.requests.at(-1)?.body)).toContain("tell me a long story");
    agent.press(KEYS.ctrlC);
    await agent.waitFor("Press Ctrl-C again to exit.", { from: agent.mark() - 200 });
    agent.press(KEYS.ctrlC);
    expect(await agent.exited).toBe(0);
  });

  it("reports each MCP server at start-up while idle; /mcp lists them and reconnects one", async () => {
    const later = join(folders.project, "later-server.mjs");
    const mcp = JSON.stringify({
      mcpServers: {
        missing: { command: join(folders.project, "no-such-mcp-server"), args: [] },
        later: { command: process.execPath, args: [later] },
      },
    });
    const agent = await start(["--mcp-config", mcp]);
    // No prompt was sent: the failures are on the screen anyway, one line each, with what to do.
    const shown = await agent.waitFor(/\/mcp\s+reconnect\s+later\s+tries\s+again/);
    expect(shown).toMatch(
      /The MCP server "missing" could not be started: its command "[^"]+no-such-mcp-server" was\s+not\s+found.+\/mcp\s+reconnect\s+missing/s,
    );
    // One line (wrapped at most) with the line of its stderr that says why, not a stack trace.
    expect(shown).toMatch(
      /The MCP server "later" could not be started .+ Its\s+stderr\s+says:\s+Error:\s+Cannot\s+find\s+module/s,
    );
    expect(shown).not.toContain("Module._resolveFilename");
    let from = agent.mark();
    await agent.send("/mcp");
    const listed = await agent.waitFor("/mcp reconnect NAME", { from });
    expect(listed).toMatch(/missing\s+stdio\s+failed/);
    expect(listed).toMatch(/later\s+stdio\s+failed/);
    // The user fixes the server (here: its script appears) and connects it again.
    folders.write("project/later-server.mjs", MINIMAL_MCP_SERVER);
    from = agent.mark();
    await agent.send("/mcp reconnect later");
    await agent.waitFor('MCP server "later" connected: 1 tool.', { from });
    from = agent.mark();
    await agent.send("/mcp");
    await agent.waitFor(/later\s+stdio\s+connected\s+mcp__later__ping/, { from });
    fake.enqueue({ kind: "reply", text: "I see the ping tool." });
    from = agent.mark();
    await agent.send("what tools do you have?");
    await agent.waitFor("I see the ping tool.", { from });
    const tools = sentTools(fake.requests.at(-1));
    expect(tools).toContain("mcp__later__ping");
  });

  it("offers the task tools, and draws a line when a background task ends, with no prompt running", async () => {
    fake.enqueue(
      {
        kind: "reply",
        toolCalls: [
          {
            name: "Bash",
            input: { command: "sleep 1; echo built", run_in_background: true, description: "slow build" },
          },
        ],
      },
      { kind: "reply", text: "The build runs in the background." },
    );
    const agent = await start(["--allowedTools", "Bash"]);
    const from = agent.mark();
    await agent.send("build it in the background");
    await agent.waitFor("The build runs in the background.", { from });
    await agent.waitFor("ask, or /help", { from });
    const tools = sentTools(fake.requests.at(-1));
    expect(tools).toEqual(expect.arrayContaining(["task_output", "task_stop", "task_list", "task_input"]));
    // Nothing is typed: the line comes when the task ends.
    const ended = await agent.waitFor(
      /Task (bash-[a-z0-9]+) \(slow build\) completed, exit code 0 · \/tasks output bash-/,
      {
        from,
      },
    );
    const id = /Task (bash-[a-z0-9]+) \(slow build\)/.exec(ended)?.[1] as string;
    fake.enqueue({ kind: "reply", text: "It printed built." });
    const next = agent.mark();
    await agent.send("did it finish?");
    await agent.waitFor("It printed built.", { from: next });
    // The model is told with this prompt; the screen does not say it twice.
    expect(JSON.stringify(fake.requests.at(-1)?.body)).toContain(`Background task ${id}`);
    expect(agent.screen.slice(next)).not.toContain(`Task ${id} (slow build): finished`);
  });

  it("draws Markdown while it streams and after an interrupt: no #s or **, wrapped items under their text", async () => {
    // The fake streams a text in three pieces; four events in, the heading and the list have arrived.
    const markdown =
      "## Findings\n\n- a **bold** point that is long enough to wrap past the edge of this narrow terminal\n- second point\n\n";
    fake.enqueue({
      kind: "reply",
      text: `${markdown}${"and then the reply goes on, ".repeat(8)}`,
      hangAfterEvents: 5,
    });
    const agent = await startPtyAgent({
      cwd: folders.project,
      env: { HOME: folders.home, ANTHROPIC_BASE_URL: fake.url },
      cols: 60,
    });
    agents.push(agent);
    const from = agent.mark();
    await agent.send("review it");
    const streaming = await agent.waitFor("second point", { from });
    agent.press(KEYS.escape);
    const after = await agent.waitFor("Interrupted.", { from });
    for (const screen of [streaming, after]) {
      expect(screen).toContain("Findings");
      expect(screen).not.toContain("## Findings");
      expect(screen).not.toContain("**");
      expect(screen).toMatch(/• a bold point that is long enough to wrap/);
      // The wrapped rest of the item lines up under its text, not at the screen's edge.
      expect(screen).toMatch(/\n {2}[a-z]+[^\n]*terminal/);
    }
  });

  it("draws an edit as the change it made, numbered, not as the unchanged lines around it", async () => {
    const lines = Array.from({ length: 30 }, (_, index) => `const value${index + 1} = ${index + 1};`);
    folders.write("project/src/values.js", `${lines.join("\n")}\n`);
    fake.enqueue(
      { kind: "reply", toolCalls: [{ name: "Read", input: { file_path: "src/values.js" } }] },
      {
        kind: "reply",
        toolCalls: [
          {
            name: "Edit",
            input: {
              file_path: "src/values.js",
              old_string: "const value15 = 15;",
              new_string: "const value15 = 1500;\nconst value15b = 15;",
            },
          },
        ],
      },
      { kind: "reply", text: "Changed value15." },
    );
    const agent = await start(["--permission-mode", "acceptEdits"]);
    const from = agent.mark();
    await agent.send("change value15");
    const screen = (await agent.waitFor("Changed value15.", { from })).slice(
      (await agent.waitFor("Edit(", { from })).indexOf("Edit("),
    );
    expect(screen).toContain("2 lines added, 1 removed");
    expect(screen).toMatch(/15 - const value15 = 15;/);
    expect(screen).toMatch(/15 \+ const value15 = 1500;/);
    expect(screen).toMatch(/16 \+ const value15b = 15;/);
    // The lines around the change are the file's business, not the screen's.
    expect(screen).not.toContain("const value13 = 13;");
  });

  it("keeps to the contextWindow setting; /model suggests the model meant and says what it assumes for one of its own", async () => {
    folders.write("home/.unforget/settings.json", { contextWindow: "20K" });
    const agent = await start();
    let from = agent.mark();
    await agent.send("/context");
    const context = await agent.waitFor("window 20K", { from });
    // Before any request the bar reads the same estimate as the table below it, not 0.
    const total = /total +([\d.]+K?)/.exec(context)?.[1];
    expect(context).toContain(` ${total} / `);
    from = agent.mark();
    await agent.send("/model claude-sonet-4-6");
    await agent.waitFor("did you mean claude-sonnet-4-6?", { from });
    from = agent.mark();
    await agent.send("/model house-llm");
    await agent.waitFor("Model: house-llm.", { from });
    const screen = await agent.waitFor('"models": {"house-llm"', { from });
    expect(screen).toContain("Unknown model house-llm: unforget assumes a 128K-token window");
    // Node's own warning, which named a setting the app does not have, never reaches the screen.
    expect(agent.screen).not.toMatch(/\(node:\d+\)|UNFORGET_UNKNOWN_MODEL/);
  });

  it("--resume continues a session after Ctrl-D and draws its last turns; /resume keeps the permission mode", async () => {
    fake.enqueue(
      { kind: "reply", text: "Noted: alpha." },
      { kind: "reply", text: "Noted: beta." },
      {
        kind: "reply",
        text: "Reading it.",
        toolCalls: [{ name: "Read", input: { file_path: "notes.txt" } }],
      },
      { kind: "reply", text: "The notes say gamma." },
      { kind: "reply", text: "The code word is tangerine." },
    );
    folders.write("project/notes.txt", "gamma\n");
    const first = await start();
    for (const [prompt, reply] of [
      ["remember alpha", "Noted: alpha."],
      ["remember beta", "Noted: beta."],
      ["read the notes", "The notes say gamma."],
      ["remember tangerine", "The code word is tangerine."],
    ]) {
      const turn = first.mark();
      await first.send(prompt as string);
      await first.waitFor(reply as string, { from: turn });
      await first.waitFor("ask, or /help", { from: turn });
    }
    const sessionId = /Session ([0-9a-f-]{36})/.exec(first.screen)?.[1];
    expect(sessionId).toBeDefined();
    first.press(KEYS.ctrlD);
    expect(await first.exited).toBe(0);
    fake.enqueue({ kind: "reply", text: "It was tangerine." });
    const second = await start(["--resume", sessionId as string]);
    await second.waitFor(`Resumed ${sessionId}`);
    // The last turns are drawn as they were, after a line that counts those that are not.
    const redrawn = await second.waitFor("The code word is tangerine.");
    expect(redrawn).toContain("1 earlier turn not drawn");
    expect(redrawn).not.toContain("Noted: alpha.");
    for (const text of [
      "> remember beta",
      "Noted: beta.",
      "Read(notes.txt)",
      "The notes say gamma.",
      "> remember tangerine",
    ])
      expect(redrawn).toContain(text);
    await second.send("what was the word?");
    await second.waitFor("It was tangerine.");
    expect(JSON.stringify(fake.requests.at(-1)?.body)).toContain("remember tangerine");

    // One rule for the mode: what the user set in this run stays across /clear and /resume.
    let from = second.mark();
    await second.send("/permissions mode acceptEdits");
    await second.waitFor("Permission mode: acceptEdits.", { from });
    from = second.mark();
    await second.send("/clear");
    await second.waitFor("the context is empty", { from });
    from = second.mark();
    await second.send("/resume 1");
    await second.waitFor(`Resumed ${sessionId}`, { from });
    await second.waitFor("It was tangerine.", { from });
    from = second.mark();
    await second.send("/permissions");
    await second.waitFor("Mode: acceptEdits.", { from });
  });

  it("memory: one proposal per new stretch, none repeated, shown as a diff before approval; no selector call for a small store", async () => {
    const memoryFile = (days: string) =>
      `---\nname: reviews\ndescription: The user reviews PRs on ${days}\ntype: user\n---\nReviews PRs on ${days}.\n`;
    const extraction = (request: RecordedRequest) =>
      JSON.stringify(request.body).includes("[unforget memory extraction]");
    fake.setResponder((request) => {
      if (isSummaryRequest(request)) return SUMMARY_STEP;
      if (!extraction(request)) return { kind: "reply", text: "Noted." };
      const text = JSON.stringify(request.body);
      if (text.includes("tool_result")) return { kind: "reply", text: "Done." };
      const days = text.includes("Thursdays") ? "Mondays and Thursdays" : "Mondays";
      return {
        kind: "reply",
        toolCalls: [{ name: "memory_write", input: { name: "user_reviews.md", content: memoryFile(days) } }],
      };
    });
    const extractions = () => fake.requests.filter(extraction).length;
    const session = async (args: string[], work: (agent: PtyAgent) => Promise<void>) => {
      const agent = await start(args);
      await work(agent);
      agent.press(KEYS.ctrlD);
      expect(await agent.exited).toBe(0);
    };
    const turn = async (agent: PtyAgent, line: string, until: string | RegExp) => {
      const from = agent.mark();
      await agent.send(line);
      await agent.waitFor(until, { from });
      await agent.waitFor("ask, or /help", { from });
    };

    await session([], async (agent) => {
      await turn(agent, "I review PRs on Mondays.", "Noted.");
      await turn(agent, "/compact", /Nothing was compacted|Compacted \(/);
      // Nothing new since: neither this compaction nor the end reads the conversation again.
      await turn(agent, "/compact", /Nothing was compacted|Compacted \(/);
    });
    expect(extractions()).toBe(2);
    await session(["--continue"], async (agent) => {
      await turn(agent, "Again: PR reviews are on Mondays.", "Noted.");
    });
    // The same memory again: not proposed a second time.
    expect(extractions()).toBe(4);
    let proposalId = "";
    await session([], async (agent) => {
      await turn(agent, "/memory", "Proposals waiting for you");
      const listed = agent.screen;
      const ids = [...listed.matchAll(/^\s+1\. ([0-9TZ-]+-[0-9a-f]{8})\s+user_reviews\.md/gm)].map(
        (match) => match[1],
      );
      expect(ids).toHaveLength(1);
      proposalId = ids[0] as string;
      await turn(agent, `/memory show ${proposalId}`, "applies it");
      expect(agent.screen).toContain("new user_reviews.md");
      expect(agent.screen).toContain("+Reviews PRs on Mondays.");
      await turn(agent, `/memory approve ${proposalId}`, `Approved ${proposalId}: applied user_reviews.md`);
      const selectorCalls = fake.requests.length;
      await turn(agent, "PR reviews are now on Mondays and Thursdays.", "Noted.");
      // One small memory: attached whole, no select_memories call before the prompt.
      expect(
        fake.requests
          .slice(selectorCalls)
          .some((request) => JSON.stringify(request.body).includes("select_memories")),
      ).toBe(false);
      expect(JSON.stringify(fake.requests.at(-1)?.body)).toContain("Reviews PRs on Mondays.");
    });
    await session([], async (agent) => {
      // Told at start-up; named by its number.
      await agent.waitFor("1 memory proposal waits for your review: /memory lists it.");
      await turn(agent, "/memory show 1", "applies it");
      const shown = agent.screen;
      expect(shown).toContain("update user_reviews.md");
      expect(shown).toContain("-Reviews PRs on Mondays.");
      expect(shown).toContain("+Reviews PRs on Mondays and Thursdays.");
    });
  });

  it("asks whether to trust the folder before its hooks run, remembers yes, and asks again when they change", async () => {
    const hook = (marker: string) => ({
      hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: `touch ${marker}` }] }] },
    });
    folders.write("project/.unforget/settings.json", hook("marker-one"));
    fake.setResponder(() => ({ kind: "reply", text: "ok then" }));
    const untrusted = await start([], "Do you trust the files in this folder?");
    await untrusted.waitFor("hook UserPromptSubmit: touch marker-one");
    untrusted.press("2");
    await untrusted.waitFor("ask, or /help");
    await untrusted.send("hi");
    await untrusted.waitFor("ok then");
    expect(existsSync(join(folders.project, "marker-one"))).toBe(false);
    untrusted.press(KEYS.ctrlD);
    await untrusted.exited;

    const trusting = await start([], "Do you trust the files in this folder?");
    trusting.press("1");
    await trusting.waitFor("ask, or /help");
    await trusting.send("hi");
    await trusting.waitFor("ok then");
    expect(existsSync(join(folders.project, "marker-one"))).toBe(true);
    expect(readFileSync(join(folders.home, ".unforget", "settings.json"), "utf8")).toContain(folders.project);
    trusting.press(KEYS.ctrlD);
    await trusting.exited;

    // Trusted: no question.
    const trusted = await start();
    expect(trusted.screen).not.toContain("Do you trust");
    trusted.press(KEYS.ctrlD);
    await trusted.exited;

    folders.write("project/.unforget/settings.json", hook("marker-two"));
    const changed = await start([], "has changed since you trusted it");
    // What is new since the yes is marked as such.
    await changed.waitFor("+ hook UserPromptSubmit: touch marker-two (new)");
  });

  it("names a base URL of one's own in the header; an unreachable one says what failed and what to do", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const agent = await startPtyAgent({
      cwd: folders.project,
      env: { HOME: folders.home, ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` },
    });
    agents.push(agent);
    expect(agent.screen).toContain(`anthropic at http://127.0.0.1:${port} (ANTHROPIC_BASE_URL is set)`);
    const from = agent.mark();
    await agent.send("hello");
    const screen = await agent.waitFor("Send the prompt again to retry.", { from });
    expect(screen).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
    expect(screen).not.toContain("retried automatically");
  });

  it("says no provider is configured before it asks about trust", async () => {
    folders.write("project/.unforget/settings.json", {
      hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: "touch marker" }] }] },
    });
    const agent = await startPtyAgent({ cwd: folders.project, env: { HOME: folders.home }, ready: false });
    agents.push(agent);
    expect(await agent.exited).toBe(1);
    expect(agent.screen).toContain("No model provider is configured");
    expect(agent.screen).not.toContain("Do you trust");
  });

  it("loads plugin files: one vetoes proactive compaction, one that fails is reported with its path", async () => {
    // The cheap layers off: what reaches the threshold is the summary, which PreCompact may veto.
    folders.write("home/.unforget/settings.json", {
      compaction: {
        threshold: { tokens: 12_000 },
        layers: { "tool-result-budget": false, microcompact: false, collapse: false },
      },
    });
    folders.write(
      "project/.unforget/plugins/no-auto-compact.js",
      `export default {
  name: "no-auto-compact",
  apply(hooks) {
    hooks.preCompact.tapPromise("no-auto-compact", async (result, event) =>
      event.trigger === "manual" ? result : { ...result, veto: { reason: "this team compacts by hand" } });
  },
};
`,
    );
    const broken = folders.write(
      "project/.unforget/plugins/broken.js",
      `throw new Error("missing config");\n`,
    );
    writeDataFiles(20);
    fake.setResponder(readingModel);
    const agent = await start([], "Do you trust the files in this folder?");
    await agent.waitFor("no-auto-compact.js");
    agent.press("1");
    await agent.waitFor(`Plugin ${broken} failed to load (missing config)`);
    await agent.waitFor("Plugin no-auto-compact loaded (.unforget/plugins/no-auto-compact.js).");
    await agent.waitFor("ask, or /help");
    let from = agent.mark();
    for (let index = 0; index < 20 && !agent.screen.slice(from).includes("vetoed by"); index++) {
      const turn = agent.mark();
      await agent.send(`read file ${index}`);
      await agent.waitFor(`Read file ${index}.`, { from: turn });
      await agent.waitFor("ask, or /help", { from: turn });
    }
    const screen = agent.screen.slice(from);
    expect(screen).toContain("vetoed by no-auto-compact: this team compacts by hand");
    // No summary replaced the conversation (a summary started early in the background is dropped).
    expect(screen).not.toMatch(/Compacted: (summary|full|session-memory)/);
    // A manual compaction is not vetoed.
    from = agent.mark();
    await agent.send("/compact");
    await agent.waitFor(/Compacted \(/, { from });
  });
});
