import { randomUUID } from "node:crypto";
import {
  type Attachment,
  InvalidMessageError,
  InvalidOperationError,
  type Message,
  type RequestMessage,
  type ToolResultBlock,
} from "@unforget/core";
import { type ContextTokenCount, createTokenCountSession, type TokenCountSession } from "@unforget/tokens";
import {
  type CompactBoundaryEntry,
  type CompactTrigger,
  type ContextEdit,
  createTranscriptEntry,
  extendRequestMessages,
  projectContext,
  type TranscriptEntry,
  type TranscriptEntryInput,
} from "@unforget/transcript";
import { resultText } from "../conversation/conversation.ts";
import { retainedEntries } from "../conversation/retained-entries.ts";

/** Where the manager's transcript entries go (a core `TranscriptWriter`, or anything with `append`). */
export interface TranscriptSink {
  /** Called with entries in order; the manager awaits it before a request that depends on them is returned. */
  append(entries: readonly TranscriptEntry[]): Promise<unknown> | unknown;
  /** The transcript's path, shown to the model after a compaction so it can read exact details back. */
  readonly path?: string;
}

export interface ContextViewOptions {
  sessionId?: string;
  sink?: TranscriptSink;
  clock: () => number;
  idFactory?: (kind: string) => string;
  /** Entries of an earlier run of this session; the view starts as their projection. */
  resume?: readonly TranscriptEntry[];
  /**
   * What `entries` keeps: "all" (default) every entry since the start; "context" only what the projection still
   * reads (`retainedEntries`: from the latest boundary's preserved segment on), pruned at each boundary, so that
   * memory stays bounded however many compactions the session goes through.
   */
  retain?: "all" | "context";
}

/** A boundary compaction, as the summary pipeline records it. */
export interface BoundaryInput {
  trigger: CompactTrigger;
  layer: string;
  summaryText: string;
  keptMessageIds: string[];
  messagesSummarized: number;
  tokensBefore: number;
  tokensAfter: number;
  attachments: readonly Attachment[];
  discoveredTools?: string[];
  /** Which summariser wrote the summary, and why the fallback did when it did. */
  summarizer?: string;
  fallback?: string;
}

/**
 * The transcript mirror and the projected view that the ladder works on. Messages the caller adds are
 * appended; layers replace the view together with the edits that produce it; compactions append a
 * boundary, a summary and attachments and re-project. The view always equals `projectContext(entries)`.
 */
export class ContextView {
  #entries: TranscriptEntry[];
  /** The projected messages (what is sent, before same-role merging). */
  view: Message[];
  readonly #options: ContextViewOptions;
  // Ids of the messages the entries hold (with "context", those retained, and the resumed ones until the first boundary).
  #known: Set<string>;
  // How many messages the caller has passed, and the id of the last one.
  #callerCount = 0;
  #callerLast: string | undefined;
  // The last message of the resumed entries: until the caller has passed one, its messages up to it are the resumed ones.
  #resumedLast: string | undefined;
  #pending: TranscriptEntry[] = [];
  #writes: Promise<unknown> = Promise.resolve();
  #writeError: unknown;
  // Usage recorded on messages before this view index predates an edit of the context, so it is ignored.
  #usageValidFrom = 0;
  #countView: Message[] = [];
  #session: TokenCountSession;
  #preambleTokens = 0;
  #boundary: CompactBoundaryEntry | undefined;
  // The request of the current view, extended as messages are appended; rebuilt after any other change.
  #request: RequestMessage[] | undefined;
  // Each replacement message (a fold, a snip placeholder) and the messages it stands for.
  readonly #replaced = new Map<string, readonly string[]>();
  // Each tool result as it arrived, by tool_use id (null when two share an id), indexed up to `#outputsIndexed` entries.
  readonly #outputs = new Map<string, ToolResultBlock | null>();
  #outputsIndexed = 0;

