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
  type SessionNotesConfig,
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

/** What the working memory of one session works on: its files, its options and the update in flight. */
interface SessionMemoryState {
  readonly options: SessionMemoryOptions;
  readonly notesPath: string;
  readonly statePath: string;
  readonly tempDir: string;
  readonly config: SessionNotesConfig;
  /** The trigger state and what the notes cover, saved beside the notes. */
  persisted: PersistedState;
  /** The update running now, joined by any update asked for meanwhile. */
  running: Promise<SessionNotesUpdate> | undefined;
  /** Whether another update was asked for while one was running: it starts when that one ends. */
  again: boolean;
}

/**
 * Opens the working memory of a session (creating nothing until the first update). The notes and the
 * trigger state live in `directory`, so a resumed session continues with them. Implements the
 * `SessionMemorySource` that a session-memory compaction reads instead of calling a model.
 */
export async function createSessionMemory(options: SessionMemoryOptions): Promise<SessionMemory> {
  const statePath = join(options.directory, "session-memory.json");
  const state: SessionMemoryState = {
    options,
    notesPath: join(options.directory, "session-memory.md"),
    statePath,
    tempDir: join(options.directory, ".session-memory-tmp"),
    config: await loadSessionNotesConfig(options.configDir),
    persisted: await loadPersistedState(statePath),
    running: undefined,
    again: false,
  };
  return {
    notesPath: state.notesPath,
    readRaw: () => readRawNotes(state),
    update: (messages) => updateNotes(state, messages),
    observe: (turn) => observeTurn(state, turn),
    waitForPendingExtraction: (waitOptions = {}) => waitForRunningUpdate(state, waitOptions),
    readNotes: () => readNotesForCompact(state),
    requestUpdate() {
      try {
        startInBackground(state);
      } catch {
        // Never throws: the caller is a compaction that will read whatever notes exist.
      }
    },
  };
}

/** The saved trigger state, or the initial one for a new session (or an unreadable file). */
async function loadPersistedState(statePath: string): Promise<PersistedState> {
  try {
    const saved = JSON.parse(await readFile(statePath, "utf8")) as PersistedState;
    if (isRecord(saved) && isRecord(saved.trigger)) return saved;
  } catch {
    // No state yet (a new session) or an unreadable one: start from the beginning.
  }
  return { trigger: { ...INITIAL_TRIGGER_STATE } };
}

async function readRawNotes(state: SessionMemoryState): Promise<string> {
  try {
    return await readFile(state.notesPath, "utf8");
  } catch (error) {
    // No notes yet: the template. Unreadable notes are an error, never replaced by an empty template.
    if (isAbsent(error)) return state.config.template;
    throw storeFileError("The session notes", state.notesPath, error);
  }
}

async function saveState(state: SessionMemoryState): Promise<void> {
  await mkdir(state.options.directory, { recursive: true });
  await writeFileAtomic(state.statePath, JSON.stringify(state.persisted, null, 2), {
    tempDir: state.tempDir,
  });
}

/** The update call's instruction: the prompt with the current notes, and reminders of the budget. */
function updatePrompt(state: SessionMemoryState, notes: string): string {
  const { options } = state;
  return [
    renderTemplate(state.config.prompt, {
      currentNotes: notes,
      notesPath: state.notesPath,
      sectionTokens: options.budget?.sectionTokens ?? SESSION_NOTES_SECTION_TOKENS,
      totalTokens: options.budget?.totalTokens ?? SESSION_NOTES_TOTAL_TOKENS,
      editTool: SESSION_NOTES_EDIT_TOOL,
    }),
    notesBudgetReminders(notes, options.budget),
  ]
    .filter((part) => part !== "")
    .join("\n\n");
}

