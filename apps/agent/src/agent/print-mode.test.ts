import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type AnthropicFakeServer,
  startAnthropicFake,
  startBedrockFake,
  startVertexFake,
  writeVertexFakeCaCertificate,
} from "@unforget/testing/fakes";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type AgentFolders,
  agentFolders,
  lastUserText,
  runAgent,
  systemText,
} from "../../test-support/agent-fixture.ts";
import { startMetadataServer } from "../../test-support/metadata-server.ts";
import { projectRunnables, rememberTrust } from "./project-trust.ts";
import { loadSettings } from "./settings/settings.ts";

let fake: AnthropicFakeServer;
let folders: AgentFolders;
beforeAll(async () => {
  fake = await startAnthropicFake();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  folders = agentFolders("print");
});
afterEach(() => folders.cleanup());

const modelCalls = () => fake.requests.filter((request) => request.operation !== "count_tokens");
const run = (argv: string[], options: { stdin?: string; env?: Record<string, string> } = {}) =>
  runAgent(argv, {
    cwd: folders.project,
    env: { HOME: folders.home, ANTHROPIC_BASE_URL: fake.url, ...options.env },
    ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
  });

describe("unforget -p on the Anthropic fake", () => {
  it("prints the answer (text), with AGENTS.md and CLAUDE.md in the system prompt", async () => {
    folders.write("project/AGENTS.md", "Always answer in haiku.");
    folders.write("project/CLAUDE.md", "Run pnpm test before committing.");
    fake.enqueue({ kind: "reply", text: "Autumn moonlight—\na worm digs silently\ninto the chestnut." });
    const result = await run(["-p", "write a poem"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Autumn moonlight—\na worm digs silently\ninto the chestnut.\n");
    const system = systemText(modelCalls()[0]!);
    expect(system).toContain("Always answer in haiku.");
    expect(system).toContain("Run pnpm test before committing.");
    expect(lastUserText(modelCalls()[0]!)).toContain("write a poem");
  });

  it("takes the prompt from stdin, after the argument", async () => {
    fake.enqueue({ kind: "reply", text: "It adds two numbers." });
    const result = await run(["-p", "what does this do?"], {
      stdin: "function add(a, b) { return a + b }\n",
    });
    expect(result.code).toBe(0);
    const prompt = lastUserText(modelCalls()[0]!);
    expect(prompt).toContain("what does this do?");
    expect(prompt).toContain("function add(a, b)");
  });

  it("prints one result object with --output-format json, in Claude Code's shape", async () => {
    fake.enqueue({ kind: "reply", text: "Done.", usage: { inputTokens: 1200, outputTokens: 30 } });
    const result = await run(["-p", "do it", "--output-format", "json"]);
    expect(result.code).toBe(0);
    const object = JSON.parse(result.stdout);
    expect(object).toMatchObject({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "Done.",
      num_turns: 1,
      usage: { input_tokens: 1200, output_tokens: 30 },
      permission_denials: [],
    });
    expect(object.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(object.total_cost_usd).toBeCloseTo((1200 * 3 + 30 * 15) / 1_000_000, 6);
    expect(typeof object.duration_ms).toBe("number");
  });

  it("streams init, each assistant and tool-result message, then the result (stream-json)", async () => {
    folders.write("project/notes.txt", "the answer is 42\n");
    fake.enqueue(
      { kind: "reply", text: "Reading.", toolCalls: [{ name: "Read", input: { file_path: "notes.txt" } }] },
      { kind: "reply", text: "It says 42." },
    );
    const result = await run(["-p", "what do the notes say?", "--output-format", "stream-json"]);
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => `${line.type}${line.subtype ? `:${line.subtype}` : ""}`)).toEqual([
      "system:init",
      "assistant",
      "user",
      "assistant",
      "result:success",
    ]);
    expect(lines[0]).toMatchObject({
      cwd: folders.project,
      model: "claude-sonnet-4-6",
      permissionMode: "default",
    });
    expect(lines[0].tools).toContain("Read");
    expect(lines[1].message.content[1]).toMatchObject({ type: "tool_use", name: "Read" });
    expect(JSON.stringify(lines[2].message.content[0])).toContain("the answer is 42");
    expect(lines[4]).toMatchObject({ result: "It says 42.", num_turns: 2 });
    const sessionIds = new Set(lines.map((line) => line.session_id));
    expect(sessionIds.size).toBe(1);
  });

  it("says how each MCP server ended: a missing command is reported on stderr and as failed in init", async () => {
    const mcp = JSON.stringify({
      mcpServers: { missing: { command: join(folders.project, "no-such-mcp-server"), args: [] } },
    });
    fake.enqueue({ kind: "reply", text: "Fine." }, { kind: "reply", text: "Fine again." });
    const text = await run(["-p", "hi", "--mcp-config", mcp]);
    expect(text.code).toBe(0);
    expect(text.stderr).toMatch(
      /^unforget: The MCP server "missing" could not be started: its command ".+no-such-mcp-server" was not found/m,
    );
    const streamed = await run(["-p", "hi", "--mcp-config", mcp, "--output-format", "stream-json"]);
    const init = JSON.parse(streamed.stdout.split("\n")[0]!);
    expect(init.mcp_servers).toEqual([
      { name: "missing", status: "failed", error: expect.stringContaining("was not found") },
    ]);
    // The tools the model is offered, the task tools among them (Bash can start background work).
    const body = modelCalls().at(-1)?.body as { tools?: { name: string }[] } | undefined;
    const sent = (body?.tools ?? []).map((tool) => tool.name);
    expect(init.tools).toEqual(sent);
    expect(init.tools).toEqual(expect.arrayContaining(["Bash", "task_output", "task_stop"]));
  });

  it("with --mcp-nonblocking, answers while a server is still connecting, and says so in init and on stderr", async () => {
    // A server that never answers MCP's handshake: without the flag, the first request would wait for it.
    const mcp = JSON.stringify({
      mcpServers: { silent: { command: process.execPath, args: ["-e", "process.stdin.resume()"] } },
    });
    fake.enqueue({ kind: "reply", text: "Answered at once." });
    const streamed = await run([
      "-p",
      "hi",
      "--mcp-config",
      mcp,
      "--mcp-nonblocking",
      "--output-format",
      "stream-json",
    ]);
    expect(streamed.code).toBe(0);
    const lines = streamed.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines[0].mcp_servers).toEqual([{ name: "silent", status: "connecting" }]);
    expect(lines.at(-1)).toMatchObject({ type: "result", result: "Answered at once." });
    expect(streamed.stderr).toContain('MCP server "silent" is still connecting.');
    expect(modelCalls()).toHaveLength(1);
  });

  it("stops at --max-turns with exit code 3 and error_max_turns", async () => {
    fake.enqueue({ kind: "reply", toolCalls: [{ name: "Glob", input: { pattern: "*" } }] });
    const result = await run(["-p", "look around", "--max-turns", "1", "--output-format", "json"]);
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({
      subtype: "error_max_turns",
      is_error: true,
      num_turns: 1,
    });
    expect(modelCalls()).toHaveLength(1);
  });

  it("denies what would need a question (no one to ask) and lists it in permission_denials", async () => {
    fake.enqueue(
      { kind: "reply", toolCalls: [{ name: "Bash", input: { command: "touch created-by-bash" } }] },
      { kind: "reply", text: "I could not." },
    );
    const result = await run(["-p", "make a file", "--output-format", "json"]);
    expect(result.code).toBe(0);
    const object = JSON.parse(result.stdout);
    expect(object.permission_denials).toEqual([
      expect.objectContaining({ tool_name: "Bash", tool_input: { command: "touch created-by-bash" } }),
    ]);
    expect(existsSync(join(folders.project, "created-by-bash"))).toBe(false);
  });

  it("runs an allowed command with --allowedTools", async () => {
    fake.enqueue(
      { kind: "reply", toolCalls: [{ name: "Bash", input: { command: "touch created-by-bash" } }] },
      { kind: "reply", text: "Made it." },
    );
    const result = await run(["-p", "make a file", "--allowedTools", "Bash(touch:*)"]);
    expect(result.code).toBe(0);
    expect(existsSync(join(folders.project, "created-by-bash"))).toBe(true);
  });

  it("continues a session with --resume and --continue", async () => {
    fake.enqueue({ kind: "reply", text: "Noted: the code word is tangerine." });
    const first = await run(["-p", "remember the code word tangerine", "--output-format", "json"]);
    const sessionId = JSON.parse(first.stdout).session_id as string;
    fake.enqueue({ kind: "reply", text: "tangerine" });
    const second = await run([
      "-p",
      "what was the code word?",
      "--resume",
      sessionId.slice(0, 8),
      "--output-format",
      "json",
    ]);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout).session_id).toBe(sessionId);
    expect(JSON.stringify(modelCalls()[1]?.body)).toContain("remember the code word tangerine");
    fake.enqueue({ kind: "reply", text: "still tangerine" });
    const third = await run(["-p", "and now?", "--continue"]);
    expect(third.stdout).toBe("still tangerine\n");
    expect(JSON.stringify(modelCalls()[2]?.body)).toContain("what was the code word?");
    const unknown = await run(["-p", "hi", "--resume", "does-not-exist"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("--resume does-not-exist: there is no such session");
  });

  it("with no provider: lists each provider's variables, names unforget replay, exit 1, no request", async () => {
    const result = await runAgent(["-p", "hi"], { cwd: folders.project, env: { HOME: folders.home } });
    expect(result.code).toBe(1);
    for (const text of ["ANTHROPIC_API_KEY", "AWS_REGION", "GOOGLE_CLOUD_PROJECT", "unforget replay"])
      expect(result.stderr).toContain(text);
    expect(result.stdout).toBe("");
    expect(modelCalls()).toHaveLength(0);
  });

  it("refuses a mistyped model with the one meant; a model of one's own gets one line naming the setting for its limits", async () => {
    const typo = await run(["-p", "hi", "--model", "claude-sonet-4-6"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("did you mean claude-sonnet-4-6?");
    expect(modelCalls()).toHaveLength(0);

    fake.setResponder(() => ({ kind: "reply", text: "ok" }));
    const own = await run(["-p", "hi", "--model", "house-llm"]);
    expect(own.code).toBe(0);
    // The app's line, not Node's warning (which named a setting the app does not have).
    expect(own.stderr).toBe(
      'unforget: Unknown model house-llm: unforget assumes a 128K-token window and 8,192 output tokens. If it has others, set them in the settings: "models": {"house-llm": {"contextWindow": …, "maxOutputTokens": …}}.\n',
    );
    // Its limits in the settings: known, no line, and the output limit is the one given.
    folders.write("home/.unforget/settings.json", {
      models: { "house-llm": { contextWindow: 64_000, maxOutputTokens: 2_000 } },
    });
    const known = await run(["-p", "hi", "--model", "house-llm"]);
    expect(known.stderr).toBe("");
    expect((modelCalls().at(-1)?.body as { max_tokens?: number } | undefined)?.max_tokens).toBe(2_000);
  });

  it("says which plugins loaded (--verbose), and where a plugin's syntax error is", async () => {
    folders.write(
      "project/.unforget/plugins/good.js",
      'export default { name: "good", apply(hooks) { hooks.preCompact.tap("good", (r) => r); } };\n',
    );
    const broken = folders.write(
      "project/.unforget/plugins/broken.js",
      'export default {\n  name: "broken",\n  apply(hooks) {\n    hooks.preCompact.tap("broken", (r) => r);\n  }}\n};\n',
    );
    fake.setResponder(() => ({ kind: "reply", text: "ok" }));
    const verbose = await run(["-p", "hi", "--trust-project", "--verbose"]);
    expect(verbose.code).toBe(0);
    expect(verbose.stderr).toContain(
      `unforget: Plugin ${broken} failed to load (line 6, column 1: Unexpected token '}'); unforget goes on without it.`,
    );
    expect(verbose.stderr).toContain("unforget: plugin good loaded (.unforget/plugins/good.js)");
    const quiet = await run(["-p", "hi", "--trust-project"]);
    expect(quiet.stderr).not.toContain("loaded (");
  });

  it("says where a JSON file or text breaks by line and column, not by character position", async () => {
    const settings = folders.write(
      "project/extra.json",
      '{\n  "model": "claude-sonnet-4-6"\n  "provider": "anthropic"\n}\n',
    );
    const bad = await run(["-p", "hi", "--settings", settings]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      `unforget: ${settings} is not valid JSON, line 3, column 3: a comma was expected; fix the file.\n`,
    );
    const inline = await run(["-p", "hi", "--mcp-config", '{"mcpServers": {"a": {"command": "x",}}}']);
    expect(inline.stderr).toBe(
      "unforget: --mcp-config is not valid JSON, line 1, column 38: a comma before } is not allowed in JSON.\n",
    );
    const mcp = folders.write(
      "project/.mcp.json",
      '{\n  "mcpServers": {\n    "a": { "command": x }\n  }\n}\n',
    );
    const project = await run(["-p", "hi"]);
    expect(project.stderr).toContain(`${mcp} is not valid JSON, line 3, column 23: this is not a JSON value`);
    expect(modelCalls()).toHaveLength(0);
  });

  it("offers the history tools and says so in the system prompt, unless the settings turn them off", async () => {
    fake.enqueue({ kind: "reply", text: "ok" });
    expect((await run(["-p", "hi"])).code).toBe(0);
    const names = (call: number) =>
      ((modelCalls()[call]?.body as { tools?: { name: string }[] } | undefined)?.tools ?? []).map(
        (tool) => tool.name,
      );
    expect(names(0)).toEqual(expect.arrayContaining(["context_status", "history_search", "history_read"]));
    expect(systemText(modelCalls()[0]!)).toContain("history_search finds anything");
    folders.write("home/.unforget/settings.json", { history: false });
    fake.enqueue({ kind: "reply", text: "ok" });
    expect((await run(["-p", "hi"])).code).toBe(0);
    expect(names(1)).not.toContain("history_search");
    expect(names(1)).not.toContain("context_status");
    expect(systemText(modelCalls()[1]!)).not.toContain("history_search");
  });

  it("refuses a settings file with a bad key, naming the file and the key", async () => {
    const file = folders.write("home/.unforget/settings.json", { compaction: { treshold: { percent: 50 } } });
    const result = await run(["-p", "hi"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(file);
    expect(result.stderr).toContain('"treshold" is not a setting of compaction; did you mean "threshold"?');
    folders.write("home/.unforget/settings.json", {});
    const bad = folders.write("project/.unforget/settings.json", {
      permissions: { allow: ["Bash(npm test"] },
    });
    const second = await run(["-p", "hi"]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`${bad}: permissions.allow[0]`);
    expect(modelCalls()).toHaveLength(0);
  });

  it("-p without an answer runs no project hook until the folder is trusted, and again after its hooks change", async () => {
    const hook = (marker: string) => ({
      hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: `touch ${marker}` }] }] },
    });
    folders.write("project/.unforget/settings.json", hook("first-marker"));
    fake.setResponder(() => ({ kind: "reply", text: "ok" }));
    const skipped = await run(["-p", "hi"]);
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).toContain("not trusted");
    expect(skipped.stderr).toContain("touch first-marker");
    expect(existsSync(join(folders.project, "first-marker"))).toBe(false);

    const once = await run(["-p", "hi", "--trust-project"]);
    expect(once.code).toBe(0);
    expect(existsSync(join(folders.project, "first-marker"))).toBe(true);

    // Trusted and remembered (as the REPL's "yes" does): it runs without the flag.
    const loaded = await loadSettings({ projectDir: folders.project, homeDir: folders.home });
    await rememberTrust(loaded.userFile, folders.project, await projectRunnables(folders.project, loaded));
    expect(readFileSync(loaded.userFile, "utf8")).toContain(folders.project);
    const remembered = await run(["-p", "hi"]);
    expect(remembered.stderr).toBe("");

    // The hook list changed: not trusted any more until the user says so again.
    folders.write("project/.unforget/settings.json", hook("second-marker"));
    const changed = await run(["-p", "hi"]);
    expect(changed.stderr).toContain("changed since you trusted it");
    expect(existsSync(join(folders.project, "second-marker"))).toBe(false);
  });
});

