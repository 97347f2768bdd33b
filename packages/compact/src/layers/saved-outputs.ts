import { persistedOutputPath, persistOutput } from "../tool-outputs/persist-output.ts";
import type { LayerContext } from "./layer.ts";
import type { LayerResult } from "./layer-result.ts";

/**
 * Called by a cheap layer for a result it would clear or fold whose tool is not reproducible, with the output
 * to keep: the path where that output is saved (the record points there), or undefined to keep the result.
 */
export type SaveOutput = (toolUseId: string, output: string) => string | undefined;

/**
 * Runs a cheap layer's pass so that nothing it clears is lost: with a session folder, every output of a tool
 * that is not reproducible the pass wants to clear is promised its file (`<sessionDir>/tool-results/<id>`, the
 * budget's), then written (atomically; a file that already holds the text is left as it is; one whose write
 * started when the output arrived is awaited) before the edits are returned; an output that cannot be written is kept, and the pass runs once more without it. Without a
 * folder the pass gets no `SaveOutput` and keeps those results. A dry run (an estimate, nothing recorded) writes
 * nothing.
 */
export async function withSavedOutputs(
  context: Pick<LayerContext, "sessionDir" | "dryRun" | "persistOutput">,
  pass: (saveOutput: SaveOutput | undefined) => LayerResult,
): Promise<LayerResult> {
  const sessionDir = context.sessionDir;
  if (sessionDir === undefined) return pass(undefined);
  if (context.dryRun) return pass((toolUseId) => persistedOutputPath(sessionDir, toolUseId));
  const wanted = new Map<string, { path: string; output: string }>();
  const failed = new Set<string>();
  const save: SaveOutput = (toolUseId, output) => {
    if (failed.has(toolUseId)) return undefined;
    const path = persistedOutputPath(sessionDir, toolUseId);
    wanted.set(toolUseId, { path, output });
    return path;
  };
  let result = pass(save);
  if (result.edits.length === 0) return result;
  // A pass asks only for outputs it clears; one whose edit was then dropped leaves a file no record names, harmless.
  // Most were started when they arrived (`LayerContext.persistOutput`) and are on disk already; each is awaited
  // here, before the edits that point at it are returned.
  const write = context.persistOutput ?? persistOutput;
  await Promise.all(
    [...wanted].map(([toolUseId, { path, output }]) =>
      write(path, output).catch(() => {
        failed.add(toolUseId);
      }),
    ),
  );
  if (failed.size > 0) result = pass(save);
  const saved = wanted.size - failed.size;
  if (saved > 0 || failed.size > 0) {
    result = {
      ...result,
      stats: {
        ...result.stats,
        ...(saved > 0 ? { saved } : {}),
        ...(failed.size > 0 ? { saveFailed: failed.size } : {}),
      },
    };
  }
  return result;
}
