import { convertOpenAiChatMessages } from "../shared/convert-openai-chat.ts";
import { finishImport } from "../shared/finish-import.ts";
import { guardImport } from "../shared/guard-import.ts";
import type { ImportResult } from "../shared/import-result.ts";
import { createImportDraft } from "../shared/import-result.ts";
import { isRecord } from "../shared/is-record.ts";
import { ImportError } from "../shared/session-errors.ts";
import { parseJsonInput } from "./parse-json-input.ts";

const EXPECTED =
  "a mini-swe-agent trajectory: a JSON array of chat messages, or an object with a `messages` array";

/**
 * Imports a mini-swe-agent run (a string or the parsed value): a list of OpenAI chat messages, bare or under
 * `messages`. Bash commands live in the assistant text and their output in the next user message, so the
 * conversation has no tool blocks; the system prompt becomes `result.system`.
 */
export function importMiniSweAgentTrajectory(json: unknown): ImportResult {
  return guardImport("mini-swe-agent", () => importTrajectory(json));
}

function importTrajectory(json: unknown): ImportResult {
  const value = parseJsonInput(json, "mini-swe-agent", EXPECTED);
  const messages = Array.isArray(value) ? value : isRecord(value) ? value.messages : undefined;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new ImportError(`The input has no non-empty message list; expected ${EXPECTED}.`, {
      format: "mini-swe-agent",
    });
  }
  const draft = createImportDraft("mini-swe-agent");
  const config =
    isRecord(value) && isRecord(value.info) && isRecord(value.info.config) ? value.info.config : {};
  const model = isRecord(config.model) ? config.model.model_name : undefined;
  if (typeof model === "string") draft.configuredModel = model;
  convertOpenAiChatMessages(messages, draft, { idPrefix: "mini-swe-agent", observationsAsUserText: true });
  return finishImport(draft);
}
