import type { HookResultEntry } from "@unforget/transcript";
import { createSessionHooks } from "../bus/session-hooks.ts";
import type { HookError } from "../hook-error.ts";

/** A bus whose reported failures and recorded entries a test can read (tests only). */
export function createRecordingBus() {
  const errors: HookError[] = [];
  const entries: HookResultEntry[] = [];
  const hooks = createSessionHooks({
    sessionId: "session-1",
    onHookError: (error) => errors.push(error),
    onHookResult: (entry) => entries.push(entry),
  });
  return { hooks, errors, entries };
}
