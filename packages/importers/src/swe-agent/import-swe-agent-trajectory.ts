import { convertOpenAiChatMessages } from "../shared/convert-openai-chat.ts";
import { finishImport } from "../shared/finish-import.ts";
import { guardImport } from "../shared/guard-import.ts";
import type { ImportDraft, ImportResult } from "../shared/import-result.ts";
import { createImportDraft } from "../shared/import-result.ts";
import { isRecord } from "../shared/is-record.ts";
import { ImportError } from "../shared/session-errors.ts";
import { parseJsonInput } from "./parse-json-input.ts";

const EXPECTED =
  "a SWE-agent trajectory: a JSON object with a `history` array of chat messages (or a `trajectory` array of steps)";

/**
 * Imports a SWE-agent `.traj` file (a string or the parsed object). The `history` holds OpenAI chat
 * messages: function-calling runs carry `tool_calls` and `role: "tool"` results (`tool_call_ids`); older runs
 * put thought and action in the assistant text, which is kept as text (the `thought` and `action` fields go
 * to message metadata). The system prompt becomes `result.system`; demonstrations become meta user messages
 * marked `metadata.isDemonstration`. A file with only `trajectory` steps is converted step by step.
 */
export function importSweAgentTrajectory(json: unknown): ImportResult {
  return guardImport("swe-agent", () => importTrajectory(json));
}

function importTrajectory(json: unknown): ImportResult {
  const value = parseJsonInput(json, "swe-agent", EXPECTED);
  if (!isRecord(value))
    throw new ImportError(`The input is not a JSON object; expected ${EXPECTED}.`, { format: "swe-agent" });
  const draft = createImportDraft("swe-agent");
  readRunFacts(value, draft);
  if (Array.isArray(value.history) && value.history.length > 0) {
    convertOpenAiChatMessages(value.history, draft, {
      idPrefix: "swe-agent",
      observationsAsUserText: true,
      keepFields: ["thought", "action", "agent", "message_type"],
    });
  } else if (Array.isArray(value.trajectory) && value.trajectory.length > 0) {
    const history: unknown[] = [];
    for (const step of value.trajectory) {
      if (!isRecord(step)) {
        history.push(step);
        continue;
      }
      const response =
        typeof step.response === "string"
          ? step.response
          : [step.thought, step.action].filter((part) => typeof part === "string").join("\n");
      history.push({ role: "assistant", content: response, thought: step.thought, action: step.action });
      history.push({ role: "user", content: typeof step.observation === "string" ? step.observation : "" });
    }
    convertOpenAiChatMessages(history, draft, {
      idPrefix: "swe-agent-step",
      observationsAsUserText: true,
      keepFields: ["thought", "action"],
    });
  } else {
    throw new ImportError(
      `The object has no non-empty \`history\` or \`trajectory\` array; expected ${EXPECTED}.`,
      { format: "swe-agent" },
    );
  }
  return finishImport(draft);
}

/**
 * The working directory (the first step's `state.working_dir`) and the configured model
 * (`replay_config.agent.model.name`); both fields may be JSON text or objects, depending on the version.
 */
function readRunFacts(value: Record<string, unknown>, draft: ImportDraft): void {
  const firstStep = Array.isArray(value.trajectory) ? value.trajectory[0] : undefined;
  const state = isRecord(firstStep) ? objectOrJson(firstStep.state) : undefined;
  if (typeof state?.working_dir === "string") draft.workingDirectory = state.working_dir;
  const config = objectOrJson(value.replay_config);
  const agent = isRecord(config?.agent) ? config.agent : undefined;
  const model = isRecord(agent?.model) ? agent.model.name : undefined;
  if (typeof model === "string") draft.configuredModel = model;
}

function objectOrJson(value: unknown): Record<string, unknown> | undefined {
  if (isRecord(value)) return value;
  if (typeof value !== "string" || !value.trimStart().startsWith("{")) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined; // An unreadable state only loses the working directory.
  }
}
