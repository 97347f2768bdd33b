import type { ToolPermissionSubject } from "@unforget/core";
import type { ToolCallRequest } from "../tools/tool-authorization.ts";
import { type CallFacts, readCallFacts } from "./call-facts.ts";
import { type GateState, updateGate, workingDirectories } from "./gate-state.ts";
import { isInsideDirectories } from "./permission-path.ts";
import type { PermissionRule } from "./permission-rule.ts";
import type { PermissionDecision, PermissionDecisionReason, PermissionResponse } from "./permission-types.ts";
import { allowing, type Caught, catching, firstUnallowed } from "./rule-matching.ts";
import { clip } from "./shell/shell-words.ts";
import { suggestionsFor } from "./suggestions.ts";

// The gate's decision about one call, in Claude Code's order: a deny rule refuses; plan mode refuses what is not
// read-only; an ask rule, or a deny rule that may match, asks; then the mode, a PreToolUse hook, an allow rule or
// the defaults allow; whatever is left is asked about (or denied when there is no one to ask).

/** One call being decided: what the gate knows about it, and how messages name it. */
interface Call {
  readonly request: ToolCallRequest;
  readonly facts: CallFacts;
  /** The tool and what it touches, for messages. */
  readonly what: string;
  /** The command of a command subject. */
  readonly commandText: string | undefined;
}

/** Why a call is asked about, and what asked (a rule, or the defaults). */
interface Question {
  readonly why: string;
  readonly askedBy: PermissionDecisionReason;
}

/** Decides about one call (the gate's `authorize`); never rejects. */
export async function authorizeCall(state: GateState, request: ToolCallRequest): Promise<PermissionDecision> {
  const { tool, input } = request;
  let subject: ToolPermissionSubject | undefined;
  try {
    subject = tool.permissionSubject?.(input, { cwd: request.cwd });
  } catch (error) {
    return {
      behavior: "deny",
      message: `${tool.name} was not run: what it would touch could not be read from its input (${(error as Error).message}). Check the input and try again.`,
      decidedBy: { type: "default", detail: "the permission subject could not be read" },
    };
  }
  const facts = await readCallFacts(tool, subject, request.cwd, state.homeDir);
  const call: Call = {
    request,
    facts,
    what: `${tool.name}${describeSubject(subject)}`,
    commandText: subject?.kind === "command" ? subject.command : undefined,
  };

  const denied = catching(state, "deny", facts);
  if (denied.certain !== undefined)
    return deny(
      `Permission denied: ${call.what} is refused by ${describeRule(denied.certain.rule)}${inPart(call, denied.certain)}. Do not try it another way; do something else or ask the user.`,
      { type: "rule", rule: denied.certain.rule },
    );
  if (state.mode === "plan" && tool.readOnly !== true)
    return deny(
      `${tool.name} was not run: plan mode allows read-only tools only. Finish the plan and present it; the user leaves plan mode to carry it out.`,
      { type: "mode", mode: state.mode },
    );

  const dirs = await workingDirectories(state);
  const written = facts.shell?.writes.flatMap((write) => write.paths ?? []) ?? [];
  const outside = [...facts.paths, ...written].find((path) => !isInsideDirectories(path, dirs));
  const asked = catching(state, "ask", facts);
  const askRule = asked.certain ?? asked.maybe;
  let question: Question | PermissionDecision;
  if (askRule !== undefined) {
    question = {
      why: `${describeRule(askRule.rule)} asks before ${call.what}${inPart(call, askRule)}.`,
      askedBy: { type: "rule", rule: askRule.rule },
    };
  } else if (denied.maybe !== undefined) {
    // A deny rule that may match is never skipped, in any mode: the user decides.
    question = {
      why: `${call.what} may run what ${describeRule(denied.maybe.rule)} refuses, and the gate cannot tell before it runs: ${denied.maybe.maybe}.`,
      askedBy: { type: "rule", rule: denied.maybe.rule },
    };
  } else question = withoutRuleToAsk(state, call, dirs, outside);
  if ("behavior" in question) return question;
  return askUser(state, call, question, outside);
}

/**
 * A call no ask rule (nor a deny rule that may match) catches: allowed by the mode, a hook, an allow rule or the
 * defaults (a read-only tool, a write in acceptEdits), or asked about with the reason no rule allows it.
 */
