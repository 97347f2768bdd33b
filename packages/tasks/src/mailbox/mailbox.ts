import { randomUUID } from "node:crypto";

/**
 * The one protocol between a coordinator and the agents it runs, local or remote: short text messages
 * addressed by task id. "message": free text for the recipient (a question, an answer, an instruction);
 * "progress": a status line the task's output records; "result": the agent's final report; "error": the
 * agent failed; "shutdown": the coordinator asks the agent to stop (it answers with "result" or "error").
 */
export type MailboxMessageKind = "message" | "progress" | "result" | "error" | "shutdown";

export interface MailboxMessage {
  /** Unique per message, assigned by the mailbox. */
  id: string;
  from: string;
  to: string;
  kind: MailboxMessageKind;
  text: string;
  /** Epoch milliseconds when the mailbox accepted it. */
  at: number;
}

export interface MailboxMessageInit {
  from: string;
  to: string;
  /** Defaults to "message". */
  kind?: MailboxMessageKind;
  text: string;
}

export interface MailboxReceiveOptions {
  /** When nothing is waiting, wait this long for the first message (default 0: return at once). */
  waitMs?: number;
  /** Ends a wait early; the call then resolves with whatever arrived (usually nothing). */
  signal?: AbortSignal;
}

/**
 * Where messages wait for their recipient. The in-process mailbox serves agents in this process; a remote
 * agent needs a mailbox both sides reach (a queue, a database table) behind the same two calls.
 */
export interface Mailbox {
  /** Stores the message for its recipient; resolves once a later `receive(to)` is certain to return it. */
  send(message: MailboxMessageInit): Promise<MailboxMessage>;
  /** Returns and removes the messages waiting for `address`, oldest first, each exactly once. */
  receive(address: string, options?: MailboxReceiveOptions): Promise<MailboxMessage[]>;
}

/** A task's side of the mailbox. */
export interface MailboxEndpoint {
  /** The task's own address (its id): what the coordinator and teammates send to. */
  readonly address: string;
  /** The address of the coordinator that started the task. */
  readonly coordinator: string;
  /** Sends to the coordinator, or with `to` to another task (a teammate's id). */
  send(text: string, options?: { to?: string; kind?: MailboxMessageKind }): Promise<MailboxMessage>;
  /** Messages sent to this task, oldest first. */
  receive(options?: MailboxReceiveOptions): Promise<MailboxMessage[]>;
}

/** A message as a mailbox stores it: a new id, the time it was accepted, "message" unless another kind. */
export function createMailboxMessage(init: MailboxMessageInit): MailboxMessage {
  return {
    id: randomUUID(),
    from: init.from,
    to: init.to,
    kind: init.kind ?? "message",
    text: init.text,
    at: Date.now(),
  };
}

/** The coordinator's address for one task: stable across manager restarts, unlike a manager id. */
export function coordinatorAddress(taskId: string): string {
  return `${taskId}:coordinator`;
}

export function createMailboxEndpoint(mailbox: Mailbox, taskId: string): MailboxEndpoint {
  const coordinator = coordinatorAddress(taskId);
  return {
    address: taskId,
    coordinator,
    send: (text, options = {}) =>
      mailbox.send({ from: taskId, to: options.to ?? coordinator, kind: options.kind ?? "message", text }),
    receive: (options) => mailbox.receive(taskId, options),
  };
}
