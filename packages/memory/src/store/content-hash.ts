import { createHash } from "node:crypto";

/** SHA-256 of the UTF-8 bytes, lower-case hex: the value compare-and-swap writes are conditioned on. */
export function hashContent(content: string): string {
  return createHash("sha256").update(content, "utf8").digest("hex");
}
