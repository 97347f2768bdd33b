import type { ContentBlock, Message, ToolResultBlock, ToolResultContentBlock, Usage } from "@unforget/core";
import fc from "fast-check";

/** Text the way agents see it: prose, code, logs, JSON, CJK, emoji and odd whitespace. */
export function arbitraryText(options: { maxLength?: number } = {}): fc.Arbitrary<string> {
  const maxLength = options.maxLength ?? 200;
  const cjk = fc
    .array(fc.integer({ min: 0x4e00, max: 0x9fff }), { minLength: 1, maxLength: Math.max(1, maxLength >> 2) })
    .map((points) => String.fromCodePoint(...points));
  const kana = fc
    .array(fc.integer({ min: 0x3041, max: 0x30ff }), { minLength: 1, maxLength: Math.max(1, maxLength >> 2) })
    .map((points) => String.fromCodePoint(...points));
  const code = fc
    .tuple(
      fc.constantFrom("const", "function", "def", "return", "if", "import"),
      fc.stringMatching(/^[a-z_]{1,12}$/),
    )
    .map(([keyword, name]) => `${keyword} ${name}(x) { return x + 1; }\n`);
  const json = fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value));
  const emoji = fc.constantFrom("🙂", "🚀", "👩‍💻", "✅", "🇯🇵");
  return fc.oneof(
    { weight: 4, arbitrary: fc.string({ maxLength }) },
    { weight: 2, arbitrary: fc.lorem({ maxCount: Math.max(1, maxLength >> 4) }) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength }) },
    { weight: 1, arbitrary: cjk },
    { weight: 1, arbitrary: kana },
    { weight: 1, arbitrary: code },
    { weight: 1, arbitrary: json },
    { weight: 1, arbitrary: emoji },
  );
}

/** A tool output that is occasionally very long (a repeated line, as logs and file dumps are). */
export function arbitraryToolOutput(options: { long?: boolean } = {}): fc.Arbitrary<string> {
  const line = fc.oneof(arbitraryText({ maxLength: 80 }), fc.constant("ERROR: build failed at step 3"));
  const repeated = fc
    .tuple(line, fc.integer({ min: 50, max: options.long ? 4_000 : 400 }))
    .map(([text, count]) => `${text}\n`.repeat(count));
  return fc.oneof(
    { weight: 5, arbitrary: arbitraryText({ maxLength: 300 }) },
    { weight: 1, arbitrary: repeated },
  );
}

/**
 * A tool output of about `tokens` tokens, the same for the same seed: varied code-like lines, as a file read or a
 * build log is. For loops and benchmarks that need outputs of a known size (a generator is not needed there).
 */
export function syntheticToolOutput(seed: number, tokens: number): string {
  const lines: string[] = [];
  let state = seed * 7919 + 1;
  for (let line = 0; line * 9 < tokens; line++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    lines.push(`  parse_${line}(value_${state % 997}, index_${seed}); // layer ${(state >> 8) % 97}`);
  }
  return lines.join("\n");
}

/**
 * A small seeded generator (mulberry32): numbers in [0, 1), the same sequence for the same seed, so a test that
 * draws its cases from it replays a failure exactly.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A record look-up tool's behaviour for continuation tests: which calls fail, and the lines they failed with. */
export interface FailingLookups {
  /** The error line of each failed call so far, in order. */
  readonly errors: string[];
  /** One call: a result of 300–800 tokens, or a thrown `Error` whose message is a line of its own. */
  lookUp(id: string): string;
}

/**
 * A look-up tool whose calls fail at `failures` steps the seed picks among the first `among`, each with an error
 * line no other run shares (a checksum drawn from the seed), the other calls answering with synthetic outputs.
 */
export function failingLookups(seed: number, options: { failures: number; among: number }): FailingLookups {
  const next = seededRandom(seed);
  const failing = new Set<number>();
  while (failing.size < Math.min(options.failures, options.among))
    failing.add(1 + Math.floor(next() * options.among));
  const errors: string[] = [];
  let step = 0;
  return {
    errors,
    lookUp(id) {
      step++;
      if (failing.has(step)) {
        const line = `RecordError: ${id} checksum ${Math.floor(next() * 1e6)} does not match (shard ${step % 7})`;
        errors.push(line);
        throw new Error(line);
      }
      return syntheticToolOutput(step, 300 + Math.floor(next() * 500));
    },
  };
}

