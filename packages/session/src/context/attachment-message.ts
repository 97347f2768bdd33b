import { type Attachment, createMessage, type Message } from "@unforget/core";

/**
 * The meta user message that carries an attachment into the conversation: the same shape the transcript's
 * projection gives an attachment entry (`metadata.attachment` is its kind), so compaction, the importers and a
 * resumed session read both alike.
 */
export function attachmentToMessage(attachment: Attachment): Message {
  const metadata: Record<string, unknown> = { attachment: attachment.kind };
  if (attachment.source !== undefined) metadata.attachmentSource = attachment.source;
  if (attachment.metadata !== undefined) metadata.attachmentMetadata = attachment.metadata;
  return createMessage("user", attachment.content, { isMeta: true, metadata });
}

/** The attachment kind of a message `attachmentToMessage` built (or the projection of an attachment entry). */
export function attachmentKindOf(message: Message): string | undefined {
  const kind = message.metadata?.attachment;
  return message.isMeta && typeof kind === "string" ? kind : undefined;
}
