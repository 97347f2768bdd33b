import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type ContentBlock,
  type Message,
  type ModelProvider,
  type RequestMessage,
  repairToolPairs,
  type SessionMemoryNotes,
  type SessionMemorySource,
  type ToolResultBlock,
  type ToolUseBlock,
} from "@unforget/core";
import { writeFileAtomic } from "@unforget/files";
import { isRecord } from "../store/is-record.ts";
import { isAbsent, storeFileError } from "../store/store-file-errors.ts";
import {
  decideSessionMemoryUpdate,
  INITIAL_TRIGGER_STATE,
  type SessionMemoryThresholds,
  type SessionMemoryTriggerState,
  type SessionTurnObservation,
} from "./session-memory-trigger.ts";
import {
  isEmptyNotes,
  loadSessionNotesConfig,
  type NotesBudget,
  notesBudgetReminders,
  renderTemplate,
  SESSION_NOTES_COMPACT_SECTION_CHARS,
  SESSION_NOTES_SECTION_TOKENS,
  SESSION_NOTES_TOTAL_TOKENS,
  truncateForCompact,
} from "./session-notes.ts";

/** The one tool the notes update may use. */
export const SESSION_NOTES_EDIT_TOOL = "edit_session_notes";

export interface SessionMemoryOptions {
  /** The session's folder: the notes are `session-memory.md` in it, their state `session-memory.json`. */
  directory: string;
  /** The provider of the update call. Without one, notes are never updated (but existing ones are read). */
  provider?: ModelProvider;
  /** Model id of the update call. */
  model?: string;
  /** The conversation so far, for updates the trigger or `requestUpdate` start in the background. */
  getMessages?: () => readonly Message[] | Promise<readonly Message[]>;
  /** System prompt of the update call; reuse the main conversation's so the provider's prompt cache is shared. */
  system?: string;
  thresholds?: SessionMemoryThresholds;
  budget?: NotesBudget;
  /** A folder with `template.md` and/or `prompt.md` replacing the defaults. */
  configDir?: string;
  /** Characters per section kept by `readNotes` (for compaction). Default 8,000. */
  compactSectionChars?: number;
  /** Model round trips per update (each may edit several times). Default 4. */
  maxTurns?: number;
  /** Output tokens per round trip. Default 8,192. */
  maxOutputTokens?: number;
  /** Called when a background update fails (it never throws into the session). */
  onError?: (error: unknown) => void;
}

/** What one update did. */
export interface SessionNotesUpdate {
  /** Whether the notes changed. */
  changed: boolean;
  /** Edits applied, and tool calls refused (another tool, another file, text not found). */
  edits: number;
  refused: number;
  /** Id of the last message the notes now cover. */
  lastSummarizedMessageId: string | undefined;
}

interface PersistedState {
  trigger: SessionMemoryTriggerState;
  lastSummarizedMessageId?: string;
  updatedAt?: string;
}

/** Working memory of one session: a notes file kept up to date in the background, read by compaction. */
export interface SessionMemory extends SessionMemorySource {
  /** The notes file. */
  readonly notesPath: string;
  /**
   * Called after each model response (the post-sampling hook): applies the trigger and, when it fires,
   * starts an update in the background. Returns whether one was started. Never throws.
   */
  observe(turn: SessionTurnObservation): boolean;
  /** Runs an update now (or joins the one in flight) with these messages; rejects only on a provider failure. */
  update(messages: readonly Message[]): Promise<SessionNotesUpdate>;
  /** The notes as they are on disk, uncut (the template when none were written yet). */
  readRaw(): Promise<string>;
}

function editToolDefinition(notesPath: string) {
  return {
    name: SESSION_NOTES_EDIT_TOOL,
    description: `Replace one exact, unique piece of text in the session notes file (${notesPath}) with new text.`,
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: `Must be ${notesPath}` },
        old_string: { type: "string", description: "Text to replace; must appear exactly once" },
        new_string: { type: "string" },
      },
      required: ["path", "old_string", "new_string"],
    },
  };
}

/**
 * The permission rule of the update call: only the edit tool, only on this notes file, only a unique match.
 * Returns the new notes, or an error text for the tool result.
 */
