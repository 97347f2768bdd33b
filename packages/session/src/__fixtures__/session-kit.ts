import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SUMMARY_SECTIONS } from "@unforget/compact";
import {
  contentBlocks,
  findToolPairViolations,
  type Message,
  type ModelProvider,
  type Tool,
  type ToolPairViolation,
} from "@unforget/core";
import { createAnthropicProvider } from "@unforget/provider-anthropic";
import { createBedrockProvider } from "@unforget/provider-bedrock";
import { createVertexProvider } from "@unforget/provider-vertex";
import {
  type AnthropicFakeServer,
  type FakeProviderServer,
  startAnthropicFake,
  startBedrockFake,
  startVertexFake,
} from "@unforget/testing/fakes";
import { readTranscript, toRequestMessages } from "@unforget/transcript";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { SessionEvent } from "../loop/session-events.ts";

/** A temporary folder, removed by `cleanup`. */
export async function tempDir(prefix: string): Promise<{ path: string; cleanup(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), `unforget-session-${prefix}-`));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

/** A temporary folder for each test of the file (made before it, removed after it); read `path` inside tests. */
export function tempDirPerTest(prefix: string): { readonly path: string } {
  let dir: { path: string; cleanup(): Promise<void> } | undefined;
  beforeEach(async () => {
    dir = await tempDir(prefix);
  });
  afterEach(async () => {
    await dir?.cleanup();
  });
  return {
    get path() {
      return dir!.path;
    },
  };
}

/** The Anthropic fake and a provider pointed at it (no retries: a scripted error reaches the loop). */
export async function anthropicSetup() {
  const fake: AnthropicFakeServer = await startAnthropicFake();
  const provider = createAnthropicProvider({
    apiKey: "sk-ant-test",
    baseURL: fake.url,
    maxRetries: 0,
    env: {},
  });
  return { fake, provider };
}

/** A fake provider server and a provider pointed at it, for the end-to-end tests that run on all three. */
export interface ProviderSetup {
  name: "anthropic" | "bedrock" | "vertex";
  fake: FakeProviderServer;
  provider: ModelProvider;
  model: string;
}

/** Starts the named fake and a provider on it (no retries: scripted errors reach the loop). */
export async function startProvider(name: ProviderSetup["name"]): Promise<ProviderSetup> {
  if (name === "anthropic") {
    const { fake, provider } = await anthropicSetup();
    return { name, fake, provider, model: "claude-sonnet-4-6" };
  }
  if (name === "bedrock") {
    const fake = await startBedrockFake();
    const provider = createBedrockProvider({
      region: fake.region,
      baseURL: fake.url,
      credentials: fake.credentials,
      env: {},
      maxRetries: 0,
    });
    return { name, fake, provider, model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0" };
  }
  const fake = await startVertexFake();
  const provider = createVertexProvider({
    project: "unforget-test",
    location: "us-central1",
    baseURL: fake.url,
    accessToken: "fake-token",
    maxRetries: 0,
    env: {},
  });
  return { name, fake, provider, model: "gemini-2.5-pro" };
}

export const PROVIDER_NAMES = ["anthropic", "bedrock", "vertex"] as const;

/** Echoes its `text` input: read-only and concurrency-safe. */
export const echoTool: Tool = {
  name: "echo",
  description: "Repeats the text.",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string" } },
    required: ["text"],
    additionalProperties: false,
  },
  readOnly: true,
  concurrencySafe: true,
  async execute(input) {
    return { content: `echo: ${String(input.text)}`, isError: false };
  },
};

/** A tool that records when its calls start and end, to see what ran together. */
export function recordingTool(
  name: string,
  options: { concurrencySafe: boolean; log: string[]; gate?: Promise<void> },
): Tool {
  return {
    name,
    description: `${name} records its calls.`,
    inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
    readOnly: options.concurrencySafe,
    concurrencySafe: options.concurrencySafe,
    async execute(input) {
      options.log.push(`start ${String(input.id)}`);
      if (options.gate) await options.gate;
      await new Promise((resolve) => setImmediate(resolve));
      options.log.push(`end ${String(input.id)}`);
      return { content: `done ${String(input.id)}`, isError: false };
    },
  };
}

/** Runs until its signal aborts, then answers what it saw. */
export function waitForAbortTool(started: () => void): Tool {
  return {
    name: "wait",
    description: "Waits until stopped.",
    inputSchema: { type: "object", properties: {} },
    async execute(_input, context) {
      started();
      await new Promise<void>((resolve) => {
        if (context.signal.aborted) resolve();
        else context.signal.addEventListener("abort", () => resolve(), { once: true });
      });
      return { content: "stopped by the signal", isError: false };
    },
  };
}

/** Collects a turn's events. */
export async function collect(turn: AsyncIterable<SessionEvent>): Promise<SessionEvent[]> {
  const events: SessionEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

/**
 * Tool-pair violations of the messages the transcript on disk holds, as a provider receives them (neighbours of
 * the same role merged): none for a valid session.
 */
export async function transcriptViolations(
  path: string,
): Promise<{ messages: Message[]; violations: ToolPairViolation[] }> {
  const { entries } = await readTranscript(path, { quarantine: false });
  const messages = entries.flatMap((entry) => (entry.type === "message" ? [entry.message] : []));
  const request = toRequestMessages(messages).map((message, index) => ({
    ...message,
    content: contentBlocks(message.content),
    id: `request_${index}`,
    timestamp: "",
  }));
  return { messages, violations: findToolPairViolations(request) };
}

/** The JSON bodies of the model calls a fake received (not the counts). */
export function modelCalls(fake: {
  requests: { operation: string; body: unknown }[];
}): Record<string, unknown>[] {
  return fake.requests
    .filter((request) => request.operation !== "count_tokens" && request.operation !== "countTokens")
    .map((request) => request.body as Record<string, unknown>);
}

/** A compaction summary in the nine sections a model summary must have. */
export function summaryText(note: string): string {
  const sections = SUMMARY_SECTIONS.map((title, index) => `${index + 1}. ${title}:\n${note}`);
  return `<summary>\n${sections.join("\n\n")}\n</summary>`;
}

/** True for a model call that asks for a compaction summary (its last user text is the compaction prompt). */
export function isSummaryRequest(body: unknown): boolean {
  return JSON.stringify(body).includes("a tool call would waste it");
}

/** The tool names a model call offered. */
export function toolNames(body: Record<string, unknown> | undefined): string[] {
  return ((body?.tools ?? []) as { name: string }[]).map((tool) => tool.name);
}

/**
 * The Anthropic fake and its provider for a test file (started once, reset before each test) and a temporary
 * folder per test; read them through the returned object inside tests.
 */
export function anthropicSuite(prefix: string): {
  readonly fake: AnthropicFakeServer;
  readonly provider: ModelProvider;
  readonly dir: { path: string; cleanup(): Promise<void> };
} {
  const state = {} as {
    fake: AnthropicFakeServer;
    provider: ModelProvider;
    dir: { path: string; cleanup(): Promise<void> };
  };
  beforeAll(async () => {
    Object.assign(state, await anthropicSetup());
  });
  afterAll(async () => {
    await state.fake.close();
  });
  beforeEach(async () => {
    state.fake.reset();
    state.dir = await tempDir(prefix);
  });
  afterEach(async () => {
    await state.dir.cleanup();
  });
  return state;
}
