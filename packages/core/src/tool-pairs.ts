import type { ContentBlock, Message, ToolResultBlock } from "./message.ts";
import { createMessage } from "./message.ts";

export type ToolPairViolationKind =
  | "first_message_not_user"
  | "consecutive_same_role"
  | "empty_content"
  | "misplaced_block"
  | "duplicate_tool_use_id"
  | "duplicate_tool_result"
  | "orphan_tool_result"
  | "dangling_tool_use";

export interface ToolPairViolation {
  kind: ToolPairViolationKind;
  /** Index of the offending message in the input array. */
  messageIndex: number;
  messageId: string;
  toolUseId?: string;
  /** One sentence for logs and reports. */
  description: string;
}

export interface ToolPairCheckOptions {
  /**
   * Accept tool_use blocks in the last message without results (a call still running). Default false:
   * a request ending in an unanswered tool_use is rejected by providers.
   */
  allowTrailingToolUse?: boolean;
}

/**
 * Finds every way a message list breaks the rules providers enforce: the conversation starts with a user
 * message, roles alternate, each tool_use is answered by a tool_result in the very next (user) message,
 * each result answers a tool_use of the message just before it, ids are unique, no message is empty.
 * One exception to alternation: a meta user message (words the harness added — a demonstration, a caveat,
 * a summary) may sit next to another user message without tool results. Providers send consecutive user
 * messages as one turn, and keeping them apart lets a caller filter the harness's words out.
 */
export function findToolPairViolations(
  messages: readonly Message[],
  options: ToolPairCheckOptions = {},
): ToolPairViolation[] {
  const violations: ToolPairViolation[] = [];
  const seenUseIds = new Set<string>();
  const answeredIds = new Set<string>();
  const report = (kind: ToolPairViolationKind, index: number, description: string, toolUseId?: string) => {
    const violation: ToolPairViolation = {
      kind,
      messageIndex: index,
      messageId: messages[index]?.id ?? "",
      description,
    };
    if (toolUseId !== undefined) violation.toolUseId = toolUseId;
    violations.push(violation);
  };

  messages.forEach((message, index) => {
    if (index === 0 && message.role !== "user") {
      report("first_message_not_user", 0, `The first message is from the ${message.role}, not the user.`);
    }
    const previous = index > 0 ? messages[index - 1] : undefined;
    if (previous && breaksAlternation(previous, message)) {
      report(
        "consecutive_same_role",
        index,
        `Messages ${index - 1} and ${index} are both from the ${message.role}; roles must alternate.`,
      );
    }
    if (message.content.length === 0) report("empty_content", index, `Message ${index} has no content.`);

    if (message.role === "assistant") {
      for (const block of message.content) {
        if (block.type === "tool_result") {
          report(
            "misplaced_block",
            index,
            `Assistant message ${index} contains a tool_result.`,
            block.tool_use_id,
          );
        } else if (block.type === "tool_use") {
          if (seenUseIds.has(block.id)) {
            report(
              "duplicate_tool_use_id",
              index,
              `tool_use id ${block.id} is used more than once.`,
              block.id,
            );
          }
          seenUseIds.add(block.id);
        }
      }
      const next = messages[index + 1];
      const resultIds = new Set<string>();
      if (next?.role === "user") {
        for (const block of next.content) if (block.type === "tool_result") resultIds.add(block.tool_use_id);
      }
      const isLast = index === messages.length - 1;
      for (const block of message.content) {
        if (block.type !== "tool_use" || resultIds.has(block.id)) continue;
        if (isLast && options.allowTrailingToolUse) continue;
        report(
          "dangling_tool_use",
          index,
          `tool_use ${block.id} (${block.name}) in message ${index} has no tool_result in the next message.`,
          block.id,
        );
      }
    } else {
      const useIds = new Set<string>();
      if (previous?.role === "assistant") {
        for (const block of previous.content) if (block.type === "tool_use") useIds.add(block.id);
      }
      for (const block of message.content) {
        if (block.type === "tool_use") {
          report("misplaced_block", index, `User message ${index} contains a tool_use.`, block.id);
        } else if (block.type === "tool_result") {
          if (!useIds.has(block.tool_use_id)) {
            report(
              "orphan_tool_result",
              index,
              `tool_result for ${block.tool_use_id} in message ${index} answers no tool_use of the message before it.`,
              block.tool_use_id,
            );
          } else if (answeredIds.has(block.tool_use_id)) {
            report(
              "duplicate_tool_result",
              index,
              `tool_use ${block.tool_use_id} has more than one tool_result.`,
              block.tool_use_id,
            );
          }
          answeredIds.add(block.tool_use_id);
        }
      }
    }
  });
  return violations;
}

