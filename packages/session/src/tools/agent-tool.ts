import type { Tool, ToolContext, ToolOutput } from "@unforget/core";
import type { TurnStopReason } from "../loop/session-events.ts";
import type { SessionTaskManager } from "../optional/session-capabilities.ts";

/** A sub-agent the model can start: its own context, system prompt and subset of the parent's tools. */
export interface AgentDefinition {
  /** When to use this agent; the model reads it in the Agent tool's description. */
  description: string;
  /** The agent's system prompt. */
  prompt: string;
  /** Names of the parent's tools it may call; default all of them. */
  tools?: readonly string[];
  /** Its model; default the parent's. */
  model?: string;
  /** Most model calls it makes; default 50. */
  maxTurns?: number;
}

/** The name the model calls sub-agents by (Claude Code's). */
export const AGENT_TOOL_NAME = "Agent";

/** A sub-agent's `maxTurns` when its definition sets none. */
export const DEFAULT_AGENT_MAX_TURNS = 50;

/** One sub-agent run, as the Agent tool asks the session for it. */
export interface SubAgentRun {
  agentType: string;
  definition: AgentDefinition;
  prompt: string;
  description: string;
  toolUseId: string;
  signal: AbortSignal;
  /** Where a background run writes its progress (one line per tool call); absent in the foreground. */
  log?: (line: string) => Promise<void>;
}

/** What a finished sub-agent hands back: only `text` enters the parent's context. */
export interface SubAgentReport {
  text: string;
  stopReason: TurnStopReason;
  turns: number;
  sessionId: string;
  transcriptPath: string;
}

export interface AgentToolOptions {
  agents: Readonly<Record<string, AgentDefinition>>;
  /** Runs one sub-agent to its end in a child session (the session supplies it). */
  run(run: SubAgentRun): Promise<SubAgentReport>;
  /** Where background agents run, as `local_agent` tasks; without it `run_in_background` is refused. */
  tasks?: SessionTaskManager;
}

/**
 * The Agent tool: starts a sub-agent in a child session, in the foreground (the call returns its final report)
 * or in the background as a `local_agent` task (its report arrives later as a task notification).
 */
export function createAgentTool(options: AgentToolOptions): Tool {
  const names = Object.keys(options.agents);
  const catalogue = names.map((name) => `- ${name}: ${options.agents[name]!.description}`).join("\n");
  return {
    name: AGENT_TOOL_NAME,
    description: `Start a sub-agent on a task of its own. It works in a fresh context with its own tools and returns one final report; only that report comes back to you, so ask it for everything you need in it. Available agents:\n${catalogue}`,
    inputSchema: {
      type: "object",
      properties: {
        description: { type: "string", description: "A short (3-5 word) description of the task" },
        prompt: { type: "string", description: "The task for the agent, with all the context it needs" },
        subagent_type: { type: "string", enum: names, description: "Which agent to start" },
        run_in_background: {
          type: "boolean",
          description: "Run it as a background task and be notified when it ends (default false)",
        },
      },
      required: ["description", "prompt", "subagent_type"],
      additionalProperties: false,
    },
    // The tool itself changes nothing: every call its sub-agent makes goes through the same permission gate.
    readOnly: true,
    concurrencySafe: true,
    // A sub-agent's turn is bounded by its maxTurns and each of its calls by their own timeouts.
    timeoutMs: 3_600_000,
    async execute(input, context) {
      const agentType = String(input.subagent_type);
      const definition = options.agents[agentType]!;
      const run: SubAgentRun = {
        agentType,
        definition,
        prompt: String(input.prompt),
        description: String(input.description),
        toolUseId: context.toolUseId,
        signal: context.signal,
      };
      if (input.run_in_background === true) return startInBackground(options, run, context);
      return reportOutput(await options.run(run));
    },
  };
}

async function startInBackground(
  options: AgentToolOptions,
  run: SubAgentRun,
  context: ToolContext,
): Promise<ToolOutput> {
  if (!options.tasks) {
    return {
      content:
        "This session has no task manager, so agents cannot run in the background. Call Agent again without run_in_background.",
      isError: true,
    };
  }
  const taskId = await options.tasks.start({
    type: "local_agent",
    description: `${run.agentType}: ${run.description}`,
    prompt: run.prompt,
    run: async (job) => {
      const report = await options.run({
        ...run,
        signal: job.signal,
        log: (line) => job.output.line(line),
      });
      return report.text;
    },
  });
  return {
    content: `Started the ${run.agentType} agent in the background as task ${taskId} (session ${context.sessionId}). You will be notified with its report when it ends; go on with other work meanwhile.`,
    isError: false,
  };
}

function reportOutput(report: SubAgentReport): ToolOutput {
  if (report.stopReason === "end_turn" || report.stopReason === "stop_sequence") {
    return {
      content: report.text === "" ? "(the agent ended without a report)" : report.text,
      isError: false,
    };
  }
  const why =
    report.stopReason === "max_turns"
      ? `it used all of its ${report.turns} model calls`
      : report.stopReason === "aborted"
        ? "it was interrupted"
        : `it stopped (${report.stopReason})`;
  return {
    content: `The agent did not finish: ${why}. Its transcript is ${report.transcriptPath}.${report.text === "" ? "" : ` Its last words:\n${report.text}`}`,
    isError: true,
  };
}
