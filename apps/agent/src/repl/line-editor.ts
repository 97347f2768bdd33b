/**
 * The prompt's line and cursor, changed in place by each key as it arrives. The REPL keeps one in a ref and reads
 * it at the key, never from the last render: keys come faster than React redraws (a paste, a fast typist, a
 * loaded machine, a screen busy with a streaming reply), and a key handled with the value of an older render
 * loses what was typed since (an Enter then submitted an empty or a partial line).
 */
export class LineEditor {
  #value = "";
  #cursor = 0;

  /** The line as typed so far. */
  get value(): string {
    return this.#value;
  }

  /** Where the next character goes: 0 is before the first, `value.length` after the last. */
  get cursor(): number {
    return this.#cursor;
  }

  /** Replaces the line (history, completion, clearing), the cursor at its end. */
  set(value: string): void {
    this.#value = value;
    this.#cursor = value.length;
  }

  /** Types text at the cursor. */
  insert(text: string): void {
    this.#value = this.#value.slice(0, this.#cursor) + text + this.#value.slice(this.#cursor);
    this.#cursor += text.length;
  }

  /** Deletes the character before the cursor. */
  deleteBackward(): void {
    if (this.#cursor === 0) return;
    this.#value = this.#value.slice(0, this.#cursor - 1) + this.#value.slice(this.#cursor);
    this.#cursor--;
  }

  /** Moves the cursor by `by` characters, within the line. */
  move(by: number): void {
    this.#cursor = Math.max(0, Math.min(this.#value.length, this.#cursor + by));
  }

  /** Moves the cursor to the start (`"start"`) or the end of the line. */
  jump(to: "start" | "end"): void {
    this.#cursor = to === "start" ? 0 : this.#value.length;
  }
}

/**
 * Splits what one input event carried into the text to type and whether it ended with Enter. A terminal hands
 * over whatever arrived in one read: `hello\r` when the Enter came right behind the last letter, or a pasted
 * block of lines; a final line break is Enter, the others are kept as line breaks of the prompt.
 */
export function splitTyped(input: string): { text: string; enter: boolean } {
  const enter = /(\r\n|\r|\n)$/.test(input);
  const text = (enter ? input.replace(/(\r\n|\r|\n)$/, "") : input).replace(/\r\n?/g, "\n");
  return { text, enter };
}