export type ToolPairRepairKind =
  | "dropped_misplaced_block"
  | "dropped_empty_message"
  | "merged_messages"
  | "inserted_leading_user_message"
  | "renamed_duplicate_tool_use_id"
  | "dropped_duplicate_tool_result"
  | "dropped_orphan_tool_result"
  | "added_missing_tool_result";

export interface ToolPairRepair {
  kind: ToolPairRepairKind;
  /** Id of the message that was changed, dropped or inserted. */
  messageId: string;
  toolUseId?: string;
  /** Ids of the messages merged into `messageId` (kind "merged_messages"). */
  mergedMessageIds?: string[];
  description: string;
}

export interface ToolPairRepairResult {
  messages: Message[];
  repairs: ToolPairRepair[];
  /** Violations that remain after repair; empty unless the input was pathological. */
  remaining: ToolPairViolation[];
}

export interface RepairToolPairsOptions extends ToolPairCheckOptions {
  /** Text of the synthetic error result added for a tool_use whose result is missing. */
  missingResultText?: string;
  /** Text of the synthetic user message inserted when a conversation starts with the assistant. */
  leadingUserText?: string;
}

export const MISSING_TOOL_RESULT_TEXT =
  "[Tool result missing: the call was interrupted or its result was lost. Do not assume it succeeded.]";
export const LEADING_USER_TEXT = "[Earlier conversation is not available; continuing from here.]";

/**
 * Makes a message list valid for providers, explicitly: every change is listed in `repairs`. A list with no
 * violations is returned unchanged (same messages, no repairs). Deterministic: synthetic messages get ids derived
 * from their neighbours, so repairing the same input twice gives identical output. User text is never dropped: only tool
 * results without a tool_use, empty messages and misplaced protocol blocks are removed.
 */
export function repairToolPairs(
  messages: readonly Message[],
  options: RepairToolPairsOptions = {},
): ToolPairRepairResult {
  const initial = findToolPairViolations(messages, options);
  if (initial.length === 0) return { messages: [...messages], repairs: [], remaining: [] };

  const repairs: ToolPairRepair[] = [];
  let current = messages.map(cloneEnvelope);
  for (let pass = 0; pass < 4; pass++) {
    current = dropMisplacedBlocks(current, repairs);
    current = dropEmptyMessages(current, repairs);
    current = mergeSameRole(current, repairs);
    current = ensureLeadingUser(current, repairs, options.leadingUserText ?? LEADING_USER_TEXT);
    current = fixToolIds(current, repairs);
    current = dropEmptyMessages(current, repairs);
    current = mergeSameRole(current, repairs);
    current = addMissingResults(current, repairs, options);
    if (findToolPairViolations(current, options).length === 0) break;
  }
  return { messages: current, repairs, remaining: findToolPairViolations(current, options) };
}

function cloneEnvelope(message: Message): Message {
  return { ...message, content: [...message.content] };
}

function dropMisplacedBlocks(messages: Message[], repairs: ToolPairRepair[]): Message[] {
  for (const message of messages) {
    const misplaced = message.role === "assistant" ? "tool_result" : "tool_use";
    if (!message.content.some((block) => block.type === misplaced)) continue;
    message.content = message.content.filter((block) => {
      if (block.type !== misplaced) return true;
      const toolUseId =
        block.type === "tool_use" ? block.id : block.type === "tool_result" ? block.tool_use_id : "";
      repairs.push({
        kind: "dropped_misplaced_block",
        messageId: message.id,
        toolUseId,
        description: `Dropped a ${misplaced} block from a ${message.role} message, where providers reject it.`,
      });
      return false;
    });
  }
  return messages;
}

function dropEmptyMessages(messages: Message[], repairs: ToolPairRepair[]): Message[] {
  return messages.filter((message) => {
    if (message.content.length > 0) return true;
    repairs.push({
      kind: "dropped_empty_message",
      messageId: message.id,
      description: `Dropped ${message.role} message ${message.id}: it had no content left.`,
    });
    return false;
  });
}

