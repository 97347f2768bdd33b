import { createFileMailbox } from "../mailbox/file-mailbox.ts";
import { createFileTaskCommands } from "./file-task-commands.ts";
import { createFileTaskLeases, DEFAULT_LEASE_MS } from "./file-task-leases.ts";
import { createFileTaskOutputStore } from "./file-task-output-store.ts";
import { createFileTaskStateStore } from "./file-task-state-store.ts";
import type { TaskBackend } from "./task-backend.ts";

export interface FileTaskBackendOptions {
  /** The directory of task folders; managers in several processes (or on a shared file system) may share it. */
  dir: string;
  /** How long an owner's lease lasts after its last heartbeat (default 30 000 ms). */
  leaseMs?: number;
}

/**
 * The default backend: everything in `dir`. Records (`state.<N>.json`), output (`output.log`), commands and
 * the mailbox are files; leases are one heartbeat file per manager. Tasks run in the managers themselves.
 */
export function createFileTaskBackend(options: FileTaskBackendOptions): TaskBackend {
  const { dir } = options;
  return {
    store: createFileTaskStateStore({ dir }),
    output: createFileTaskOutputStore(dir),
    leases: createFileTaskLeases(dir, options.leaseMs ?? DEFAULT_LEASE_MS),
    commands: createFileTaskCommands(dir),
    mailbox: createFileMailbox(dir),
  };
}
