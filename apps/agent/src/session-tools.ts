import type { Message, ToolDefinition } from "@unforget/core";

/**
 * The tool definitions a request needs (the Messages API refuses tool_use blocks without them), rebuilt
 * from the calls the session made, since recorded sessions rarely keep their definitions: one tool per name,
 * its input schema listing every field the calls passed, with the JSON type of the first value seen.
 * Sorted by name, so the same session always gives the same tools.
 */
export function inferToolDefinitions(messages: readonly Message[]): ToolDefinition[] {
  const fields = new Map<string, Map<string, string>>();
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type !== "tool_use") continue;
      const known = fields.get(block.name) ?? new Map<string, string>();
      fields.set(block.name, known);
      const input = block.input;
      if (typeof input !== "object" || input === null || Array.isArray(input)) continue;
      for (const [key, value] of Object.entries(input)) {
        if (!known.has(key)) known.set(key, jsonType(value));
      }
    }
  }
  return [...fields.keys()].sort().map((name) => {
    const properties = Object.fromEntries(
      [...fields.get(name)!.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, type]) => [key, type === "null" ? {} : { type }]),
    );
    return {
      name,
      description: `The session's ${name} tool (its definition was not recorded; the input fields are those its calls used).`,
      inputSchema: { type: "object", properties },
    };
  });
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return "number";
  if (typeof value === "object") return "object";
  return typeof value === "boolean" ? "boolean" : "string";
}
