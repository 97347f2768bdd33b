import { readFile, realpath } from "node:fs/promises";
import { basename, isAbsolute, relative, resolve } from "node:path";
import type { Attachment, Message } from "@unforget/core";
import type { SessionHooks } from "@unforget/hooks";
import type { CompactTrigger } from "@unforget/transcript";
import { clip, estimateTextTokens, estimateTokens, indexToolUses } from "../conversation/conversation.ts";
import { collectConversationFacts } from "../conversation/conversation-facts.ts";
import {
  POST_COMPACT_MAX_FILES,
  POST_COMPACT_MAX_TOKENS_PER_FILE,
  POST_COMPACT_SKILL_TOKENS,
  POST_COMPACT_SKILLS_TOTAL_TOKENS,
} from "../defaults.ts";
import { truncateMiddle } from "../tool-outputs/middle-out.ts";

/** What an attachment provider is told after a compaction. */
export interface RehydrationContext {
  trigger: CompactTrigger;
  /** The messages the summary now stands for. */
  summarized: readonly Message[];
  /** The messages kept verbatim after the summary. */
  kept: readonly Message[];
  /** Tokens this provider may use at most. */
  budgetTokens: number;
}

/** Restores context a compaction would otherwise take away (files, plan, skills, tasks, tools, rules). */
export interface AttachmentProvider {
  /** Shown in reports; also the attachment's source when the provider sets none. */
  readonly name: string;
  /** Share of the rehydration budget this provider may use, 0–1; default an even share. */
  readonly budgetShare?: number;
  /** Called after every compaction, in order; returns the attachments to add (possibly none). Errors are reported, not fatal. */
  provide(context: RehydrationContext): Promise<Attachment[]> | Attachment[];
}

const READ_TOOL = /^(read|readfile|view|open|cat|notebookread|strreplaceeditor|strreplacebasededittool)$/;
/** Plan, instruction and memory files have their own ways back into the context. */
const OWN_PATH_FILES =
  /(^|\/)(CLAUDE\.md|AGENTS\.md|MEMORY\.md|GEMINI\.md|\.cursorrules|[^/]*\.plan\.md|plan\.md)$/i;

export interface RecentFilesOptions {
  /** Paths are resolved against this folder, and files outside it are not read; default `process.cwd()`. */
  root?: string;
  maxFiles?: number;
  maxTokensPerFile?: number;
  /** Reads a file's current content; default `fs.readFile` (utf8). Return undefined to skip the file. */
  readFile?: (path: string) => Promise<string | undefined>;
  /**
   * The paths read most recently, newest first, e.g. `@unforget/tools`' read state (`readFilesOf`): a source
   * that outlives compactions also brings back files read before an earlier one. Default: the paths of the
   * file-reading calls in the summarised messages.
   */
  recentPaths?: () => readonly string[];
}

/**
 * Re-reads the files the model read most recently — fresh from disk, so it sees their current state — up to
 * 5 files, 5,000 tokens each and the provider's budget in all. Skips files whose content is still visible in
 * the kept messages, plan / instruction / memory files (they come back by their own paths), missing files and
 * files outside `root` (symlinks resolved).
 */
