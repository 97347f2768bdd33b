import type { ModelProvider, ModelRequest, ModelStreamEvent, RequestMessage } from "@unforget/core";
import type { FakeProviderServer } from "../fakes/fake-script.ts";
import type { ContractProviderSettings, ProviderContractCapabilities } from "./provider-contract.ts";

/**
 * What every scenario group of the provider contract reads: the fake and the provider of the running
 * suite (set before the first scenario), and the helpers that build requests against them.
 */
export interface ContractContext {
  /** The running fake; read inside a scenario, never while the suite is being declared. */
  readonly fake: FakeProviderServer;
  /** The provider under test, built with `settings`. */
  readonly provider: ModelProvider;
  readonly model: string;
  readonly capabilities: ProviderContractCapabilities;
  /** Per-scenario timeout in milliseconds. */
  readonly timeout: number;
  /** The settings the provider was built with. */
  readonly settings: ContractProviderSettings;
  /** A request for `model` asking about two cities, with `overrides` applied. */
  request(overrides?: Partial<ModelRequest>): ModelRequest;
  /** The body of the last request the fake received. */
  lastRequestBody(): unknown;
  /** A fresh provider instance, with `override` applied to the suite's settings. */
  withProvider(override: Partial<ContractProviderSettings>): ModelProvider;
}

export const WEATHER_TOOL = {
  name: "get_weather",
  description: "Current weather for a city",
  inputSchema: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
  },
};

export const TIME_TOOL = {
  name: "get_time",
  description: "Current local time for a city",
  inputSchema: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
  },
};

export function userText(text: string): RequestMessage {
  return { role: "user", content: [{ type: "text", text }] };
}

/** True when `needle` occurs (deep-equal) anywhere inside `haystack`. */
export function containsDeep(haystack: unknown, needle: unknown): boolean {
  if (JSON.stringify(haystack) === JSON.stringify(needle)) return true;
  if (Array.isArray(haystack)) return haystack.some((item) => containsDeep(item, needle));
  if (typeof haystack === "object" && haystack !== null) {
    return Object.values(haystack).some((value) => containsDeep(value, needle));
  }
  return false;
}

export async function collect(stream: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The error `promise` rejects with; a promise that resolves fails the scenario. */
export async function captureError(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("Expected the call to fail, but it succeeded.");
}

/** Reads a stream that must fail: the events it delivered before failing, and the error it failed with. */
export async function readUntilError(
  stream: AsyncIterable<ModelStreamEvent>,
): Promise<{ seen: ModelStreamEvent[]; error: unknown }> {
  const seen: ModelStreamEvent[] = [];
  const error = await captureError(
    (async () => {
      for await (const event of stream) seen.push(event);
    })(),
  );
  return { seen, error };
}