/** The model's round trips: each edit call applied under the permission rule, until it stops editing. */
async function askForEdits(
  state: SessionMemoryState,
  provider: ModelProvider,
  conversation: RequestMessage[],
  before: string,
): Promise<{ notes: string; edits: number; refused: number }> {
  const { options, notesPath } = state;
  let notes = before;
  let edits = 0;
  let refused = 0;
  for (let turn = 0; turn < (options.maxTurns ?? 4); turn++) {
    const response = await provider.createMessage({
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
  return { notes, edits, refused };
}

/** One update: the conversation and the instruction to the model, its edits written, the state saved. */
async function runUpdate(
  state: SessionMemoryState,
  pending: readonly Message[] | Promise<readonly Message[]>,
): Promise<SessionNotesUpdate> {
  const { options, persisted } = state;
  const messages = await pending;
  if (!options.provider) {
    return {
      changed: false,
      edits: 0,
      refused: 0,
      lastSummarizedMessageId: persisted.lastSummarizedMessageId,
    };
  }
  const lastMessage = messages.at(-1);
  const before = await readRawNotes(state);
  const conversation: RequestMessage[] = repairToolPairs(messages).messages.map(({ role, content }) => ({
    role,
    content,
  }));
  conversation.push({ role: "user", content: [{ type: "text", text: updatePrompt(state, before) }] });
  const { notes, edits, refused } = await askForEdits(state, options.provider, conversation, before);
  const changed = notes !== before;
  if (changed) {
    await mkdir(options.directory, { recursive: true });
    await writeFileAtomic(state.notesPath, notes, { tempDir: state.tempDir });
  }
  if (lastMessage) persisted.lastSummarizedMessageId = lastMessage.id;
  persisted.updatedAt = new Date().toISOString();
  await saveState(state);
  return { changed, edits, refused, lastSummarizedMessageId: persisted.lastSummarizedMessageId };
}

/** Starts an update, or joins the one in flight (asking for another after it). */
function updateNotes(
  state: SessionMemoryState,
  messages: readonly Message[] | Promise<readonly Message[]>,
): Promise<SessionNotesUpdate> {
  if (state.running) {
    state.again = true;
    return state.running;
  }
  const current = runUpdate(state, messages).finally(() => {
    state.running = undefined;
  });
  state.running = current;
  return current;
}

function startInBackground(state: SessionMemoryState): boolean {
  const { options } = state;
  if (!options.getMessages || !options.provider) return false;
  if (state.running) {
    state.again = true;
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
    state.again = false;
    updateNotes(state, Promise.resolve().then(getMessages)).then(
      () => {
        if (state.again) kick();
      },
      (error: unknown) => {
        report(error);
        if (state.again) kick();
      },
    );
  };
  kick();
  return true;
}

/** The post-sampling hook: applies the trigger and, when it fires, starts an update. Never throws. */
function observeTurn(state: SessionMemoryState, turn: SessionTurnObservation): boolean {
  try {
    const decision = decideSessionMemoryUpdate(state.persisted.trigger, turn, state.options.thresholds);
    state.persisted.trigger = decision.state;
    if (!decision.update) {
      void saveState(state).catch(() => undefined);
      return false;
    }
    return startInBackground(state);
  } catch {
    return false;
  }
}

/** Waits for the update in flight, at most `timeoutMs` (15 s by default) or until the signal aborts. */
async function waitForRunningUpdate(
  state: SessionMemoryState,
  waitOptions: { timeoutMs?: number; signal?: AbortSignal },
): Promise<void> {
  const pending = state.running;
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
}

/** The notes as compaction reads them: cut per section, or none while they are still the template. */
async function readNotesForCompact(state: SessionMemoryState): Promise<SessionMemoryNotes | undefined> {
  const { persisted } = state;
  try {
    const raw = await readFile(state.notesPath, "utf8");
    if (isEmptyNotes(raw, state.config.template)) return undefined;
    const notes: SessionMemoryNotes = {
      text: truncateForCompact(raw, state.options.compactSectionChars ?? SESSION_NOTES_COMPACT_SECTION_CHARS),
      path: state.notesPath,
    };
    if (persisted.lastSummarizedMessageId !== undefined)
      notes.lastSummarizedMessageId = persisted.lastSummarizedMessageId;
    if (persisted.updatedAt !== undefined) notes.updatedAt = persisted.updatedAt;
    return notes;
  } catch {
    return undefined;
  }
}
