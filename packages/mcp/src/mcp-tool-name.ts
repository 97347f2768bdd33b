import { createHash } from "node:crypto";

/** The longest tool name every provider accepts (Bedrock and Gemini allow 64 characters; Anthropic more). */
export const MAX_TOOL_NAME_LENGTH = 64;

/** Characters outside `[A-Za-z0-9_-]` (the set all three providers accept) become `_`, as Claude Code does. */
function normalize(part: string): string {
  return part.replace(/[^A-Za-z0-9_-]/g, "_");
}

/** The prefix of every tool of `server`: what a permission rule `mcp__<server>` matches. */
export function mcpToolPrefix(server: string): string {
  return `mcp__${normalize(server)}__`;
}

/**
 * The name the model calls: `mcp__<server>__<tool>`, normalised. A name over 64 characters, or one already
 * `taken` by another tool, is cut and ends with a short hash of the full name, so it stays unique and stable.
 */
export function mcpToolName(server: string, tool: string, taken: ReadonlySet<string> = new Set()): string {
  const name = `${mcpToolPrefix(server)}${normalize(tool)}`;
  if (name.length <= MAX_TOOL_NAME_LENGTH && !taken.has(name)) return name;
  for (let attempt = 0; ; attempt++) {
    const hash = createHash("sha256").update(`${server}\0${tool}\0${attempt}`).digest("hex").slice(0, 8);
    const candidate = `${name.slice(0, MAX_TOOL_NAME_LENGTH - hash.length - 1)}_${hash}`;
    if (!taken.has(candidate)) return candidate;
  }
}