  constructor(options: ContextViewOptions) {
    this.#options = options;
    this.#entries = [...(options.resume ?? [])];
    this.#known = new Set();
    for (const entry of this.#entries) {
      if (entry.type !== "message") continue;
      this.#known.add(entry.message.id);
      this.#resumedLast = entry.message.id;
    }
    // The resumed ids stay known until the first boundary: the caller's first call passes the resumed messages.
    if (options.retain === "context") this.#entries = [...retainedEntries(this.#entries, this.#resumedLast)];
    for (const entry of this.#entries)
      if (entry.type === "layer_decision") this.#noteReplacements(entry.edits);
    const projected = projectContext(this.#entries);
    this.view = projected.messages;
    this.#boundary = projected.boundary;
    this.#session = createTokenCountSession();
    // The usage a resumed response reported still measures the context when nothing edited it since: the count
    // goes on from it, as it did before the session was closed, instead of estimating everything afresh.
    this.#usageValidFrom = usageValidFrom(this.view, options.resume ?? []);
    this.#rebuildCountView();
  }

  /** The entries recorded (or resumed), in order: all of them, or with `retain: "context"` those the projection reads. */
  get entries(): readonly TranscriptEntry[] {
    return this.#entries;
  }

  /** The latest compact boundary, when there is one. */
  get boundary(): CompactBoundaryEntry | undefined {
    return this.#boundary;
  }

  /** Messages kept across the latest boundary from before it: their tool results count as stale. */
  staleMessageIds(): ReadonlySet<string> {
    return new Set(this.#boundary?.preservedSegment?.messageIds ?? []);
  }

  /**
   * Appends the caller's messages that are new since the previous call: those after the last message it passed.
   * The caller passes its conversation each time, only ever appending to it; it may drop messages from the start
   * once passed, as long as the last one it passed is still there. A rewritten or rewound conversation is refused.
   */
  sync(messages: readonly Message[]): Message[] {
    const start = this.#newFrom(messages);
    const added: Message[] = [];
    for (let index = start; index < messages.length; index++) {
      const message = messages[index]!;
      if (!message || typeof message.id !== "string" || message.id.length === 0) {
        throw new InvalidMessageError(
          `Message ${index} has no id; give every message a stable, unique id (createMessage does).`,
        );
      }
      if (!Array.isArray(message.content)) {
        throw new InvalidMessageError(
          `Message ${index} (${message.id}) has no content array; build messages with createMessage.`,
        );
      }
      this.#callerCount++;
      this.#callerLast = message.id;
      if (this.#known.has(message.id)) continue;
      this.#known.add(message.id);
      added.push(message);
      this.#queue(createTranscriptEntry({ type: "message", message }, this.#defaults()));
    }
    if (added.length > 0) {
      this.view = [...this.view, ...added];
      this.#countView.push(...added);
      if (this.#request) this.#request = extendRequestMessages(this.#request, added);
    }
    return added;
  }

  /** Where the caller's new messages start: after the last message it passed (searched from the end). */
  #newFrom(messages: readonly Message[]): number {
    const last = this.#callerLast;
    if (last === undefined) {
      // Resumed: the caller's messages up to the last resumed one are known (it may have dropped older ones,
      // kept ones the entries no longer hold); without it there, each message is looked up among the known.
      const resumed = this.#resumedLast;
      const index = resumed === undefined ? -1 : messages.findLastIndex((message) => message?.id === resumed);
      if (index < 0) return 0;
      this.#callerCount = index + 1;
      this.#callerLast = resumed;
      return index + 1;
    }
    // The common case, the whole list kept: the last message passed is where it was.
    const seen = this.#callerCount;
    if (messages[seen - 1]?.id === last) return seen;
    for (let index = messages.length - 1; index >= 0; index--)
      if (messages[index]?.id === last) return index + 1;
    const index = Math.min(seen, messages.length) - 1;
    throw new InvalidOperationError(
      `prepare() expects the same conversation with new messages appended, but message ${index} changed (the last message it was given, ${last}, is gone; message ${index} is now ${messages[index]?.id ?? "absent"}). Create a new ContextManager (resuming from the transcript) for a rewritten or rewound conversation.`,
    );
  }

  /** Replaces the view with a layer's result and records its edits as one `layer_decision` entry. */
  applyLayer(
    layer: string,
    messages: Message[],
    edits: ContextEdit[],
    tokensBefore: number,
    tokensAfter: number,
    reason: string,
  ): void {
    if (edits.length === 0) return;
    this.#queue(
      createTranscriptEntry(
        { type: "layer_decision", id: this.#id("layer"), layer, edits, tokensBefore, tokensAfter, reason },
        this.#defaults(),
      ),
    );
    this.#noteReplacements(edits);
    this.view = messages;
    this.#usageValidFrom = messages.length;
    this.#rebuildCountView();
  }

  /**
   * The text a tool result held when it was appended (or resumed), before any layer cleared, cut or saved it;
   * undefined for an id the transcript does not hold, or holds twice.
   */
  originalOutput(toolUseId: string): string | undefined {
    for (; this.#outputsIndexed < this.#entries.length; this.#outputsIndexed++) {
      const entry = this.#entries[this.#outputsIndexed]!;
      if (entry.type !== "message" || entry.message.role !== "user") continue;
      for (const block of entry.message.content)
        if (block.type === "tool_result")
          this.#outputs.set(block.tool_use_id, this.#outputs.has(block.tool_use_id) ? null : block);
    }
    const block = this.#outputs.get(toolUseId);
    return block ? resultText(block) : undefined;
  }

  /**
   * The transcript messages a view message stands for: itself, or — for a replacement (a fold, a snip
   * placeholder) — the messages it replaced, recursively.
   */
  originalsOf(id: string): string[] {
    const replaced = this.#replaced.get(id);
    return replaced === undefined ? [id] : replaced.flatMap((original) => this.originalsOf(original));
  }

  #noteReplacements(
    edits: readonly { kind: string; messageIds?: readonly string[]; details?: unknown }[],
  ): void {
    for (const edit of edits) {
      const replacement = (edit.details as { replacement?: { id?: unknown } } | undefined)?.replacement;
      if (edit.kind === "replace_messages" && typeof replacement?.id === "string" && edit.messageIds) {
        this.#replaced.set(replacement.id, edit.messageIds);
      }
    }
  }

  /**
   * Records a boundary compaction — boundary (with the kept messages as its preserved segment), summary,
   * attachments — and re-projects. A kept replacement is preserved as the messages it stands for, so the
   * projection folds them again. The timestamps are the clock's, the ids the factory's.
   */
  applyBoundary(input: BoundaryInput): CompactBoundaryEntry {
    const [boundary, ...rest] = this.#boundaryInputs(input, (kind) => this.#id(kind));
    const boundaryEntry = createTranscriptEntry(boundary!, this.#defaults()) as CompactBoundaryEntry;
    this.#queue(boundaryEntry);
    for (const entry of rest) this.#queue(createTranscriptEntry(entry, this.#defaults()));
    this.#boundary = boundaryEntry;
    if (this.#options.retain === "context") this.#prune();
    this.view = projectContext(this.#entries).messages;
    this.#usageValidFrom = this.view.length;
    this.#session.reset();
    this.#rebuildCountView();
    return boundaryEntry;
  }

  /**
   * The view a boundary compaction would leave (`applyBoundary` with the same input), recording nothing: what
   * the pipeline measures before it applies one.
   */
  previewBoundary(input: BoundaryInput): Message[] {
    return this.preview(this.#boundaryInputs(input, (kind) => `preview_${kind}`));
  }

  /** The view with these entries appended, recording nothing (ids and the clock's time are the caller's). */
  preview(inputs: readonly TranscriptEntryInput[]): Message[] {
    const defaults = this.#defaults();
    return projectContext([
      ...this.#entries,
      ...inputs.map((input) => createTranscriptEntry(input, defaults)),
    ]).messages;
  }

  /** The entries of a boundary compaction: boundary (first), summary, the session metadata again, attachments. */
  #boundaryInputs(input: BoundaryInput, id: (kind: string) => string): TranscriptEntryInput[] {
    const last = this.view[this.view.length - 1];
    const keptIds = input.keptMessageIds.flatMap((kept) => this.originalsOf(kept));
    const boundaryId = id("boundary");
    const boundary: TranscriptEntryInput = {
      type: "compact_boundary",
      id: boundaryId,
      trigger: input.trigger,
      layer: input.layer,
      tokensBefore: input.tokensBefore,
      tokensAfter: input.tokensAfter,
      messagesSummarized: input.messagesSummarized,
      logicalParentId: last?.id ?? null,
      ...(keptIds.length > 0 ? { preservedSegment: { anchorId: keptIds[0]!, messageIds: keptIds } } : {}),
      ...(input.discoveredTools && input.discoveredTools.length > 0
        ? { discoveredTools: input.discoveredTools }
        : {}),
    };
    const entries: TranscriptEntryInput[] = [
      boundary,
      {
        type: "summary",
        id: id("summary"),
        kind: "compact",
        text: input.summaryText,
        boundaryId,
        ...(input.summarizer ? { summarizer: input.summarizer } : {}),
        ...(input.fallback ? { fallback: input.fallback } : {}),
      },
    ];
    // Session metadata (title, tags) goes after the compaction again, so a reader of the transcript's tail finds it.
    const metadata = this.#latestMetadata();
    if (metadata) {
      const { v: _version, id: _id, timestamp: _time, sessionId: _session, ...copy } = metadata;
      entries.push({ ...copy, id: id("metadata") });
    }
    for (const attachment of input.attachments)
      entries.push({ type: "attachment", id: id("attachment"), attachment });
    return entries;
  }

  /** Appends a metadata entry (it does not change the projection). */
  appendMetadata(metadata: { title?: string; tags?: string[]; data?: Record<string, unknown> }): void {
    this.#queue(
      createTranscriptEntry({ type: "metadata", id: this.#id("metadata"), ...metadata }, this.#defaults()),
    );
  }

  /** Appends a pin entry: messages pinned or unpinned (it does not change the projection). */
  appendPin(messageIds: readonly string[], pinned: boolean, by: string | undefined): void {
    this.#queue(
      createTranscriptEntry(
        { type: "pin", id: this.#id("pin"), messageIds: [...messageIds], pinned, ...(by ? { by } : {}) },
        this.#defaults(),
      ),
    );
  }

  /** Appends attachments after the current view (context added between turns). */
  appendAttachments(attachments: readonly Attachment[]): void {
    if (attachments.length === 0) return;
    for (const attachment of attachments) {
      this.#queue(
        createTranscriptEntry(
          { type: "attachment", id: this.#id("attachment"), attachment },
          this.#defaults(),
        ),
      );
    }
    this.view = projectContext(this.#entries).messages;
    this.#rebuildCountView();
  }

  /**
   * Keeps only the entries the projection reads, and the records kept beside them (known ids, replacements,
   * original outputs) for those entries alone: what the view holds no longer grows with the session.
   */
  #prune(): void {
    this.#entries = [...retainedEntries(this.#entries, this.#callerLast)];
    this.#known = new Set();
    this.#replaced.clear();
    this.#outputs.clear();
    this.#outputsIndexed = 0;
    for (const entry of this.#entries) {
      if (entry.type === "message") this.#known.add(entry.message.id);
      if (entry.type === "layer_decision") this.#noteReplacements(entry.edits);
    }
  }

  /** The estimated tokens of the system prompt and tools last set. */
  get preambleTokens(): number {
    return this.#preambleTokens;
  }

  /** Sets the estimated tokens of the system prompt and tools, counted when no response usage anchors the count. */
  setPreambleTokens(tokens: number): void {
    if (tokens === this.#preambleTokens) return;
    this.#preambleTokens = tokens;
    this.#session = createTokenCountSession({ preambleTokens: tokens });
  }

  /** The context size of the view: anchored on the last valid usage plus the padded estimate of the rest. */
  count(): ContextTokenCount {
    return this.#session.count(this.#countView);
  }

  /** Waits until every queued entry is written; rethrows a write failure (nothing may point at unwritten entries). */
  async flush(): Promise<void> {
    const sink = this.#options.sink;
    if (sink && this.#pending.length > 0) {
      const batch = this.#pending;
      this.#pending = [];
      this.#writes = this.#writes
        .then(() => sink.append(batch))
        .catch((error: unknown) => {
          this.#writeError ??= error;
        });
    }
    await this.#writes;
    if (this.#writeError !== undefined) {
      const error = this.#writeError;
      this.#writeError = undefined;
      throw error;
    }
  }

  #latestMetadata(): Extract<TranscriptEntry, { type: "metadata" }> | undefined {
    for (let index = this.#entries.length - 1; index >= 0; index--) {
      const entry = this.#entries[index]!;
      if (entry.type === "metadata") return entry;
    }
    return undefined;
  }

  #queue(entry: TranscriptEntry): void {
    this.#entries.push(entry);
    this.#pending.push(entry);
  }

  #defaults(): { sessionId?: string; now: Date } {
    const now = new Date(this.#options.clock());
    return this.#options.sessionId === undefined ? { now } : { sessionId: this.#options.sessionId, now };
  }

  #id(kind: string): string {
    return this.#options.idFactory?.(kind) ?? `${kind}_${randomUUID()}`;
  }

  /** The request's `messages` for the current view (`toRequestMessages(view)`), incremental while messages are only appended. */
  requestMessages(): RequestMessage[] {
    this.#request ??= extendRequestMessages([], this.view);
    return this.#request;
  }

  #rebuildCountView(): void {
    this.#request = undefined;
    const validFrom = this.#usageValidFrom;
    this.#countView = this.view.map((message, index) => {
      if (index >= validFrom || message.usage === undefined) return message;
      const { usage: _stale, ...rest } = message;
      return rest;
    });
  }
}

/**
 * Where usage becomes valid in a resumed view: after the messages that a layer decision or a compact boundary
 * edited or summarised. The entries are in the order things happened (a response is written after the request's
 * edits), so the messages and attachments after the last such entry are those appended since; the view ends
 * with them, and a response among them reported the size of the context as it is now.
 */
function usageValidFrom(view: readonly Message[], entries: readonly TranscriptEntry[]): number {
  const appended = new Set<string>();
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index]!;
    if (entry.type === "layer_decision" || entry.type === "compact_boundary") break;
    if (entry.type === "message") appended.add(entry.message.id);
    else if (entry.type === "attachment") appended.add(entry.id);
  }
  let from = view.length;
  while (from > 0 && appended.has(view[from - 1]!.id)) from--;
  return from;
}
