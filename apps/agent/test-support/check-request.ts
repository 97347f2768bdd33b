import { getEncoding } from "js-tiktoken";

/** The fields a replayed request may have (`system` and `tools` only when there are some). */
const BODY_FIELDS: ReadonlySet<string> = new Set(["model", "max_tokens", "system", "messages", "tools"]);

/**
 * An independent check of a dumped request body, written against the Messages API's rules rather than our
 * own helpers: the fields, at most four cache breakpoints, roles alternating from a user message, every
 * tool_use answered by a tool_result in the next message (results first) and every result answering a call
 * of the message before, non-empty text, tools defined for every call. Returns the problems found (empty when
 * the body is valid).
 */

export function checkRequestBody(body: unknown): string[] {
  const problems: string[] = [];
  if (typeof body !== "object" || body === null) return ["the body is not an object"];
  const record = body as Record<string, unknown>;
  const unexpected = Object.keys(record).filter((key) => !BODY_FIELDS.has(key));
  if (unexpected.length > 0) problems.push(`unexpected fields: ${unexpected.join(",")}`);
  // Prompt caching: at most four breakpoints.
  const marked = (blocks: unknown) =>
    Array.isArray(blocks)
      ? blocks.filter((block) => (block as Record<string, unknown>).cache_control).length
      : 0;
  const allMessages = Array.isArray(record.messages) ? (record.messages as { content: unknown }[]) : [];
  const breakpoints =
    marked(record.system) +
    marked(record.tools) +
    allMessages.reduce((sum, message) => sum + marked(message.content), 0);
  if (breakpoints > 4) problems.push(`${breakpoints} cache breakpoints (the API takes 4)`);
  if (typeof record.model !== "string" || record.model.length === 0) problems.push("no model");
  if (!Number.isInteger(record.max_tokens) || (record.max_tokens as number) <= 0)
    problems.push("bad max_tokens");
  const messages = record.messages as { role: string; content: Record<string, unknown>[] }[];
  const tools = new Set(((record.tools as { name: string }[]) ?? []).map((tool) => tool.name));
  if (!Array.isArray(messages) || messages.length === 0) return [...problems, "no messages"];
  if (messages[0]!.role !== "user") problems.push("the first message is not the user's");
  messages.forEach((message, index) => {
    const where = `message ${index}`;
    if (index > 0 && message.role === messages[index - 1]!.role)
      problems.push(`${where}: two ${message.role} messages in a row`);
    if (!Array.isArray(message.content) || message.content.length === 0)
      problems.push(`${where}: no content`);
    for (const block of message.content) {
      if (block.type === "text" && (typeof block.text !== "string" || block.text.length === 0)) {
        problems.push(`${where}: empty text block`);
      }
      if (block.type === "tool_use" && !tools.has(block.name as string))
        problems.push(`${where}: tool ${block.name} not defined`);
    }
    const uses =
      message.role === "assistant" ? message.content.filter((block) => block.type === "tool_use") : [];
    if (uses.length > 0) {
      const reply = messages[index + 1];
      const answered = new Set(
        (reply?.content ?? [])
          .filter((block) => block.type === "tool_result")
          .map((block) => block.tool_use_id),
      );
      for (const use of uses)
        if (!answered.has(use.id)) problems.push(`${where}: tool_use ${use.id} has no result next`);
    }
    if (message.role === "user") {
      const calls = new Set(
        (messages[index - 1]?.content ?? [])
          .filter((block) => block.type === "tool_use")
          .map((block) => block.id),
      );
      let seenOther = false;
      for (const block of message.content) {
        if (block.type !== "tool_result") {
          seenOther = true;
          continue;
        }
        if (seenOther) problems.push(`${where}: a tool_result after other content`);
        if (!calls.has(block.tool_use_id))
          problems.push(`${where}: tool_result ${block.tool_use_id} answers no call before it`);
      }
    }
  });
  return problems;
}

const encoding = getEncoding("o200k_base");

/** The system prompt's text: a string, or the texts of its blocks (their cache markers are not tokens). */
function systemText(system: unknown): string {
  if (typeof system === "string") return system;
  if (Array.isArray(system)) return system.map((block) => (block as { text?: string }).text ?? "").join("\n");
  return system === undefined ? "" : JSON.stringify(system);
}

/** Tokens of a request by a real BPE tokenizer (o200k): system, every block's text or JSON, and the tools. */
export function countRequestTokens(body: {
  system?: unknown;
  messages: { content: Record<string, unknown>[] }[];
  tools?: unknown[];
}): number {
  const parts: string[] = [systemText(body.system)];
  for (const message of body.messages) {
    for (const block of message.content) {
      if (block.type === "text") parts.push(block.text as string);
      else if (block.type === "tool_use") parts.push(`${block.name} ${JSON.stringify(block.input)}`);
      else if (block.type === "tool_result") {
        parts.push(typeof block.content === "string" ? block.content : JSON.stringify(block.content));
      } else if (block.type === "thinking") parts.push(block.thinking as string);
      else parts.push(JSON.stringify(block));
    }
  }
  if (body.tools !== undefined && body.tools.length > 0) parts.push(JSON.stringify(body.tools));
  return parts.reduce((sum, part) => sum + encoding.encode(part).length, 0) + 4 * body.messages.length;
}