const TOOL_NAMES = ["Read", "Bash", "Grep", "Glob", "Edit", "Write", "WebFetch", "TodoWrite"] as const;

interface ToolCallSpec {
  name: string;
  input: Record<string, unknown>;
  output: string | ToolResultContentBlock[];
  isError: boolean;
}

interface RoundSpec {
  prompt: string | undefined;
  promptImage: boolean;
  thinking: string | undefined;
  redactedThinking: boolean;
  text: string | undefined;
  serverBlock: boolean;
  toolCalls: ToolCallSpec[];
  /** Parallel calls written the Claude Code way: one assistant message per call, results interleaved. */
  interleaved: boolean;
  usage: Usage;
}

export interface ConversationOptions {
  minRounds?: number;
  maxRounds?: number;
  maxParallelToolCalls?: number;
  /** Allow tool outputs of tens of kilobytes. */
  longToolOutputs?: boolean;
}

const imageBlock = (width: number, height: number): ContentBlock => ({
  type: "image",
  source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
  width,
  height,
});

function arbitraryToolCall(options: ConversationOptions): fc.Arbitrary<ToolCallSpec> {
  const blocksOutput = fc
    .tuple(
      arbitraryText({ maxLength: 100 }),
      fc.integer({ min: 1, max: 2000 }),
      fc.integer({ min: 1, max: 2000 }),
    )
    .map(([text, width, height]): ToolResultContentBlock[] => [
      { type: "text", text },
      imageBlock(width, height) as ToolResultContentBlock,
    ]);
  return fc.record({
    name: fc.constantFrom(...TOOL_NAMES),
    input: fc.record({
      path: fc.stringMatching(/^\/[a-z/]{1,30}$/),
      query: arbitraryText({ maxLength: 40 }),
    }),
    output: fc.oneof(
      { weight: 6, arbitrary: arbitraryToolOutput({ long: options.longToolOutputs ?? false }) },
      { weight: 1, arbitrary: blocksOutput },
    ),
    isError: fc.boolean(),
  });
}

function arbitraryRound(options: ConversationOptions): fc.Arbitrary<RoundSpec> {
  return fc.record({
    prompt: fc.option(arbitraryText(), { nil: undefined, freq: 3 }),
    promptImage: fc.boolean(),
    thinking: fc.option(arbitraryText({ maxLength: 120 }), { nil: undefined, freq: 2 }),
    redactedThinking: fc.boolean(),
    text: fc.option(arbitraryText(), { nil: undefined, freq: 4 }),
    serverBlock: fc.boolean(),
    toolCalls: fc.array(arbitraryToolCall(options), { maxLength: options.maxParallelToolCalls ?? 3 }),
    interleaved: fc.boolean(),
    usage: fc.record({
      inputTokens: fc.integer({ min: 0, max: 200_000 }),
      outputTokens: fc.integer({ min: 1, max: 8_000 }),
      cacheCreationInputTokens: fc.integer({ min: 0, max: 50_000 }),
      cacheReadInputTokens: fc.integer({ min: 0, max: 150_000 }),
    }),
  });
}

/**
 * A realistic, provider-valid conversation: it starts with the user, roles alternate, every tool_use is
 * answered in the next message. Rounds may hold parallel tool calls sharing one response id (in one message
 * or interleaved Claude Code style), thinking and redacted thinking, images, error results, long outputs,
 * CJK text and unknown server blocks. Ids and timestamps are deterministic per generated value.
 */
export function arbitraryConversation(options: ConversationOptions = {}): fc.Arbitrary<Message[]> {
  return fc
    .array(arbitraryRound(options), { minLength: options.minRounds ?? 1, maxLength: options.maxRounds ?? 8 })
    .map((rounds) => buildConversation(rounds));
}

