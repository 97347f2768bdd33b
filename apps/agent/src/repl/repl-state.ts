import type { PermissionUpdate } from "@unforget/session";
import type { EditDiff } from "./edit-diff.ts";

/** Something printed once, above the live part of the screen (Ink's `<Static>`). */
export type HistoryItem =
  | { kind: "user"; id: number; text: string }
  | { kind: "assistant"; id: number; markdown: string }
  | {
      kind: "tool";
      id: number;
      title: string;
      status: string;
      ok: boolean;
      /** The result as the model reads it; shown folded unless verbose. */
      output: string;
      /** What an edit changed, drawn instead of the result when the call succeeded. */
      diff?: EditDiff;
    }
  /** A compaction: which layer ran and what it freed. */
  | { kind: "compaction"; id: number; text: string }
  | { kind: "notice"; id: number; tone: "info" | "warning" | "error"; text: string }
  /** Output of a slash command (plain text, preformatted). */
  | { kind: "output"; id: number; text: string };

/** The gauge of the status line. */
export interface StatusView {
  model: string;
  provider: string;
  tokens: number;
  threshold: number;
  turnsUntilCompaction: number | undefined;
  runningTasks: number;
  mode: string;
}

/** A question about a tool call, waiting for the user. */
export interface PermissionQuestion {
  toolName: string;
  /** One line: what the call does (`Bash(npm test)`, `Write(src/a.ts)`). */
  title: string;
  reason: string;
  suggestions: PermissionUpdate[];
  /** What "always" adds, in words ("Bash(npm test:*) for this session"). */
  alwaysLabel: string | undefined;
  answer(choice: "once" | "always" | "deny"): void;
}

/** The trust question asked before the project's files are loaded. */
export interface TrustQuestion {
  changed: boolean;
  items: string[];
  /** Of `items`, those that are new since the folder was trusted. */
  added: string[];
  answer(trust: boolean): void;
}

export interface ReplState {
  phase: "starting" | "ready" | "exiting";
  history: HistoryItem[];
  /** The reply streaming now (Markdown). */
  liveText: string;
  /** Tool calls running now, by tool use id. */
  running: { id: string; title: string }[];
  busy: boolean;
  status: StatusView | undefined;
  permission: PermissionQuestion | undefined;
  trust: TrustQuestion | undefined;
  /** Prompts typed while a turn ran, sent when it ends. */
  queued: string[];
  /** Ctrl-C was pressed once: the next one exits (any other key disarms it). */
  exitArmed: boolean;
  verbose: boolean;
}

type Listener = () => void;

/** The REPL's state, changed by the controller and read by the Ink components (`useSyncExternalStore`). */
export class ReplStore {
  #state: ReplState;
  readonly #listeners = new Set<Listener>();
  #nextId = 1;

  constructor(initial: Partial<ReplState> = {}) {
    this.#state = {
      phase: "starting",
      history: [],
      liveText: "",
      running: [],
      busy: false,
      status: undefined,
      permission: undefined,
      trust: undefined,
      queued: [],
      exitArmed: false,
      verbose: false,
      ...initial,
    };
  }

  readonly getState = (): ReplState => this.#state;

  readonly subscribe = (listener: Listener): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  update(change: Partial<ReplState> | ((state: ReplState) => Partial<ReplState>)): void {
    const patch = typeof change === "function" ? change(this.#state) : change;
    this.#state = { ...this.#state, ...patch };
    for (const listener of this.#listeners) listener();
  }

  /** Appends to the history (printed once, never changed). */
  print(item: NewHistoryItem): void {
    const entry = { ...item, id: this.#nextId++ } as HistoryItem;
    this.update((state) => ({ history: [...state.history, entry] }));
  }
}

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

/** An item to print: the store gives it its id. */
export type NewHistoryItem = DistributiveOmit<HistoryItem, "id">;

/** 12345 → "12.3K"; 1_234_567 → "1.2M". */
export function formatTokens(tokens: number): string {
  if (tokens < 1000) return String(Math.round(tokens));
  if (tokens < 1_000_000) return `${(tokens / 1000).toFixed(tokens < 10_000 ? 1 : 0)}K`;
  return `${(tokens / 1_000_000).toFixed(1)}M`;
}

/** A bar of `width` cells filled to `share` (0–1). */
export function bar(share: number, width: number): string {
  const filled = Math.max(0, Math.min(width, Math.round(share * width)));
  return `${"█".repeat(filled)}${"░".repeat(width - filled)}`;
}

/**
 * When the next compaction comes, in words: "compaction in about 3 turns", "… 1 turn", "compaction due" (the next
 * request compacts), "compaction in 100+ turns" (a large window early on: the estimate says only that it is far).
 */
export function describeNextCompaction(turns: number | undefined): string | undefined {
  if (turns === undefined) return undefined;
  if (turns <= 0) return "compaction due";
  if (turns >= 100) return "compaction in 100+ turns";
  return `compaction in about ${turns} turn${turns === 1 ? "" : "s"}`;
}

/** `/context`'s line about the next compaction: when, or why that is not known yet (the manager says why). */
export function nextCompactionLine(status: {
  turnsUntilCompaction: number | undefined;
  growthUnknown?: string;
}): string {
  return (
    describeNextCompaction(status.turnsUntilCompaction) ??
    `when the next compaction comes is not known yet${status.growthUnknown ? ` (${status.growthUnknown})` : ""}`
  );
}