/**
 * Whether `message` may not directly follow `previous`: same role, unless the meta exception of
 * `findToolPairViolations` applies (tool results must always join the turn right after their tool_use).
 */
function breaksAlternation(
  previous: Pick<Message, "role" | "isMeta">,
  message: Pick<Message, "role" | "isMeta" | "content">,
): boolean {
  if (previous.role !== message.role) return false;
  if (message.role === "assistant") return true;
  if (previous.isMeta !== true && message.isMeta !== true) return true;
  return message.content.some((block) => block.type === "tool_result");
}

/**
 * Merges each run of messages that breaks alternation into the run's first message. Each run's blocks are
 * collected once (not copied per merge), so a run of any length costs time linear in its blocks.
 */
function mergeSameRole(messages: Message[], repairs: ToolPairRepair[]): Message[] {
  const out: Message[] = [];
  let run: { target: Message; blocks: ContentBlock[]; mergedIds: string[] } | undefined;
  const closeRun = () => {
    if (!run) return;
    const { target, blocks, mergedIds } = run;
    // Providers want a user turn's tool results before anything else in it.
    target.content =
      target.role === "user"
        ? [
            ...blocks.filter((block) => block.type === "tool_result"),
            ...blocks.filter((block) => block.type !== "tool_result"),
          ]
        : blocks;
    const earlier = (target.metadata?.mergedMessageIds as string[] | undefined) ?? [];
    target.metadata = { ...target.metadata, mergedMessageIds: [...earlier, ...mergedIds] };
    run = undefined;
  };
  for (const message of messages) {
    const last = out[out.length - 1];
    if (!last || !breaksAlternation(last, message)) {
      closeRun();
      out.push(message);
      continue;
    }
    if (!run) run = { target: last, blocks: [...last.content], mergedIds: [] };
    for (const block of message.content) run.blocks.push(block);
    run.mergedIds.push(message.id);
    if (message.usage) last.usage = message.usage;
    if (message.stopReason) last.stopReason = message.stopReason;
    if (last.isMeta && !message.isMeta) delete last.isMeta;
    repairs.push({
      kind: "merged_messages",
      messageId: last.id,
      mergedMessageIds: [message.id],
      description: `Merged consecutive ${message.role} message ${message.id} into ${last.id}.`,
    });
  }
  closeRun();
  return out;
}

function ensureLeadingUser(messages: Message[], repairs: ToolPairRepair[], text: string): Message[] {
  const first = messages[0];
  if (!first || first.role === "user") return messages;
  const marker = createMessage("user", text, {
    id: `${first.id}-lead`,
    isMeta: true,
    timestamp: first.timestamp,
  });
  repairs.push({
    kind: "inserted_leading_user_message",
    messageId: marker.id,
    description: "Inserted a synthetic user message: the conversation started with the assistant.",
  });
  return [marker, ...messages];
}

function fixToolIds(messages: Message[], repairs: ToolPairRepair[]): Message[] {
  const seenUseIds = new Set<string>();
  const answered = new Set<string>();
  let counter = 0;
  messages.forEach((message, index) => {
    if (message.role === "assistant") {
      const renamed = new Map<string, string>();
      message.content = message.content.map((block) => {
        if (block.type !== "tool_use") return block;
        if (!seenUseIds.has(block.id)) {
          seenUseIds.add(block.id);
          return block;
        }
        let fresh: string;
        do fresh = `${block.id}_dup${++counter}`;
        while (seenUseIds.has(fresh));
        seenUseIds.add(fresh);
        renamed.set(block.id, fresh);
        repairs.push({
          kind: "renamed_duplicate_tool_use_id",
          messageId: message.id,
          toolUseId: fresh,
          description: `Renamed duplicate tool_use id ${block.id} to ${fresh} (and its result in the next message).`,
        });
        return { ...block, id: fresh };
      });
      const next = messages[index + 1];
      if (renamed.size > 0 && next?.role === "user") {
        next.content = next.content.map((block) =>
          block.type === "tool_result" && renamed.has(block.tool_use_id)
            ? { ...block, tool_use_id: renamed.get(block.tool_use_id)! }
            : block,
        );
      }
      return;
    }
    const previous = messages[index - 1];
    const useIds = new Set<string>();
    if (previous?.role === "assistant") {
      for (const block of previous.content) if (block.type === "tool_use") useIds.add(block.id);
    }
    message.content = message.content.filter((block) => {
      if (block.type !== "tool_result") return true;
      if (!useIds.has(block.tool_use_id)) {
        repairs.push({
          kind: "dropped_orphan_tool_result",
          messageId: message.id,
          toolUseId: block.tool_use_id,
          description: `Dropped tool_result ${block.tool_use_id}: no tool_use in the message before it.`,
        });
        return false;
      }
      if (answered.has(block.tool_use_id)) {
        repairs.push({
          kind: "dropped_duplicate_tool_result",
          messageId: message.id,
          toolUseId: block.tool_use_id,
          description: `Dropped a second tool_result for ${block.tool_use_id}.`,
        });
        return false;
      }
      answered.add(block.tool_use_id);
      return true;
    });
  });
  return messages;
}

