import {
  canonicalModelId,
  createModelLimitsRegistry,
  DEFAULT_MODEL_LIMITS,
  type ModelLimits,
  type ModelLimitsEntry,
  type ModelProvider,
} from "@unforget/core";
import { formatWindow } from "../parse-window.ts";
import { closestName } from "./settings/settings-schema.ts";

/** Limits the settings give models (`models`), by model id or family. */
export type ModelLimitSettings = Record<
  string,
  Partial<Pick<ModelLimitsEntry, "contextWindow" | "maxOutputTokens">>
>;

/**
 * What is wrong with a model name, in a sentence, or undefined when there is nothing: a name neither core's table nor
 * the settings' `models` knows, and close to one that is known, is taken for a typo (the provider would refuse it
 * at the first request). A name close to nothing known is left alone: a deployment of the user's own.
 */
export function modelNameProblem(model: string, models: ModelLimitSettings = {}): string | undefined {
  const registry = createModelLimitsRegistry({ overrides: models, onUnknownModel: () => {} });
  if (registry.get(model).known) return undefined;
  const canonical = canonicalModelId(model);
  const suggestion = closestName(canonical, [...Object.keys(DEFAULT_MODEL_LIMITS), ...Object.keys(models)]);
  if (suggestion === undefined) return undefined;
  // The family in the name as given: a Bedrock or Vertex id keeps its prefix and suffix.
  const at = model.toLowerCase().indexOf(canonical);
  const meant =
    at < 0 ? suggestion : `${model.slice(0, at)}${suggestion}${model.slice(at + canonical.length)}`;
  return `${model} is not a model unforget knows; did you mean ${meant}? (A model of your own: give its limits in the settings, "models": {"${model}": {"contextWindow": …, "maxOutputTokens": …}}.)`;
}

/** The line the app shows for a model it does not know: what it assumes, and the setting that says otherwise. */
export function unknownModelNotice(model: string, assumed: ModelLimits): string {
  return `Unknown model ${model}: unforget assumes a ${formatWindow(assumed.contextWindow)}-token window and ${assumed.maxOutputTokens.toLocaleString("en-US")} output tokens. If it has others, set them in the settings: "models": {"${model}": {"contextWindow": …, "maxOutputTokens": …}}.`;
}

/**
 * The provider as the session sees it when the settings cap the context window (`contextWindow`): every model's
 * window is at most `window` tokens, so thresholds and compaction follow it; requests and output limits do not
 * change. Learned limits (a smaller window a prompt-too-long error stated) still apply below it. Without a cap,
 * the provider as it is.
 */
export function withContextWindow(provider: ModelProvider, window: number | undefined): ModelProvider {
  if (window === undefined) return provider;
  return {
    ...provider,
    getModelLimits(model) {
      const limits = provider.getModelLimits(model);
      return limits.contextWindow <= window ? limits : { ...limits, contextWindow: window };
    },
  };
}