export function applyNotesEdit(
  notes: string,
  notesPath: string,
  call: Pick<ToolUseBlock, "name" | "input">,
): { notes: string } | { error: string } {
  if (call.name !== SESSION_NOTES_EDIT_TOOL) {
    return {
      error: `Permission denied: only ${SESSION_NOTES_EDIT_TOOL} is allowed while updating the session notes.`,
    };
  }
  const input = isRecord(call.input) ? call.input : {};
  if (input.path !== notesPath) {
    return { error: `Permission denied: ${SESSION_NOTES_EDIT_TOOL} may only edit ${notesPath}.` };
  }
  const oldText = input.old_string;
  const newText = input.new_string;
  if (typeof oldText !== "string" || typeof newText !== "string" || oldText === "") {
    return { error: "old_string (non-empty) and new_string must be strings." };
  }
  const first = notes.indexOf(oldText);
  if (first === -1)
    return { error: "old_string was not found in the notes; copy it exactly from the current notes." };
  if (notes.indexOf(oldText, first + 1) !== -1) {
    return { error: "old_string appears more than once; include more surrounding text to make it unique." };
  }
  return { notes: notes.slice(0, first) + newText + notes.slice(first + oldText.length) };
}

/**
 * Opens the working memory of a session (creating nothing until the first update). The notes and the
 * trigger state live in `directory`, so a resumed session continues with them. Implements the
 * `SessionMemorySource` that a session-memory compaction reads instead of calling a model.
 */
