/** The line print-lines.mjs prints as number `index`. */
export function numberedLine(index: number): string {
  return `${String(index).padStart(10, "0")} héllo wörld ✓ 🙂 ${"x".repeat(index % 37)}\n`;
}

/**
 * Checks streamed text against print-lines.mjs's output without holding it: every line in order, none
 * missing, none repeated, no character split (a split shows as U+FFFD or a line that does not match).
 */
export function createLineChecker(): { push(text: string): void; finish(): number } {
  let carry = "";
  let next = 0;
  return {
    push(text) {
      const lines = (carry + text).split("\n");
      carry = lines.pop() ?? "";
      for (const line of lines) {
        const expected = numberedLine(next);
        if (`${line}\n` !== expected)
          throw new Error(`line ${next} is ${JSON.stringify(line)}, expected ${JSON.stringify(expected)}`);
        next += 1;
      }
    },
    finish() {
      if (carry !== "") throw new Error(`output ends with an incomplete line ${JSON.stringify(carry)}`);
      return next;
    },
  };
}