function addMissingResults(
  messages: Message[],
  repairs: ToolPairRepair[],
  options: RepairToolPairsOptions,
): Message[] {
  const out: Message[] = [];
  messages.forEach((message, index) => {
    out.push(message);
    if (message.role !== "assistant") return;
    const uses = message.content.filter((block) => block.type === "tool_use");
    if (uses.length === 0) return;
    const isLast = index === messages.length - 1;
    if (isLast && options.allowTrailingToolUse) return;
    const next = messages[index + 1];
    const answered = new Set<string>();
    if (next?.role === "user") {
      for (const block of next.content) if (block.type === "tool_result") answered.add(block.tool_use_id);
    }
    const missing: ToolResultBlock[] = [];
    for (const use of uses) {
      if (use.type !== "tool_use" || answered.has(use.id)) continue;
      missing.push({
        type: "tool_result",
        tool_use_id: use.id,
        content: options.missingResultText ?? MISSING_TOOL_RESULT_TEXT,
        is_error: true,
      });
    }
    if (missing.length === 0) return;
    if (next?.role === "user") {
      const results = next.content.filter((block) => block.type === "tool_result");
      const rest = next.content.filter((block) => block.type !== "tool_result");
      next.content = [...results, ...missing, ...rest] as ContentBlock[];
      for (const block of missing) {
        repairs.push({
          kind: "added_missing_tool_result",
          messageId: next.id,
          toolUseId: block.tool_use_id,
          description: `Added an error tool_result for ${block.tool_use_id}, whose result was missing.`,
        });
      }
    } else {
      const synthetic = createMessage("user", missing, {
        id: `${message.id}-results`,
        isMeta: true,
        timestamp: message.timestamp,
      });
      out.push(synthetic);
      for (const block of missing) {
        repairs.push({
          kind: "added_missing_tool_result",
          messageId: synthetic.id,
          toolUseId: block.tool_use_id,
          description: `Added a user message with an error tool_result for ${block.tool_use_id}, whose result was missing.`,
        });
      }
    }
  });
  return out;
}

export interface ApiRoundGroup {
  /** Response id of the model response that opens the group (undefined for a leading group of user turns). */
  responseId: string | undefined;
  messages: Message[];
}

/**
 * Splits a conversation into API rounds: a new group starts whenever a new model response begins (an
 * assistant message whose response id differs from the previous assistant message's). Each group holds the
 * response's messages and the tool results and user turns that follow it; leading user messages join the
 * first response's group. Head truncation drops whole groups, so tool pairs are never split.
 */
export function groupByApiRound(messages: readonly Message[]): ApiRoundGroup[] {
  const groups: ApiRoundGroup[] = [];
  let current: ApiRoundGroup | undefined;
  let lastAssistant: Message | undefined;
  for (const message of messages) {
    if (message.role === "assistant") {
      const newResponse =
        lastAssistant !== undefined &&
        (message.responseId === undefined || message.responseId !== lastAssistant.responseId);
      if (newResponse) current = undefined;
    }
    if (!current) {
      current = { responseId: undefined, messages: [] };
      groups.push(current);
    }
    if (message.role === "assistant") {
      current.responseId ??= message.responseId;
      lastAssistant = message;
    }
    current.messages.push(message);
  }
  return groups;
}
