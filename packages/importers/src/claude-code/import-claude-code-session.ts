import type { Message } from "@unforget/core";
import { TRANSCRIPT_FORMAT_VERSION } from "@unforget/transcript";
import { guardImport } from "../shared/guard-import.ts";
import type { ImportResult } from "../shared/import-result.ts";
import { ImportError } from "../shared/session-errors.ts";
import { EPOCH } from "../shared/source-timestamp.ts";
import { importClaudeCodeLines } from "./import-claude-code-transcript.ts";

/** One subagent file of a Claude Code session: `<sessionId>/subagents/agent-<agentId>.jsonl`. */
export interface ClaudeCodeSubagentSource {
  agentId: string;
  /** The file's text. */
  text: string;
  /** The parsed `agent-<agentId>.meta.json` beside it, when there is one. */
  meta?: Record<string, unknown>;
}

/** A Claude Code session as it lies on disk: the main JSONL and its subagents' files. */
export interface ClaudeCodeSessionSource {
  /** Text of `<sessionId>.jsonl`. */
  main: string;
  subagents?: ClaudeCodeSubagentSource[];
}

export interface ClaudeCodeSubagentImport {
  agentId: string;
  /** The subagent's conversation (its own sidechain lines), imported like a main session. */
  result: ImportResult;
  /** The Task (or Agent) tool_use in the main conversation that spawned it, when it could be matched. */
  parentToolUseId: string | undefined;
  /** The main-conversation message holding that tool_use. */
  parentMessageId: string | undefined;
  /** How the link was found: the Task result's `agentId`, the prompt text, or not at all. */
  linkedBy: "agent_id" | "prompt" | undefined;
  meta?: Record<string, unknown>;
}

export interface ClaudeCodeSessionImport {
  main: ImportResult;
  /** One import per subagent file, in the order given. */
  subagents: ClaudeCodeSubagentImport[];
}

const SPAWNING_TOOLS: ReadonlySet<string> = new Set(["Task", "Agent"]);

/**
 * Imports a Claude Code session directory's content: the main file with `importClaudeCodeTranscript`, and
 * each subagent file as a separate conversation. A subagent is linked to the Task tool_use that spawned it:
 * first by the `agentId` in that tool's structured result (`toolUseResult.agentId`), else by its first user
 * message being the Task's `prompt`. Each subagent's entries start with a `metadata` entry recording the
 * link (`data.parentSessionId`, `agentId`, `parentToolUseId`), so it survives being written as a transcript.
 * A subagent that cannot be matched is imported anyway and reported as an `unlinked_subagent` problem.
 */
export function importClaudeCodeSession(source: ClaudeCodeSessionSource): ClaudeCodeSessionImport {
  return guardImport("claude-code", () => importSession(source));
}

function importSession(source: ClaudeCodeSessionSource): ClaudeCodeSessionImport {
  if (typeof source !== "object" || source === null || typeof source.main !== "string") {
    throw new ImportError(
      "importClaudeCodeSession expects { main: text, subagents?: { agentId, text }[] } (readClaudeCodeSessionDir builds it from a session directory).",
      { format: "claude-code" },
    );
  }
  const main = importClaudeCodeLines(source.main, { subagentFile: false });
  const spawners = spawningToolUses(main);
  const claimed = new Set<string>();
  const sessionId = main.sessionId;
  const subagents = (source.subagents ?? []).map((subagent): ClaudeCodeSubagentImport => {
    const result = importClaudeCodeLines(subagent.text, { subagentFile: true });
    let match = spawners.find(
      (spawner) => spawner.agentId === subagent.agentId && !claimed.has(spawner.toolUseId),
    );
    let linkedBy: ClaudeCodeSubagentImport["linkedBy"] = match ? "agent_id" : undefined;
    if (!match) {
      const prompt = firstUserText(result);
      match = spawners.find(
        (spawner) =>
          spawner.agentId === undefined &&
          !claimed.has(spawner.toolUseId) &&
          prompt !== undefined &&
          spawner.prompt === prompt,
      );
      if (match) linkedBy = "prompt";
    }
    if (match) claimed.add(match.toolUseId);
    else {
      result.report.problems.unshift({
        kind: "unlinked_subagent",
        location: { line: 1 },
        description: `No Task tool_use in the main session names agent ${subagent.agentId} or sends its first prompt; it was imported unlinked.`,
      });
    }
    const first = result.entries[0];
    result.entries.unshift({
      v: TRANSCRIPT_FORMAT_VERSION,
      type: "metadata",
      id: `subagent-${subagent.agentId}`,
      timestamp: first?.timestamp ?? main.entries[0]?.timestamp ?? EPOCH,
      ...(first?.sessionId === undefined ? {} : { sessionId: first.sessionId }),
      data: {
        agentId: subagent.agentId,
        ...(sessionId === undefined ? {} : { parentSessionId: sessionId }),
        ...(match ? { parentToolUseId: match.toolUseId, parentMessageId: match.messageId } : {}),
        ...(subagent.meta === undefined ? {} : { meta: subagent.meta }),
      },
    });
    return {
      agentId: subagent.agentId,
      result,
      parentToolUseId: match?.toolUseId,
      parentMessageId: match?.messageId,
      linkedBy,
      ...(subagent.meta === undefined ? {} : { meta: subagent.meta }),
    };
  });
  return { main, subagents };
}

interface Spawner {
  toolUseId: string;
  messageId: string;
  prompt: string | undefined;
  agentId: string | undefined;
}

function spawningToolUses(result: ImportResult): Spawner[] {
  const messages: Message[] = result.entries.flatMap((entry) =>
    entry.type === "message" ? [entry.message] : [],
  );
  const agentIds = new Map<string, string>();
  for (const message of messages) {
    const results = message.metadata?.toolUseResults;
    if (typeof results !== "object" || results === null) continue;
    for (const [toolUseId, value] of Object.entries(results as Record<string, unknown>)) {
      const agentId =
        typeof value === "object" && value !== null ? (value as { agentId?: unknown }).agentId : undefined;
      if (typeof agentId === "string") agentIds.set(toolUseId, agentId);
    }
  }
  const spawners: Spawner[] = [];
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    for (const block of message.content) {
      if (block.type !== "tool_use" || !SPAWNING_TOOLS.has(block.name)) continue;
      const prompt = (block.input as { prompt?: unknown } | undefined)?.prompt;
      spawners.push({
        toolUseId: block.id,
        messageId: message.id,
        prompt: typeof prompt === "string" ? prompt : undefined,
        agentId: agentIds.get(block.id),
      });
    }
  }
  return spawners;
}

function firstUserText(result: ImportResult): string | undefined {
  for (const entry of result.entries) {
    if (entry.type !== "message" || entry.message.role !== "user" || entry.message.isMeta) continue;
    const text = entry.message.content
      .flatMap((block) => (block.type === "text" ? [block.text] : []))
      .join("\n");
    return text.length > 0 ? text : undefined;
  }
  return undefined;
}
