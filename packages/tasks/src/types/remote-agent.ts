import type { Mailbox } from "../mailbox/mailbox.ts";

/** What the connector is told when a remote agent task starts. */
export interface RemoteAgentLaunch {
  taskId: string;
  prompt: string;
  /** The agent reads its instructions here and sends progress, messages, and its result or error back. */
  inbox: string;
  /** Where the agent sends to: the coordinator's address for this task. */
  outbox: string;
  /** The mailbox both sides reach. */
  mailbox: Mailbox;
}

/**
 * Starts an agent elsewhere (another machine, a container, a hosted service). Everything after the launch
 * goes through the mailbox, so the manager treats local and remote agents alike.
 */
export interface RemoteAgentConnector {
  /** Called once by `start()`; resolves when the agent has been launched (not when it has finished). */
  launch(request: RemoteAgentLaunch): Promise<void>;
  /** Called when the agent did not answer a "shutdown" message within the grace period: end it by force. */
  cancel?(taskId: string): Promise<void>;
}