export function createRecentFilesProvider(options: RecentFilesOptions = {}): AttachmentProvider {
  const root = resolve(options.root ?? process.cwd());
  const maxFiles = options.maxFiles ?? POST_COMPACT_MAX_FILES;
  const perFile = options.maxTokensPerFile ?? POST_COMPACT_MAX_TOKENS_PER_FILE;
  const read =
    options.readFile ??
    (async (path: string) => {
      try {
        const real = await realpath(path);
        const realRoot = await realpath(root);
        const inside = relative(realRoot, real);
        if (inside.startsWith("..") || isAbsolute(inside)) return undefined;
        return await readFile(real, "utf8");
      } catch {
        return undefined;
      }
    });
  return {
    name: "recent-files",
    async provide(context) {
      const visible = new Set(readPaths(context.kept).map((path) => resolve(root, path)));
      const recent = (options.recentPaths?.() ?? readPaths(context.summarized, true)).filter(
        (path) => !visible.has(resolve(root, path)) && !OWN_PATH_FILES.test(path),
      );
      const attachments: Attachment[] = [];
      let used = 0;
      for (const path of recent) {
        if (attachments.length >= maxFiles) break;
        const absolute = resolve(root, path);
        const content = await read(absolute);
        if (content === undefined) continue;
        const limit = Math.min(perFile, context.budgetTokens - used);
        if (limit <= 200) break;
        const text = fitTokens(content, limit);
        const body = `Contents of ${path} as it is now (re-read after the conversation was compacted${text.length < content.length ? "; cut in the middle to fit" : ""}):\n${text}`;
        used += estimateTextTokens(body);
        attachments.push({ kind: "file", content: body, source: absolute });
      }
      return attachments;
    },
  };
}

/** Paths read by file-reading tools, most recent first, each once. */
function readPaths(messages: readonly Message[], newestFirst = false): string[] {
  const calls = indexToolUses(messages);
  const paths: string[] = [];
  for (const call of calls.values()) {
    if (!READ_TOOL.test(call.use.name.toLowerCase().replace(/[-_]/g, ""))) continue;
    const input = (call.use.input ?? {}) as Record<string, unknown>;
    const command = typeof input.command === "string" ? input.command : undefined;
    if (command !== undefined && command !== "view") continue;
    const path = [input.file_path, input.path, input.notebook_path].find(
      (value): value is string => typeof value === "string",
    );
    if (path) paths.push(path);
  }
  const ordered = newestFirst ? paths.reverse() : paths;
  return [...new Set(ordered)];
}

function fitTokens(text: string, maxTokens: number): string {
  if (estimateTextTokens(text) <= maxTokens) return text;
  let chars = Math.floor(maxTokens * 3.5);
  let cut = truncateMiddle(text, chars);
  while (estimateTextTokens(cut) > maxTokens && chars > 200) {
    chars = Math.floor(chars * 0.8);
    cut = truncateMiddle(text, chars);
  }
  return cut;
}

/**
 * Project rules and instructions (CLAUDE.md / AGENTS.md-style files or fixed text), re-injected after every
 * compaction so that a rule given at the start still reaches the model after any number of compactions.
 * Files are read at compaction time; a missing file is skipped.
 */
export function createInstructionsProvider(source: {
  files?: readonly string[];
  text?: string;
  name?: string;
}): AttachmentProvider {
  return {
    name: source.name ?? "instructions",
    async provide(context) {
      const parts: string[] = [];
      if (source.text?.trim()) parts.push(source.text.trim());
      for (const file of source.files ?? []) {
        try {
          parts.push(`Instructions from ${basename(file)}:\n${(await readFile(file, "utf8")).trim()}`);
        } catch {
          // A missing instruction file is not an error: projects add and remove them.
        }
      }
      if (parts.length === 0) return [];
      return [
        {
          kind: "instructions",
          content: fitTokens(parts.join("\n\n"), context.budgetTokens),
          source: source.name ?? "instructions",
        },
      ];
    },
  };
}

export interface TodosOptions {
  /**
   * The current todo list, e.g. `@unforget/tools`' `todosOf(state)`: it outlives compactions, so the list comes
   * back after the second one too. Default: the latest list written in the summarised messages.
   */
  todos?: () => readonly { content: string; status: string }[];
}

