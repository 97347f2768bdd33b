import { InvalidOperationError } from "@unforget/core";

/**
 * An unbounded single-consumer queue between the running turn (which pushes) and whoever iterates it. The
 * producer never waits for the consumer; `close` ends the iteration after the buffered items, `fail` after
 * them with an error.
 */
export class EventChannel<Item> implements AsyncIterable<Item> {
  #items: Item[] = [];
  #head = 0;
  #ended = false;
  #error: { value: unknown } | undefined;
  #wake: (() => void) | undefined;
  #iterated = false;
  #discard = false;
  readonly #onReturn: () => void;

  /** `onReturn` is called when the consumer stops iterating early (a `break` out of `for await`). */
  constructor(onReturn: () => void = () => {}) {
    this.#onReturn = onReturn;
  }

  push(item: Item): void {
    if (this.#ended || this.#discard) return;
    this.#items.push(item);
    this.#notify();
  }

  /** Nobody will iterate: drop what is buffered and everything pushed from now on. */
  discardUnread(): void {
    if (this.#iterated) return;
    this.#iterated = true;
    this.#discard = true;
    this.#items = [];
    this.#head = 0;
  }

  close(): void {
    this.#ended = true;
    this.#notify();
  }

  fail(error: unknown): void {
    if (this.#ended) return;
    this.#error = { value: error };
    this.close();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async *#iterate(): AsyncGenerator<Item> {
    let finished = false;
    try {
      for (;;) {
        if (this.#head < this.#items.length) {
          const item = this.#items[this.#head]!;
          this.#head++;
          // Drop consumed items now and then, so a long turn does not keep every delta alive.
          if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
            this.#items = this.#items.slice(this.#head);
            this.#head = 0;
          }
          yield item;
          continue;
        }
        if (this.#ended) {
          finished = true;
          if (this.#error) throw this.#error.value;
          return;
        }
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
      }
    } finally {
      if (!finished) this.#onReturn();
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<Item> {
    if (this.#iterated) {
      throw new InvalidOperationError(
        "A turn's events can be iterated only once; use result() for the outcome.",
      );
    }
    this.#iterated = true;
    return this.#iterate();
  }
}
