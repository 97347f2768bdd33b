import { MIN_CHUNK_BYTES, type OutputChunk, readOutputChunk } from "../output/task-output.ts";
import { OutputOffsetError, TaskInputError } from "../task/task-errors.ts";
import { isFinalStatus } from "../task/task-record.ts";
import type { ManagerState } from "./manager-state.ts";
import { requireRecord } from "./task-lookup.ts";

/** `readOutput` of the manager: checks the offset and chunk size, then reads one chunk of any task. */
export async function readTaskOutput(
  state: ManagerState,
  id: string,
  offset: number,
  maxBytes: number,
  attempt?: number,
): Promise<OutputChunk> {
  if (attempt !== undefined && (!Number.isSafeInteger(attempt) || attempt < 1)) {
    throw new TaskInputError(`attempt: a whole number ≥ 1 (got ${String(attempt)}).`, { field: "attempt" });
  }
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new TaskInputError(
      `offset: must be a whole number of bytes ≥ 0 (got ${String(offset)}); pass 0 to read from the start, then each read's nextOffset.`,
      { field: "offset" },
    );
  }
  if (!Number.isSafeInteger(maxBytes) || maxBytes < MIN_CHUNK_BYTES || maxBytes > state.readChunkBytes) {
    throw new TaskInputError(
      `maxBytes: must be a whole number from ${MIN_CHUNK_BYTES} to ${state.readChunkBytes} (got ${String(maxBytes)}).`,
      { field: "maxBytes" },
    );
  }
  const output = state.backend.output;
  const read = (from: number, max: number) => output.read(id, from, max, attempt);
  let record = await requireRecord(state, id, false);
  // An earlier attempt has ended, whatever the task does now.
  const ended = (current: typeof record) =>
    isFinalStatus(current.status) || (attempt !== undefined && attempt < (current.attempt ?? 1));
  if (attempt !== undefined && attempt > (record.attempt ?? 1)) record = await requireRecord(state, id, true);
  if (attempt !== undefined && attempt > (record.attempt ?? 1)) {
    throw new TaskInputError(
      `attempt: task ${id} has had ${record.attempt ?? 1} attempt(s) so far (got ${attempt}).`,
      { field: "attempt" },
    );
  }
  let chunk = await readOutputChunk(read, offset, maxBytes, ended(record));
  if (chunk.data === "" && offset > 0) {
    // Output only grows: an offset past its end now came from no earlier read.
    const { size } = await output.stat(id, attempt);
    if (offset > size) throw new OutputOffsetError(id, offset, size);
  }
  if (chunk.data === "" && !chunk.done && !state.live.has(id)) {
    // At the end of the output of a task another manager runs: it may have ended since the record was cached.
    record = await requireRecord(state, id, true);
    if (ended(record)) chunk = await readOutputChunk(read, offset, maxBytes, true);
  }
  return chunk;
}
