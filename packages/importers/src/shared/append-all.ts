/** Appends every item without spreading it into call arguments (which overflows the stack past ~100,000). */
export function appendAll<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}