/** The latest todo list, so open tasks survive the compaction word for word (unless the kept messages show it). */
export function createTodosProvider(options: TodosOptions = {}): AttachmentProvider {
  return {
    name: "todos",
    provide(context) {
      if (collectConversationFacts([...context.kept]).todos) return [];
      const todos = options.todos?.() ?? collectConversationFacts([...context.summarized]).todos;
      if (!todos || todos.length === 0) return [];
      const lines = todos.map((item) => `- [${item.status}] ${clip(item.content, 300)}`);
      return [
        {
          kind: "todos",
          content: `The todo list as it stood before the compaction:\n${lines.join("\n")}`,
          source: "todos",
        },
      ];
    },
  };
}

/**
 * An attachment produced by the caller at compaction time: the plan, plan mode, invoked skills, background
 * task status, the tool list, deferred-tool and MCP instructions — anything the app knows. `provide` returns
 * the text (or nothing); it is cut to the budget.
 */
export function createCallbackProvider(
  name: string,
  kind: string,
  provide: (context: RehydrationContext) => Promise<string | undefined> | string | undefined,
): AttachmentProvider {
  return {
    name,
    async provide(context) {
      const text = await provide(context);
      if (text === undefined || text.trim().length === 0) return [];
      return [{ kind, content: fitTokens(text, context.budgetTokens), source: name }];
    },
  };
}

/** Skills the session invoked, most recent first: 5,000 tokens each, 25,000 in all. */
export function createSkillsProvider(
  skills: () => readonly { name: string; content: string }[],
): AttachmentProvider {
  return {
    name: "skills",
    provide(context) {
      const total = Math.min(POST_COMPACT_SKILLS_TOTAL_TOKENS, context.budgetTokens);
      const attachments: Attachment[] = [];
      let used = 0;
      for (const skill of skills()) {
        const limit = Math.min(POST_COMPACT_SKILL_TOKENS, total - used);
        if (limit <= 200) break;
        const text = fitTokens(skill.content, limit);
        const body = `Skill "${skill.name}" (invoked earlier in this session${text.length < skill.content.length ? "; cut — read the skill again for the full text" : ""}):\n${text}`;
        used += estimateTextTokens(body);
        attachments.push({ kind: "skill", content: body, source: skill.name });
      }
      return attachments;
    },
  };
}

/** Estimated tokens of an attachment as the projection carries it (one meta user message). */
export function estimateAttachment(attachment: Attachment): number {
  return typeof attachment.content === "string"
    ? estimateTextTokens(attachment.content)
    : estimateTokens([{ id: "", role: "user", content: attachment.content, timestamp: "" }]);
}

/**
 * What comes back after a compaction: each provider in order, within its share of `budgetTokens`. A failing
 * provider is reported through `onError` and skipped. The SessionStart hook is not fired here: it says a
 * compaction happened, so it runs (`compactedSessionStart`) only once one is applied.
 */
export async function rehydrate(
  providers: readonly AttachmentProvider[],
  context: Omit<RehydrationContext, "budgetTokens"> & { budgetTokens: number },
  options: { onError(provider: string, error: unknown): void },
): Promise<Attachment[]> {
  const total = context.budgetTokens;
  const attachments: Attachment[] = [];
  let used = 0;
  for (const provider of providers) {
    const share = provider.budgetShare ?? 1 / Math.max(1, providers.length);
    const budgetTokens = Math.max(0, Math.min(total - used, Math.floor(total * share)));
    if (budgetTokens <= 0) continue;
    try {
      for (const attachment of await provider.provide({ ...context, budgetTokens })) {
        attachments.push(
          attachment.source === undefined ? { ...attachment, source: provider.name } : attachment,
        );
        used += estimateAttachment(attachment);
      }
    } catch (error) {
      options.onError(provider.name, error);
    }
  }
  return attachments;
}

/** The SessionStart hook (source `compact`) of a compaction that is being applied: the context it adds. */
export async function compactedSessionStart(
  hooks: SessionHooks | undefined,
  sessionId: string | undefined,
): Promise<Attachment[]> {
  if (!hooks) return [];
  return hooks.sessionStart.promise([], { sessionId: sessionId ?? "", source: "compact" });
}
