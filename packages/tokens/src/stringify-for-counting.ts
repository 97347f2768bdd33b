/**
 * JSON text of a value for counting; never throws. Strings are returned as they are. A value `JSON.stringify`
 * cannot write (nested deeper than the call stack, a cycle, a BigInt) is written by an iterative walk that
 * visits each object once, so its size is still counted.
 */
export function stringifyForCounting(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    try {
      return jsonTextIteratively(value);
    } catch {
      // A getter or proxy that throws: nothing readable to count.
      return "";
    }
  }
}

type Work = { value: unknown } | string;

function jsonTextIteratively(root: unknown): string {
  const parts: string[] = [];
  const seen = new Set<object>();
  const stack: Work[] = [{ value: root }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === "string") {
      parts.push(item);
      continue;
    }
    const value = item.value;
    if (typeof value === "string") parts.push(JSON.stringify(value));
    else if (typeof value === "number") parts.push(Number.isFinite(value) ? String(value) : "null");
    else if (typeof value === "boolean" || typeof value === "bigint") parts.push(String(value));
    else if (typeof value !== "object" || value === null || seen.has(value)) parts.push("null");
    else {
      // A cycle or a shared object is written once.
      seen.add(value);
      // Pushed in reverse: the closing bracket first, the opening one last.
      if (Array.isArray(value)) {
        stack.push("]");
        for (let index = value.length - 1; index >= 0; index--) {
          stack.push({ value: value[index] });
          if (index > 0) stack.push(",");
        }
        stack.push("[");
      } else {
        const keys = Object.keys(value);
        stack.push("}");
        for (let index = keys.length - 1; index >= 0; index--) {
          const key = keys[index]!;
          stack.push({ value: (value as Record<string, unknown>)[key] });
          stack.push(`${JSON.stringify(key)}:`);
          if (index > 0) stack.push(",");
        }
        stack.push("{");
      }
    }
  }
  return parts.join("");
}
