import { guardImport } from "../shared/guard-import.ts";
import type { ImportProblem, ImportResult } from "../shared/import-result.ts";
import { isRecord } from "../shared/is-record.ts";
import { ImportError } from "../shared/session-errors.ts";
import { convertOpenHandsEvents } from "./convert-openhands-events.ts";

const EXPECTED =
  "an OpenHands event stream: a JSON array of events, an object with a `history` (or `trajectory`) event array, or evaluation-output JSONL whose lines hold `history`";

export interface OpenHandsInstanceImport {
  /** 1-based line of the instance in the evaluation output. */
  line: number;
  /** The instance id when the line has one (`instance_id`, or the issue number for resolver output). */
  instanceId: string | undefined;
  result: ImportResult;
}

/**
 * Imports an OpenHands trajectory (a string or the parsed value). Agent actions with
 * `tool_call_metadata` become one assistant message per model response (`model_response.id`), holding the
 * response's text and every tool call it made; observations become tool results, linked by the tool call id
 * or by `cause` (the id of the action they answer). Older event logs without tool call metadata get a
 * synthetic tool_use per action (id `openhands-<event>`) answered by the observation that follows it.
 * Environment events and state changes are counted, not converted; the agent's `system` action becomes
 * `result.system`. Given evaluation-output JSONL with several instances, the first is imported and the others
 * are reported (use `importOpenHandsEvaluationOutput` to import them all).
 */
export function importOpenHandsTrajectory(json: unknown): ImportResult {
  return guardImport("openhands", () => {
    const { instances, problems } = readInput(json);
    const first = instances[0]!;
    const result = convertOpenHandsEvents(first.events, { ...first, problems });
    if (instances.length > 1) {
      result.report.problems.push({
        kind: "additional_instances",
        location: { line: instances[1]!.line ?? 2 },
        description: `The input holds ${instances.length} evaluation instances; only the first was imported. Use importOpenHandsEvaluationOutput to import each one.`,
      });
    }
    return result;
  });
}

/**
 * Imports every instance of an OpenHands evaluation output (JSONL, one `{instance_id, history, …}` per line).
 * Lines that hold no instance (not JSON, or cut off at the end of the file) are reported with the first one.
 */
export function importOpenHandsEvaluationOutput(text: string): OpenHandsInstanceImport[] {
  return guardImport("openhands", () => {
    const { instances, problems } = readInput(text);
    return instances.map((instance, position) => ({
      line: instance.line ?? 1,
      instanceId: instance.instanceId,
      result: convertOpenHandsEvents(instance.events, {
        ...instance,
        problems: position === 0 ? problems : [],
      }),
    }));
  });
}

interface Instance {
  events: unknown[];
  line: number | undefined;
  instanceId: string | undefined;
  configuredModel: string | undefined;
}

function readInput(json: unknown): { instances: Instance[]; problems: ImportProblem[] } {
  let value: unknown = json;
  if (typeof json === "string") {
    try {
      value = JSON.parse(json);
    } catch (error) {
      const read = readJsonLines(json);
      if (read.instances.length === 0) {
        throw new ImportError(
          `The OpenHands input is neither JSON nor JSONL with event histories (${error instanceof Error ? error.message : String(error)}); expected ${EXPECTED}.`,
          { format: "openhands", cause: error },
        );
      }
      return read;
    }
  }
  const instance = asInstance(value, undefined);
  if (!instance)
    throw new ImportError(`The input has no event list; expected ${EXPECTED}.`, { format: "openhands" });
  return { instances: [instance], problems: [] };
}

function readJsonLines(text: string): { instances: Instance[]; problems: ImportProblem[] } {
  const instances: Instance[] = [];
  const problems: ImportProblem[] = [];
  const lines = text.split("\n");
  lines.forEach((raw, index) => {
    if (raw.trim().length === 0) return;
    const line = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      const torn = index === lines.length - 1 && !text.endsWith("\n");
      problems.push({
        kind: torn ? "torn_line" : "invalid_json",
        location: { line },
        description: `${torn ? "The last line is cut off" : "The line is not valid JSON"} (${error instanceof Error ? error.message : String(error)}); it was skipped.`,
      });
      return;
    }
    const instance = asInstance(value, line);
    if (instance) instances.push(instance);
    else {
      problems.push({
        kind: "invalid_line",
        location: { line },
        description: "The line holds no event history (`history` or `trajectory`); it was skipped.",
      });
    }
  });
  return { instances, problems };
}

function asInstance(value: unknown, line: number | undefined): Instance | undefined {
  if (Array.isArray(value)) {
    return value.length > 0
      ? { events: value, line, instanceId: undefined, configuredModel: undefined }
      : undefined;
  }
  if (!isRecord(value)) return undefined;
  const events = Array.isArray(value.history)
    ? value.history
    : Array.isArray(value.trajectory)
      ? value.trajectory
      : undefined;
  if (!events || events.length === 0) return undefined;
  const issue = isRecord(value.issue) ? value.issue.number : undefined;
  const id = value.instance_id ?? issue;
  const llm =
    isRecord(value.metadata) && isRecord(value.metadata.llm_config) ? value.metadata.llm_config : {};
  return {
    events,
    line,
    instanceId: typeof id === "string" || typeof id === "number" ? String(id) : undefined,
    configuredModel: typeof llm.model === "string" ? llm.model : undefined,
  };
}
