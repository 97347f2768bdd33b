import { ConfigurationError, type ModelProvider } from "@unforget/core";
import { explainDecay } from "../retrieve/memory-decay.ts";
import { MemoryConflictError, MemoryNotFoundError } from "../store/memory-errors.ts";
import { parseMemoryFile } from "../store/memory-frontmatter.ts";
import type { ProposalQueue, ProposedChange } from "../store/memory-proposals.ts";
import type { MemoryStore } from "../store/memory-store.ts";
import { type Loaded, modelActions, ruleActions, toChanges } from "./dream-decisions.ts";
import { createDreamStateFolder, type DreamStateStore } from "./dream-state.ts";

/** How long after a dream the next one may run. */
export const DREAM_COOLDOWN_MS = 24 * 3_600_000;
/** Sessions that must have ended since the last dream. */
export const DREAM_MIN_SESSIONS = 5;
/** A dream lock not refreshed for this long belongs to a dream that died, and is taken over. */
export const DREAM_LOCK_STALE_MS = 3_600_000;
/** Memories whose relevance × decay falls below this are pruned (deleted; the last version stays). */
export const DREAM_PRUNE_THRESHOLD = 0.1;

export interface DreamOptions {
  store: MemoryStore;
  /**
   * Where the dream keeps its state, lock and reports, for any store (a database store provides its own).
   * One of `state` and `stateFolder` is required.
   */
  state?: DreamStateStore;
  /** Instead of `state`: a folder (for a memory dir: `<root>/.unforget/dream`). */
  stateFolder?: string;
  /** `propose` (default): one reviewable proposal, memories untouched until approved. `apply`: write now. */
  mode?: "propose" | "apply";
  /** Required in `propose` mode. */
  proposals?: ProposalQueue;
  /** With a provider, a model reviews the candidates (merges, contradictions, relevance); without, rules do. */
  provider?: ModelProvider;
  model?: string;
  /** Recent session summaries or notes, for the model to weigh memories against. */
  recentSessions?: () => Promise<readonly string[]> | readonly string[];
  cooldownMs?: number;
  minSessions?: number;
  lockStaleMs?: number;
  pruneThreshold?: number;
  now?: () => Date;
}

/** One consolidation decision. */
export type DreamAction =
  | { action: "merge"; keep: string; remove: string[]; content: string; reason: string }
  | { action: "supersede"; newer: string; older: string; reason: string }
  | { action: "relevance"; name: string; relevance: number; reason: string }
  | { action: "prune"; name: string; reason: string };

export interface DreamReport {
  /** False when a gate stopped it (`skipped` says which). */
  ran: boolean;
  skipped?: string;
  /** One paragraph: what the dream changed or proposes (the task's result). */
  summary: string;
  actions: DreamAction[];
  changes: ProposedChange[];
  /** In `propose` mode, the proposal to review. */
  proposalId?: string;
  /** In `apply` mode, changes not applied because the memory changed meanwhile. */
  conflicts: string[];
  /** Where the markdown report for the user was kept (a file path, or the database's id for it). */
  reportPath?: string;
}

/** The shape a `dream` task in `@unforget/tasks` runs (the app passes this object as the task's job). */
export interface DreamJob {
  readonly name: string;
  /** Records that a session ended (one of the gates counts them). */
  recordSession(sessionId: string): Promise<void>;
  /** Whether the gates (cooldown, sessions) would let a dream run now. */
  due(): Promise<{ due: boolean; reason: string }>;
  /** Runs the four phases once; `force` skips the cooldown and session gates (never the lock). */
  run(context?: {
    signal?: AbortSignal;
    log?: (line: string) => Promise<void> | void;
    force?: boolean;
  }): Promise<DreamReport>;
}

function reportMarkdown(report: DreamReport, at: string): string {
  const lines = [`# Dream report — ${at}`, "", report.summary, "", "## Actions", ""];
  for (const action of report.actions) {
    if (action.action === "merge")
      lines.push(`- merged ${action.remove.join(", ")} into ${action.keep} (${action.reason})`);
    else if (action.action === "supersede")
      lines.push(`- ${action.newer} supersedes ${action.older} (${action.reason})`);
    else if (action.action === "relevance")
      lines.push(`- relevance of ${action.name} set to ${action.relevance} (${action.reason})`);
    else lines.push(`- pruned ${action.name} (${action.reason})`);
  }
  if (report.actions.length === 0) lines.push("- nothing to change");
  lines.push("", "## Changes", "");
  for (const change of report.changes) lines.push(`- ${change.kind} ${change.name}`);
  if (report.proposalId) lines.push("", `Proposal to review: ${report.proposalId}`);
  if (report.conflicts.length > 0)
    lines.push("", `Not applied (changed meanwhile): ${report.conflicts.join(", ")}`);
  return `${lines.join("\n")}\n`;
}

