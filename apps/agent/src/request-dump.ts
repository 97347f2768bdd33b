import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "@unforget/files";
import type { WireObject } from "@unforget/provider-anthropic";
import { OutputError } from "./replay/replay-errors.ts";

/** Writes each replayed request as `DIR/000001.json`, and summariser requests under `DIR/summarizer/`. */
export interface RequestDump {
  readonly directory: string;
  /** Called once per replayed call, in order. */
  writeCall(call: number, body: WireObject): Promise<void>;
  /** Called for each summariser request sent while preparing `call` (`attempt` counts from 1). */
  writeSummarizerCall(call: number, attempt: number, body: WireObject): Promise<void>;
}

/** The file name of a call: its number, zero-padded to six digits. */
export function dumpFileName(call: number): string {
  return `${String(call).padStart(6, "0")}.json`;
}

/**
 * Opens the dump folder: created when missing; refused (`OutputError`) when it holds anything, so that the
 * files of two runs never mix.
 */
export async function openRequestDump(directory: string): Promise<RequestDump> {
  try {
    await mkdir(directory, { recursive: true });
  } catch (error) {
    throw new OutputError(
      `--dump-requests ${directory}: the folder cannot be created (${error instanceof Error ? error.message : String(error)}).`,
      { path: directory, cause: error },
    );
  }
  let present: string[];
  try {
    present = await readdir(directory);
  } catch (error) {
    throw new OutputError(`--dump-requests ${directory} is not a folder that can be read.`, {
      path: directory,
      cause: error,
    });
  }
  if (present.length > 0) {
    throw new OutputError(
      `--dump-requests ${directory} is not empty (it holds ${present.length} entries, e.g. ${present.sort()[0]}). Give a new or empty folder, so that the requests of two runs never mix.`,
      { path: directory },
    );
  }
  let summarizerFolder = false;
  const write = async (path: string, body: WireObject) => {
    try {
      // One file per call: renamed into place whole, but not flushed one by one (they can be regenerated).
      await writeFileAtomic(path, `${JSON.stringify(body, null, 2)}\n`, { durable: false });
    } catch (error) {
      throw new OutputError(
        `The request could not be written to ${path} (${error instanceof Error ? error.message : String(error)}).`,
        { path, cause: error },
      );
    }
  };
  return {
    directory,
    writeCall: (call, body) => write(join(directory, dumpFileName(call)), body),
    async writeSummarizerCall(call, attempt, body) {
      const folder = join(directory, "summarizer");
      if (!summarizerFolder) {
        await mkdir(folder, { recursive: true });
        summarizerFolder = true;
      }
      await write(join(folder, `${String(call).padStart(6, "0")}-${attempt}.json`), body);
    },
  };
}
