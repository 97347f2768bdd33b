import { contentBlocks, type Message, type RequestMessage } from "@unforget/core";
import { estimateTextTokens, isTextObservation, resultText, userText } from "../conversation/conversation.ts";

/** An output a later call may need again: what it said, and its size. */
interface KeptOutput {
  /** The tool_use id of a tool result; undefined for an observation message. */
  toolUseId: string | undefined;
  text: string;
  tokens: number;
}

/** What one call asked for again that its request no longer held. */
export interface NeededAgain {
  results: number;
  tokens: number;
}

/**
 * Follows a recorded session to find outputs a policy forgot that the session then needed: a result cleared
 * (or folded, masked, summarised, cut) while a later call reads the same path or runs the same command. A
 * replay cannot see the call a model would make to read it again, so the replay charges the output's tokens
 * again at that later call.
 */
export interface ClearedThenNeeded {
  /** Called with every message of the session, in order, after it joined the history. */
  observe(message: Message): void;
  /**
   * Called with a recorded assistant message and the request the model answered with it (before `observe`
   * of that message): the outputs it asks for again that the request did not hold as they were.
   */
  check(assistant: Message, request: readonly RequestMessage[]): NeededAgain;
}

/**
 * What a call reads or runs, as a key: `path:` for a read of a file (a tool named like read, view, open or cat
 * with a path; an editor's `view` command), `run:` for a command (a tool's `command` input, or an action of an
 * agent that writes its actions as text). Writes and edits are not reads.
 */
function neededKey(name: string, input: unknown): string | undefined {
  if (typeof input !== "object" || input === null) return undefined;
  const fields = input as Record<string, unknown>;
  const path = [fields.file_path, fields.path, fields.filePath, fields.notebook_path].find(
    (value): value is string => typeof value === "string" && value.length > 0,
  );
  const command = typeof fields.command === "string" ? fields.command.trim() : undefined;
  if (path !== undefined && (command === "view" || /read|view|open|cat/i.test(name))) return `path:${path}`;
  if (command !== undefined && path === undefined && command.length > 0) return `run:${command}`;
  return undefined;
}

/** The keys an assistant message's calls read or run: each tool call's (by its id), and its text action's. */
function keysOf(message: Message): { uses: [id: string, key: string][]; action: string | undefined } {
  const uses: [string, string][] = [];
  for (const block of message.content) {
    if (block.type !== "tool_use") continue;
    const key = neededKey(block.name, block.input);
    if (key !== undefined) uses.push([block.id, key]);
  }
  const action = message.metadata?.action;
  return { uses, action: typeof action === "string" && action.trim() ? `run:${action.trim()}` : undefined };
}

export function createClearedThenNeeded(): ClearedThenNeeded {
  const keyOfUse = new Map<string, string>();
  const latest = new Map<string, KeptOutput>();
  let pendingAction: string | undefined;
  return {
    observe(message) {
      if (message.role === "assistant") {
        const { uses, action } = keysOf(message);
        for (const [id, key] of uses) keyOfUse.set(id, key);
        pendingAction = action;
        return;
      }
      if (isTextObservation(message)) {
        if (pendingAction !== undefined) {
          const text = userText(message);
          latest.set(pendingAction, { toolUseId: undefined, text, tokens: estimateTextTokens(text) });
        }
        pendingAction = undefined;
        return;
      }
      for (const block of message.content) {
        if (block.type !== "tool_result") continue;
        const key = keyOfUse.get(block.tool_use_id);
        if (key === undefined) continue;
        const text = resultText(block);
        latest.set(key, { toolUseId: block.tool_use_id, text, tokens: estimateTextTokens(text) });
      }
    },
    check(assistant, request) {
      const { uses, action } = keysOf(assistant);
      const keys = uses.map(([, key]) => key);
      if (action !== undefined) keys.push(action);
      const needed = new Set<KeptOutput>();
      for (const key of keys) {
        const output = latest.get(key);
        if (output) needed.add(output);
      }
      if (needed.size === 0) return { results: 0, tokens: 0 };
      // What the request holds as it was: each tool result's text by its call, and the observations' texts.
      const results = new Map<string, string>();
      const texts = new Set<string>();
      for (const message of request) {
        const blocks = contentBlocks(message.content);
        for (const block of blocks)
          if (block.type === "tool_result") results.set(block.tool_use_id, resultText(block));
        if (message.role === "user")
          texts.add(blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n"));
      }
      let count = 0;
      let tokens = 0;
      for (const output of needed) {
        const held =
          output.toolUseId !== undefined
            ? results.get(output.toolUseId) === output.text
            : texts.has(output.text);
        if (held) continue;
        count++;
        tokens += output.tokens;
      }
      return { results: count, tokens };
    },
  };
}
