import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { SUMMARY_SECTIONS } from "@unforget/compact";
import {
  type AnthropicFakeServer,
  type FakeStep,
  type RecordedRequest,
  startAnthropicFake,
} from "@unforget/testing/fakes";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { type CliRun, runCliProcess } from "./run-cli.ts";

/** A user's home and a project folder, both fresh: no settings, no sessions, no trust. */
export interface AgentFolders {
  root: string;
  home: string;
  project: string;
  /** Writes a file under `root` (parents created), e.g. `project/.unforget/settings.json`. */
  write(path: string, content: string | object): string;
  cleanup(): void;
}

export function agentFolders(prefix = "agent"): AgentFolders {
  const root = mkdtempSync(join(tmpdir(), `unforget-${prefix}-`));
  const home = join(root, "home");
  const project = join(root, "project");
  mkdirSync(home);
  mkdirSync(project);
  return {
    root,
    home,
    project,
    write(path, content) {
      const file = join(root, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
      return file;
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Runs the built CLI in `cwd` with only `env` (and PATH); stdin is a pipe (empty unless `stdin` is given). */
export function runAgent(
  argv: readonly string[],
  options: { cwd: string; env: Record<string, string>; stdin?: string },
): Promise<CliRun> {
  return runCliProcess(argv, { cwd: options.cwd, env: options.env, stdin: options.stdin ?? "" });
}

/** The text of a request's last user message (what the model was just told). */
export function lastUserText(request: RecordedRequest): string {
  const body = request.body as { messages?: { role: string; content: unknown }[] } | undefined;
  const last = body?.messages?.filter((message) => message.role === "user").at(-1);
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  return (last.content as { type: string; text?: string; content?: unknown }[])
    .map((block) => (block.type === "text" ? block.text : JSON.stringify(block.content ?? "")))
    .join("\n");
}

/** The system prompt of a request, as text. */
export function systemText(request: RecordedRequest): string {
  const system = (request.body as { system?: unknown } | undefined)?.system;
  if (typeof system === "string") return system;
  return Array.isArray(system) ? system.map((block: { text?: string }) => block.text ?? "").join("\n") : "";
}

/** True for a model call that asks for a compaction summary (the compaction prompt forbids tool calls). */
export function isSummaryRequest(request: RecordedRequest): boolean {
  return JSON.stringify(request.body).includes("a tool call would waste it");
}

/** A step that writes a summary in the sections compaction asks for. */
export const SUMMARY_STEP: FakeStep = {
  kind: "reply",
  text: `<summary>\n${SUMMARY_SECTIONS.map((title, index) => `${index + 1}. ${title}:\nwork so far`).join("\n\n")}\n</summary>`,
};

/**
 * One Anthropic fake for the file (reset before each test) and fresh folders for each test, removed after it:
 * read `suite.fake` and `suite.folders` inside the tests.
 */
export function anthropicSuite(prefix: string): {
  readonly fake: AnthropicFakeServer;
  readonly folders: AgentFolders;
} {
  const state = {} as { fake: AnthropicFakeServer; folders: AgentFolders };
  beforeAll(async () => {
    state.fake = await startAnthropicFake();
  });
  afterAll(() => state.fake.close());
  beforeEach(() => {
    state.fake.reset();
    state.folders = agentFolders(prefix);
  });
  afterEach(() => state.folders.cleanup());
  return state;
}