function withoutRuleToAsk(
  state: GateState,
  call: Call,
  dirs: string[],
  outside: string | undefined,
): Question | PermissionDecision {
  const { facts, what } = call;
  const { tool, subject, shell } = facts;
  if (state.mode === "bypassPermissions") return allow({ type: "mode", mode: state.mode });
  if (call.request.hookDecision === "allow") return allow({ type: "hook" });
  const allowRule = allowing(state, facts, dirs);
  if (allowRule !== undefined) return allow({ type: "rule", rule: allowRule });
  const unknownWrite = shell?.writes.find((write) => write.paths === undefined);
  let why: string;
  if (shell !== undefined && shell.unresolved.length > 0) {
    why = `${what} cannot be checked before it runs: ${shell.unresolved[0]}. No rule can approve what it cannot see; spell the command out.`;
  } else if (outside !== undefined) {
    why = `${what} ${shell === undefined ? "reaches" : "writes"} ${outside}, outside the working directories (${state.directories.join(", ")}).`;
  } else if (unknownWrite !== undefined) {
    why = `${what} writes to \`${unknownWrite.text}\`, a path only known when it runs.`;
  } else if (shell !== undefined) {
    const part = firstUnallowed(state, facts);
    why =
      part === undefined || part === call.commandText
        ? `no rule allows ${what}.`
        : `no rule allows \`${clip(part)}\`, which ${what} runs.`;
  } else if (tool.readOnly === true && !tool.name.startsWith("mcp__")) {
    // An MCP server's readOnlyHint is the server's claim, not a fact: it lifts plan mode's refusal, and
    // still asks (the MCP spec says clients must not trust annotations from servers they do not trust).
    return allow({ type: "default", detail: "a read-only tool inside the working directories" });
  } else if (state.mode === "acceptEdits" && subject?.kind === "path" && subject.access === "write") {
    return allow({ type: "mode", mode: state.mode });
  } else {
    why = `no rule allows ${what}.`;
  }
  return { why, askedBy: { type: "default", detail: why } };
}

/**
 * Asks the user through `canUseTool` (denied when there is no one to ask, or in dontAsk mode); an allow with
 * updates applies them for the rest of the session.
 */
async function askUser(
  state: GateState,
  call: Call,
  { why, askedBy }: Question,
  outside: string | undefined,
): Promise<PermissionDecision> {
  const { request, what } = call;
  const canUseTool = state.canUseTool;
  if (state.mode === "dontAsk" || canUseTool === undefined) {
    const detail =
      state.mode === "dontAsk" ? "dontAsk mode denies what it would ask" : "no canUseTool to ask";
    return deny(
      `Permission denied: ${why} There is no one to ask${state.mode === "dontAsk" ? " (dontAsk mode)" : ""}; the user can add an allow rule or change the mode. Do something else.`,
      askedBy.type === "rule" ? askedBy : { type: "no-one-to-ask", detail },
    );
  }
  let response: PermissionResponse;
  try {
    response = await canUseTool(request.tool, request.input, {
      signal: request.signal,
      suggestions: suggestionsFor(state, call.facts, outside),
      reason: why.charAt(0).toUpperCase() + why.slice(1),
      toolUseId: request.toolUseId,
      ...(outside === undefined ? {} : { blockedPath: outside }),
    });
  } catch (error) {
    return deny(`Permission denied: asking the user about ${what} failed (${(error as Error).message}).`, {
      type: "user",
    });
  }
  if (request.signal.aborted) return deny(`${what} was not run: the turn was interrupted.`, { type: "user" });
  if (response.behavior === "deny")
    return deny(response.message || `The user denied ${what}.`, { type: "user" });
  try {
    updateGate(state, response.updatedPermissions ?? []);
  } catch {
    // A rule the UI built badly does not undo the user's answer for this call.
  }
  return allow({ type: "user" }, response.updatedInput);
}

function deny(message: string, decidedBy: PermissionDecisionReason): PermissionDecision {
  return { behavior: "deny", message, reason: reasonOf(decidedBy), decidedBy };
}

function allow(decidedBy: PermissionDecisionReason, input?: Record<string, unknown>): PermissionDecision {
  return {
    behavior: "allow",
    ...(input === undefined ? {} : { input }),
    reason: reasonOf(decidedBy),
    decidedBy,
  };
}

function reasonOf(decidedBy: PermissionDecisionReason): string {
  return decidedBy.type === "rule" ? describeRule(decidedBy.rule) : decidedBy.type;
}

/** Where in a command a rule caught it, when that is not the whole command. */
function inPart(call: Call, caught: Caught): string {
  return caught.part === undefined || caught.part === call.commandText
    ? ""
    : ` (at \`${clip(caught.part)}\`)`;
}

function describeSubject(subject: ToolPermissionSubject | undefined): string {
  if (subject === undefined) return "";
  if (subject.kind === "command") return ` \`${subject.command}\``;
  if (subject.kind === "path") return ` (${subject.access} ${subject.path})`;
  return ` (${subject.url})`;
}

function describeRule(rule: PermissionRule): string {
  return `the ${rule.behavior} rule "${rule.text}" (${rule.source.file ?? `${rule.source.name} rules`})`;
}