export async function createSessionMemory(options: SessionMemoryOptions): Promise<SessionMemory> {
  const notesPath = join(options.directory, "session-memory.md");
  const statePath = join(options.directory, "session-memory.json");
  const tempDir = join(options.directory, ".session-memory-tmp");
  const config = await loadSessionNotesConfig(options.configDir);
  const maxTurns = options.maxTurns ?? 4;
  let state: PersistedState = { trigger: { ...INITIAL_TRIGGER_STATE } };
  try {
    const saved = JSON.parse(await readFile(statePath, "utf8")) as PersistedState;
    if (isRecord(saved) && isRecord(saved.trigger)) state = saved;
  } catch {
    // No state yet (a new session) or an unreadable one: start from the beginning.
  }
  let running: Promise<SessionNotesUpdate> | undefined;
  let again = false;

  async function readRaw(): Promise<string> {
    try {
      return await readFile(notesPath, "utf8");
    } catch (error) {
      // No notes yet: the template. Unreadable notes are an error, never replaced by an empty template.
      if (isAbsent(error)) return config.template;
      throw storeFileError("The session notes", notesPath, error);
    }
  }

  async function saveState(): Promise<void> {
    await mkdir(options.directory, { recursive: true });
    await writeFileAtomic(statePath, JSON.stringify(state, null, 2), { tempDir });
  }

  async function runUpdate(
    pending: readonly Message[] | Promise<readonly Message[]>,
  ): Promise<SessionNotesUpdate> {
    const messages = await pending;
    if (!options.provider) {
      return { changed: false, edits: 0, refused: 0, lastSummarizedMessageId: state.lastSummarizedMessageId };
    }
    const lastMessage = messages.at(-1);
    const before = await readRaw();
    let notes = before;
    const prompt = [
      renderTemplate(config.prompt, {
        currentNotes: notes,
        notesPath,
        sectionTokens: options.budget?.sectionTokens ?? SESSION_NOTES_SECTION_TOKENS,
        totalTokens: options.budget?.totalTokens ?? SESSION_NOTES_TOTAL_TOKENS,
        editTool: SESSION_NOTES_EDIT_TOOL,
      }),
      notesBudgetReminders(notes, options.budget),
    ]
      .filter((part) => part !== "")
      .join("\n\n");
    const conversation: RequestMessage[] = repairToolPairs(messages).messages.map(({ role, content }) => ({
      role,
      content,
    }));
    conversation.push({ role: "user", content: [{ type: "text", text: prompt }] });
    let edits = 0;
    let refused = 0;
    for (let turn = 0; turn < maxTurns; turn++) {
      const response = await options.provider.createMessage({
        model: options.model ?? "",
        maxTokens: options.maxOutputTokens ?? 8_192,
        ...(options.system === undefined ? {} : { system: options.system }),
        messages: conversation,
        tools: [editToolDefinition(notesPath)],
        toolChoice: { type: "auto" },
      });
      const calls = response.content.filter((block): block is ToolUseBlock => block.type === "tool_use");
      if (calls.length === 0) break;
      const results: ContentBlock[] = calls.map((call): ToolResultBlock => {
        const outcome = applyNotesEdit(notes, notesPath, call);
        if ("error" in outcome) {
          refused++;
          return { type: "tool_result", tool_use_id: call.id, content: outcome.error, is_error: true };
        }
        notes = outcome.notes;
        edits++;
        return { type: "tool_result", tool_use_id: call.id, content: "The session notes were edited." };
      });
      conversation.push({ role: "assistant", content: response.content });
      conversation.push({ role: "user", content: results });
      if (response.stopReason !== "tool_use") break;
    }
    const changed = notes !== before;
    if (changed) {
      await mkdir(options.directory, { recursive: true });
      await writeFileAtomic(notesPath, notes, { tempDir });
    }
    if (lastMessage) state.lastSummarizedMessageId = lastMessage.id;
    state.updatedAt = new Date().toISOString();
    await saveState();
    return { changed, edits, refused, lastSummarizedMessageId: state.lastSummarizedMessageId };
  }

  function update(messages: readonly Message[] | Promise<readonly Message[]>): Promise<SessionNotesUpdate> {
    if (running) {
      again = true;
      return running;
    }
    const current = runUpdate(messages).finally(() => {
      running = undefined;
    });
    running = current;
    return current;
  }

  function startInBackground(): boolean {
    if (!options.getMessages || !options.provider) return false;
    if (running) {
      again = true;
      return true;
    }
    const getMessages = options.getMessages;
    const report = (error: unknown) => {
      try {
        options.onError?.(error);
      } catch {
        // A failing error sink must not surface as an unhandled rejection.
      }
    };
    // `update` registers the run synchronously, so a compaction waiting right after this call sees it.
    const kick = (): void => {
      again = false;
      update(Promise.resolve().then(getMessages)).then(
        () => {
          if (again) kick();
        },
        (error: unknown) => {
          report(error);
          if (again) kick();
        },
      );
    };
    kick();
    return true;
  }

  return {
    notesPath,
    readRaw,
    update,
    observe(turn) {
      try {
        const decision = decideSessionMemoryUpdate(state.trigger, turn, options.thresholds);
        state.trigger = decision.state;
        if (!decision.update) {
          void saveState().catch(() => undefined);
          return false;
        }
        return startInBackground();
      } catch {
        return false;
      }
    },
    async waitForPendingExtraction(waitOptions = {}) {
      const pending = running;
      if (!pending) return;
      const timeoutMs = waitOptions.timeoutMs ?? 15_000;
      let timer: NodeJS.Timeout | undefined;
      let onAbort: (() => void) | undefined;
      await Promise.race([
        pending.then(
          () => undefined,
          () => undefined,
        ),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, timeoutMs);
        }),
        new Promise<void>((resolve) => {
          if (!waitOptions.signal) return;
          if (waitOptions.signal.aborted) resolve();
          onAbort = () => resolve();
          waitOptions.signal.addEventListener("abort", onAbort, { once: true });
        }),
      ]);
      clearTimeout(timer);
      if (onAbort) waitOptions.signal?.removeEventListener("abort", onAbort);
    },
    async readNotes(): Promise<SessionMemoryNotes | undefined> {
      try {
        const raw = await readFile(notesPath, "utf8");
        if (isEmptyNotes(raw, config.template)) return undefined;
        const notes: SessionMemoryNotes = {
          text: truncateForCompact(raw, options.compactSectionChars ?? SESSION_NOTES_COMPACT_SECTION_CHARS),
          path: notesPath,
        };
        if (state.lastSummarizedMessageId !== undefined)
          notes.lastSummarizedMessageId = state.lastSummarizedMessageId;
        if (state.updatedAt !== undefined) notes.updatedAt = state.updatedAt;
        return notes;
      } catch {
        return undefined;
      }
    },
    requestUpdate() {
      try {
        startInBackground();
      } catch {
        // Never throws: the caller is a compaction that will read whatever notes exist.
      }
    },
  };
}
