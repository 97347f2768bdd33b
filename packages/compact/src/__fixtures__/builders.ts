import { createMessage, createUsage, type Message } from "@unforget/core";

/** A small conversation builder for tests: deterministic ids and timestamps, real message shapes. */
export function conversationBuilder(start = Date.parse("2026-01-01T00:00:00Z")) {
  let clock = start;
  let counter = 0;
  const messages: Message[] = [];
  const stamp = () => {
    clock += 1_000;
    return new Date(clock).toISOString();
  };
  const id = (prefix: string) => `${prefix}${++counter}`;
  return {
    messages,
    /** Advances the clock (ms). */
    wait(ms: number) {
      clock += ms;
    },
    now: () => clock,
    user(text: string) {
      messages.push(createMessage("user", text, { id: id("u"), timestamp: stamp() }));
      return this;
    },
    assistant(text: string, usageTokens?: number) {
      messages.push(
        createMessage("assistant", text, {
          id: id("a"),
          timestamp: stamp(),
          ...(usageTokens !== undefined
            ? { usage: createUsage({ inputTokens: usageTokens, outputTokens: 10 }) }
            : {}),
        }),
      );
      return this;
    },
    /** An assistant tool call and the user message with its result. */
    tool(
      name: string,
      input: Record<string, unknown>,
      output: string,
      options: { isError?: boolean; text?: string } = {},
    ) {
      const useId = id("toolu_");
      messages.push(
        createMessage(
          "assistant",
          [
            ...(options.text ? [{ type: "text" as const, text: options.text }] : []),
            { type: "tool_use" as const, id: useId, name, input },
          ],
          { id: id("a"), timestamp: stamp() },
        ),
      );
      messages.push(
        createMessage(
          "user",
          [
            {
              type: "tool_result",
              tool_use_id: useId,
              content: output,
              ...(options.isError ? { is_error: true } : {}),
            },
          ],
          { id: id("r"), timestamp: stamp() },
        ),
      );
      return this;
    },
    /** A SWE-agent style round: an assistant action as text and an observation message. */
    observe(action: string, output: string) {
      messages.push(
        createMessage("assistant", `Running it.\n\`\`\`\n${action}\n\`\`\``, {
          id: id("a"),
          timestamp: stamp(),
          metadata: { action },
        }),
      );
      messages.push(createMessage("user", output, { id: id("o"), timestamp: stamp(), isObservation: true }));
      return this;
    },
  };
}

/** A text of roughly `tokens` tokens of varied prose-like words. */
export function filler(tokens: number, seed = 1): string {
  const words = [
    "alpha",
    "build",
    "cache",
    "delta",
    "error",
    "files",
    "graph",
    "hooks",
    "index",
    "jobs",
    "kernel",
    "layer",
  ];
  const out: string[] = [];
  let state = seed;
  for (let index = 0; index < tokens; index++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    out.push(words[state % words.length]!);
    if (index % 12 === 11) out.push("\n");
  }
  return out.join(" ");
}
