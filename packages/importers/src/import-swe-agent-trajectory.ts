import { ImportError } from "@unforget/core";
import { convertOpenAiChatMessages } from "./convert-openai-chat.ts";
import type { ImportResult } from "./import-result.ts";
import { createImportDraft, finishImport, parseJsonInput } from "./import-result.ts";
import { isRecord } from "./is-record.ts";

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
  const value = parseJsonInput(json, "swe-agent", EXPECTED);
  if (!isRecord(value))
    throw new ImportError(`The input is not a JSON object; expected ${EXPECTED}.`, { format: "swe-agent" });
  const draft = createImportDraft("swe-agent");
  if (Array.isArray(value.history) && value.history.length > 0) {
    convertOpenAiChatMessages(value.history, draft, {
      idPrefix: "swe-agent",
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
