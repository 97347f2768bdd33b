// Prints numbered lines with multi-byte characters until at least argv[2] bytes are written.
import { writeSync } from "node:fs";

const total = Number(process.argv[2]);
let written = 0;
let index = 0;
const line = (i) => `${String(i).padStart(10, "0")} héllo wörld ✓ 🙂 ${"x".repeat(i % 37)}\n`;
while (written < total) {
  const lines = [];
  let blockBytes = 0;
  while (blockBytes < 1 << 20 && written + blockBytes < total) {
    const next = line(index++);
    lines.push(next);
    blockBytes += Buffer.byteLength(next);
  }
  const bytes = Buffer.from(lines.join(""));
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(1, bytes, offset);
  written += bytes.length;
}
