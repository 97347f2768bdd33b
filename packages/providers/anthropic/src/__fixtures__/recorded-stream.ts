import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ModelResponseAccumulator } from "@unforget/provider-runtime";
import { AnthropicStreamTranslator } from "../anthropic-stream.ts";

/**
 * Replays a recorded Anthropic stream (`<name>.chunks.txt` in `folder`: one event's JSON per line) through the
 * translator and the runtime's accumulator, as a live stream would go.
 */
export function replayRecordedStream(folder: string, name: string) {
  const lines = readFileSync(join(folder, `${name}.chunks.txt`), "utf8")
    .split("\n")
    .filter(Boolean);
  const raw = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  const translator = new AnthropicStreamTranslator();
  const accumulator = new ModelResponseAccumulator();
  for (const event of raw) for (const translated of translator.translate(event)) accumulator.push(translated);
  return { raw, response: accumulator.finish() };
}

/** A recorded non-streamed response (`<name>.json` in `folder`). */
export function recordedResponse(folder: string, name: string) {
  return JSON.parse(readFileSync(join(folder, `${name}.json`), "utf8")) as {
    content: { type: string; content?: string }[];
    usage: unknown;
    stop_reason: string;
    context_management: unknown;
  };
}