describe("unforget -p on the Bedrock and Vertex fakes", () => {
  it("runs on Bedrock from AWS variables", async () => {
    const bedrock = await startBedrockFake();
    try {
      bedrock.enqueue({ kind: "reply", text: "hello from bedrock" });
      const result = await runAgent(["-p", "hi", "--output-format", "json"], {
        cwd: folders.project,
        env: {
          HOME: folders.home,
          AWS_REGION: bedrock.region,
          AWS_ACCESS_KEY_ID: bedrock.credentials.accessKeyId,
          AWS_SECRET_ACCESS_KEY: bedrock.credentials.secretAccessKey,
          AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.url,
          AWS_CONFIG_FILE: join(folders.home, "aws-config"),
          AWS_SHARED_CREDENTIALS_FILE: join(folders.home, "aws-credentials"),
        },
      });
      // The AWS SDK's own notice about Node versions may be on stderr; nothing of unforget's.
      expect(result.stderr).not.toContain("unforget:");
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ subtype: "success", result: "hello from bedrock" });
      expect(bedrock.requests.some((request) => request.path.includes("converse"))).toBe(true);
    } finally {
      await bedrock.close();
    }
  });

  it("runs on Vertex from Google variables (credentials from a metadata server)", async () => {
    const vertex = await startVertexFake({ requireAccessToken: "metadata-token" });
    const metadata = await startMetadataServer("metadata-token");
    try {
      vertex.enqueue({ kind: "reply", text: "hello from vertex" });
      const result = await runAgent(["-p", "hi", "--output-format", "stream-json"], {
        cwd: folders.project,
        env: {
          HOME: folders.home,
          GOOGLE_CLOUD_PROJECT: "unforget-test",
          GOOGLE_CLOUD_LOCATION: "us-central1",
          GOOGLE_VERTEX_API_ENDPOINT: vertex.endpoint,
          METADATA_SERVER_DETECTION: "assume-present",
          GCE_METADATA_HOST: metadata.host,
          NODE_EXTRA_CA_CERTS: writeVertexFakeCaCertificate(),
        },
      });
      // The Vertex SDK's deprecation notice is on stderr, once, as one line; no other line of unforget's.
      const notices = result.stderr.split("\n").filter((line) => line.startsWith("unforget:"));
      expect(notices).toEqual([
        expect.stringMatching(/^unforget: @google-cloud\/vertexai says: .*deprecated/),
      ]);
      expect(result.code).toBe(0);
      const lines = result.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(lines[0]).toMatchObject({
        type: "system",
        subtype: "init",
        provider: "vertex",
        model: "gemini-2.5-pro",
      });
      expect(lines.at(-1)).toMatchObject({ type: "result", result: "hello from vertex" });
    } finally {
      await metadata.close();
      await vertex.close();
    }
  });
});