function buildConversation(rounds: RoundSpec[]): Message[] {
  const messages: Message[] = [];
  let clock = Date.UTC(2026, 0, 1);
  let toolCounter = 0;
  const push = (message: Omit<Message, "id" | "timestamp">) => {
    clock += 1_000;
    messages.push({ id: `m${messages.length}`, timestamp: new Date(clock).toISOString(), ...message });
  };
  rounds.forEach((round, roundIndex) => {
    const last = messages[messages.length - 1];
    const needsPrompt = last === undefined || last.role === "assistant" || round.prompt !== undefined;
    if (needsPrompt) {
      const text = round.prompt ?? `Task ${roundIndex}`;
      const content: ContentBlock[] = [{ type: "text", text }];
      if (round.promptImage) content.push(imageBlock(640, 480));
      if (last?.role === "user") {
        // The previous round ended with tool results: the user adds a note to the same turn.
        last.content = [...last.content, ...content];
      } else {
        push({ role: "user", content });
      }
    }
    const responseId = `resp_${roundIndex}`;
    const head: ContentBlock[] = [];
    if (round.thinking !== undefined)
      head.push({ type: "thinking", thinking: round.thinking, signature: "sig" });
    if (round.redactedThinking) head.push({ type: "redacted_thinking", data: "cmVkYWN0ZWQ=" });
    if (round.text !== undefined) head.push({ type: "text", text: round.text });
    if (round.serverBlock) {
      head.push({
        type: "unknown",
        original: { type: "server_tool_use", id: `srv_${roundIndex}`, name: "web_search" },
      });
    }
    const uses = round.toolCalls.map((call) => ({
      use: { type: "tool_use" as const, id: `toolu_${toolCounter++}`, name: call.name, input: call.input },
      result: {
        type: "tool_result" as const,
        tool_use_id: `toolu_${toolCounter - 1}`,
        content: call.output,
        ...(call.isError ? { is_error: true } : {}),
      } satisfies ToolResultBlock,
    }));
    if (head.length === 0 && uses.length === 0) head.push({ type: "text", text: "Done." });
    const envelope = {
      role: "assistant" as const,
      responseId,
      usage: round.usage,
      model: "claude-sonnet-4-5",
    };
    if (uses.length > 1 && round.interleaved) {
      uses.forEach((pair, index) => {
        push({
          ...envelope,
          content: index === 0 ? [...head, pair.use] : [pair.use],
          stopReason: "tool_use",
        });
        push({ role: "user", content: [pair.result] });
      });
    } else if (uses.length > 0) {
      push({ ...envelope, content: [...head, ...uses.map((pair) => pair.use)], stopReason: "tool_use" });
      push({ role: "user", content: uses.map((pair) => pair.result) });
    } else {
      push({ ...envelope, content: head, stopReason: "end_turn" });
    }
  });
  return messages;
}

export type ConversationMutation =
  | { kind: "drop_message"; index: number }
  | { kind: "drop_block"; index: number; block: number }
  | { kind: "duplicate_message"; index: number }
  | { kind: "swap_messages"; index: number }
  | { kind: "empty_message"; index: number };

/**
 * A conversation damaged the way crashes, bad merges and careless trimming damage them: messages dropped,
 * duplicated, swapped or emptied; blocks removed. Used to test repair.
 */
export function arbitraryDamagedConversation(
  options: ConversationOptions = {},
): fc.Arbitrary<{ original: Message[]; damaged: Message[]; mutations: ConversationMutation[] }> {
  const mutation = fc.oneof(
    fc.record({ kind: fc.constant("drop_message" as const), index: fc.nat() }),
    fc.record({ kind: fc.constant("drop_block" as const), index: fc.nat(), block: fc.nat() }),
    fc.record({ kind: fc.constant("duplicate_message" as const), index: fc.nat() }),
    fc.record({ kind: fc.constant("swap_messages" as const), index: fc.nat() }),
    fc.record({ kind: fc.constant("empty_message" as const), index: fc.nat() }),
  );
  return fc
    .tuple(arbitraryConversation(options), fc.array(mutation, { minLength: 1, maxLength: 4 }))
    .map(([original, mutations]) => ({ original, damaged: applyMutations(original, mutations), mutations }));
}

function applyMutations(original: Message[], mutations: ConversationMutation[]): Message[] {
  let messages = original.map((message) => ({ ...message, content: [...message.content] }));
  for (const mutation of mutations) {
    if (messages.length === 0) break;
    const index = mutation.index % messages.length;
    const target = messages[index]!;
    switch (mutation.kind) {
      case "drop_message":
        messages = messages.filter((_, position) => position !== index);
        break;
      case "drop_block":
        if (target.content.length > 0) {
          const block = mutation.block % target.content.length;
          target.content = target.content.filter((_, position) => position !== block);
        }
        break;
      case "duplicate_message":
        messages.splice(index + 1, 0, { ...target, id: `${target.id}_copy`, content: [...target.content] });
        break;
      case "swap_messages":
        if (index + 1 < messages.length) {
          messages[index] = messages[index + 1]!;
          messages[index + 1] = target;
        }
        break;
      case "empty_message":
        target.content = [];
        break;
    }
  }
  return messages;
}