/** What a dream job works on: its options, its state store (gates, lock, reports), its mode and clock. */
interface DreamJobState {
  readonly options: DreamOptions;
  readonly state: DreamStateStore;
  readonly mode: "propose" | "apply";
  readonly clock: () => Date;
}

/**
 * The dream job: orient (load the memories and recent sessions) → gather (candidates) → consolidate (merge
 * duplicates, resolve contradictions with `supersedes`, adjust relevance) → prune (relevance × decay below
 * the threshold). Gated by a cooldown, a minimum number of ended sessions and a lock with a stale timeout;
 * writes a report of what it changed. By default its result is one proposal to review (new versions when
 * approved, nothing lost); `apply` writes the same changes at once, each conditioned on what the dream read.
 */
export function createDreamJob(options: DreamOptions): DreamJob {
  const chosen =
    options.state ??
    (options.stateFolder === undefined ? undefined : createDreamStateFolder(options.stateFolder));
  if (chosen === undefined) {
    throw new ConfigurationError(
      "createDreamJob needs `state` (the store's dream state, e.g. a database store's) or `stateFolder` (a folder for a memory dir).",
      { setting: "state" },
    );
  }
  const job: DreamJobState = {
    options,
    state: chosen,
    mode: options.mode ?? "propose",
    clock: () => options.now?.() ?? new Date(),
  };
  return {
    name: "dream",
    due: () => isDreamDue(job),
    async recordSession(sessionId) {
      await job.state.update((current) =>
        current.sessions.includes(sessionId)
          ? current
          : { ...current, sessions: [...current.sessions, sessionId] },
      );
    },
    run: (context = {}) => runDream(job, context),
  };
}

/** The gates: the cooldown since the last dream, and the sessions ended since. */
async function isDreamDue(job: DreamJobState): Promise<{ due: boolean; reason: string }> {
  const { options } = job;
  const current = await job.state.read();
  const cooldown = options.cooldownMs ?? DREAM_COOLDOWN_MS;
  const minSessions = options.minSessions ?? DREAM_MIN_SESSIONS;
  if (current.lastRunAt && job.clock().getTime() - Date.parse(current.lastRunAt) < cooldown) {
    return { due: false, reason: `cooling down: the last dream ran at ${current.lastRunAt}` };
  }
  if (current.sessions.length < minSessions) {
    return {
      due: false,
      reason: `${current.sessions.length} of ${minSessions} sessions since the last dream`,
    };
  }
  return { due: true, reason: `${current.sessions.length} sessions since the last dream` };
}

/** A report of a dream that did not run, and why. */
function notRun(skipped: string, summary: string): DreamReport {
  return { ran: false, skipped, summary, actions: [], changes: [], conflicts: [] };
}

/** `DreamJob.run`: the gates (unless forced), then the four phases under the dream lock. */
async function runDream(
  job: DreamJobState,
  context: Parameters<DreamJob["run"]>[0] & object,
): Promise<DreamReport> {
  const { options, state } = job;
  const log = async (line: string) => {
    await context.log?.(line);
  };
  if (job.mode === "propose" && !options.proposals) {
    return notRun(
      "no proposal queue for propose mode",
      "Dream not run: propose mode needs a proposal queue.",
    );
  }
  if (!context.force) {
    const gate = await isDreamDue(job);
    if (!gate.due) return notRun(gate.reason, `Dream not run: ${gate.reason}.`);
  }
  const outcome = await state.withDreamLock(async () => {
    const startedWith = await state.read();
    const report = await consolidate(job, log, context.signal);
    await state.update((latest) => ({
      lastRunAt: job.clock().toISOString(),
      sessions: latest.sessions.filter((session) => !startedWith.sessions.includes(session)),
    }));
    return report;
  }, options.lockStaleMs ?? DREAM_LOCK_STALE_MS);
  if (outcome.locked) return outcome.value;
  return notRun("another dream is running", "Dream not run: another dream holds the lock.");
}

