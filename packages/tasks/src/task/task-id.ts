import { randomBytes } from "node:crypto";
import { TaskInputError } from "./task-errors.ts";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/** A new id such as "bash-k3j4h5g6a1": the type's prefix is readable, 10 random characters make clashes negligible. */
export function createTaskId(prefix: string): string {
  const bytes = randomBytes(10);
  let suffix = "";
  for (const byte of bytes) suffix += ALPHABET[byte % ALPHABET.length];
  return `${prefix}-${suffix}`;
}

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** Ids become directory names: reject anything that could leave the directory or hide in it. */
export function assertTaskId(id: unknown, field = "id"): asserts id is string {
  if (typeof id !== "string" || !SAFE_ID.test(id)) {
    throw new TaskInputError(
      `"${field}" must be a task id such as "bash-k3j4h5g6a1" (letters, digits, "-", "_" or ".", at most 128 characters); got ${JSON.stringify(id)}. Call list() to see the ids.`,
      { field },
    );
  }
}