/** Orient: every memory with frontmatter, read and parsed (one deleted meanwhile is left out). */
async function loadMemories(store: MemoryStore): Promise<Loaded[]> {
  const loaded: Loaded[] = [];
  for (const entry of await store.list()) {
    if (entry.problem !== undefined) continue;
    try {
      const { content } = await store.read(entry.name);
      const parsed = parseMemoryFile(content, entry.name);
      if (parsed.frontmatter)
        loaded.push({ entry, content, frontmatter: parsed.frontmatter, body: parsed.body });
    } catch (error) {
      if (!(error instanceof MemoryNotFoundError)) throw error;
    }
  }
  return loaded;
}

/** Prune: memories no decision touched whose decay fell below the threshold. */
function pruneActions(
  loaded: readonly Loaded[],
  actions: readonly DreamAction[],
  threshold: number,
  now: Date,
) {
  const touched = new Set(
    actions.flatMap((a) =>
      a.action === "merge" ? [a.keep, ...a.remove] : a.action === "supersede" ? [a.newer, a.older] : [a.name],
    ),
  );
  const pruned: DreamAction[] = [];
  for (const memory of loaded) {
    if (touched.has(memory.entry.name) || !memory.entry.decay) continue;
    const decay = explainDecay(memory.entry, { now });
    if (decay.factor < threshold)
      pruned.push({
        action: "prune",
        name: memory.entry.name,
        reason: `${decay.reason}; below ${threshold}`,
      });
  }
  return pruned;
}

/** The four phases once: decisions by a model or by rules, turned into changes, proposed or applied, reported. */
async function consolidate(
  job: DreamJobState,
  log: (line: string) => Promise<void>,
  signal: AbortSignal | undefined,
): Promise<DreamReport> {
  const { options, mode } = job;
  const now = job.clock();
  await log("orient: loading memories");
  const loaded = await loadMemories(options.store);
  const sessions = (await options.recentSessions?.()) ?? [];
  await log(`gather: ${loaded.length} memories, ${sessions.length} recent sessions`);
  signal?.throwIfAborted();
  const actions = options.provider ? await modelActions(options, loaded, sessions) : ruleActions(loaded);
  await log(`consolidate: ${actions.length} decisions`);
  const threshold = options.pruneThreshold ?? DREAM_PRUNE_THRESHOLD;
  actions.push(...pruneActions(loaded, actions, threshold, now));
  await log(`prune: ${actions.filter((a) => a.action === "prune").length} below ${threshold}`);
  const byName = new Map(loaded.map((memory) => [memory.entry.name, memory]));
  const changes = toChanges(actions, byName, now);
  const report: DreamReport = { ran: true, summary: "", actions, changes, conflicts: [] };
  if (changes.length > 0 && mode === "propose") {
    const proposal = await (options.proposals as ProposalQueue).propose({
      author: "dream",
      summary: `dream: ${actions.length} consolidation decisions, ${changes.length} changes`,
      changes,
    });
    report.proposalId = proposal.id;
  } else if (mode === "apply") {
    report.conflicts.push(...(await applyChanges(options.store, changes)));
  }
  const count = (kind: DreamAction["action"]) => actions.filter((action) => action.action === kind).length;
  report.summary = `Dream over ${loaded.length} memories: ${count("merge")} merged, ${count("supersede")} contradictions resolved, ${count("relevance")} relevance updates, ${count("prune")} pruned; ${changes.length} changes ${mode === "propose" ? (report.proposalId ? `proposed for review (${report.proposalId})` : "to propose") : "applied"}.`;
  const at = now.toISOString();
  report.reportPath = await job.state.saveReport(at, reportMarkdown(report, at));
  await log(report.summary);
  return report;
}

/** `apply` mode: each change conditioned on what the dream read; returns the names changed meanwhile. */
async function applyChanges(store: MemoryStore, changes: readonly ProposedChange[]): Promise<string[]> {
  const conflicts: string[] = [];
  for (const change of changes) {
    try {
      if (change.kind === "write")
        await store.write(change.name, change.content, {
          expectedHash: change.baseHash,
          author: "dream",
          reason: change.reason ?? "dream",
        });
      else
        await store.delete(change.name, {
          expectedHash: change.baseHash,
          author: "dream",
          reason: change.reason ?? "dream",
        });
    } catch (error) {
      if (!(error instanceof MemoryConflictError || error instanceof MemoryNotFoundError)) throw error;
      conflicts.push(change.name);
    }
  }
  return conflicts;
}
