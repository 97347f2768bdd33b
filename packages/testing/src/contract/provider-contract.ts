import type { ModelProvider, ModelRequest } from "@unforget/core";
import { afterAll, beforeAll, beforeEach, describe } from "vitest";
import type { FakeProviderServer, FakeServerOptions } from "../fakes/fake-script.ts";
import { describeBadResponseScenarios } from "./bad-response-scenarios.ts";
import { describeCancellationScenarios } from "./cancellation-scenarios.ts";
import { type ContractContext, userText } from "./contract-context.ts";
import { describeOverflowScenarios } from "./overflow-scenarios.ts";
import { describeRequestShapeScenarios } from "./request-shape-scenarios.ts";
import { describeRetryScenarios } from "./retry-scenarios.ts";
import { describeRoundTripScenarios } from "./round-trip-scenarios.ts";
import { describeTokenCountingScenarios } from "./token-counting-scenarios.ts";
import { describeUnknownBlockScenarios } from "./unknown-block-scenarios.ts";

/** Settings the suite passes to `createProvider`; providers must honour them so scenarios stay fast. */
export interface ContractProviderSettings {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff delay in milliseconds (tiny in the suite so retry scenarios take milliseconds). */
  initialRetryDelayMs: number;
}

/** What a provider supports; scenarios that do not apply are skipped, never weakened. */
export interface ProviderContractCapabilities {
  /** `countTokens` for `model` uses the provider's counting endpoint (method "native"). */
  nativeTokenCounting: boolean;
  /**
   * A model id for which native counting is unsupported (Bedrock cross-region ids, an Anthropic-compatible
   * server without the endpoint, …): counting it must fall back to the heuristic. Omit when none exists.
   */
  unsupportedCountingModel?: string;
  /** The fake reports cache creation tokens (Vertex has only cache reads). */
  cacheCreationUsage: boolean;
  /** The provider has a prompt-too-long wording without numbers (`prompt_too_long_generic`). */
  genericPromptTooLong: boolean;
  /** The provider can report a 200 response stopped by `model_context_window_exceeded`. */
  contextWindowExceededStop: boolean;
  /** The provider can fail mid-stream with a prompt-too-long error. */
  midStreamPromptTooLong: boolean;
  /** The provider has a byte-size limit error distinct from token overflow (Anthropic 413 `request_too_large`). */
  requestTooLarge: boolean;
  /** Thinking text is streamed and returned as thinking blocks. */
  thinking: boolean;
  /**
   * Aborting cancels the HTTP request itself, so the server sees the connection (or HTTP/2 stream) close.
   * False or absent when the SDK offers no cancellation and an aborted request is only abandoned.
   */
  abortClosesConnection?: boolean;
  /**
   * Unknown-block preservation. `replyBlock` is a raw block in the provider's wire format that the fake puts
   * into a reply; `original` is what the provider must hand back as `UnknownBlock.original`.
   * `sentUnchanged`: an `UnknownBlock` sent in a request goes out as `original`, unchanged.
   */
  unknownBlocks?: {
    replyBlock: unknown;
    original: { type: string; [key: string]: unknown };
    sentUnchanged: boolean;
  };
}

/**
 * Fakes used with the suite must follow one scripting rule: a model call (create or stream) consumes the
 * next step; a counting call consumes the next step only when it is an error or a hang, never a reply.
 */
export interface ProviderContractOptions<Fake extends FakeProviderServer = FakeProviderServer> {
  /** Used in the describe title. */
  name: string;
  /** Starts the provider's fake; called once per test file. */
  startFake: (options?: FakeServerOptions) => Promise<Fake>;
  /** Builds the provider under test, pointed at the fake, honouring the suite's settings. */
  createProvider: (fake: Fake, settings: ContractProviderSettings) => ModelProvider;
  /** Model id in the provider's naming. */
  model: string;
  capabilities: ProviderContractCapabilities;
  /** Per-scenario timeout in milliseconds (default 30 000); a hang past it fails the scenario. */
  timeoutMs?: number;
}

/**
 * The provider contract: every `ModelProvider` must pass it against its wire-faithful fake with its real
 * SDK. Scenarios a provider's capabilities rule out are skipped (and show as skipped in the report).
 */
export function describeProviderContract<Fake extends FakeProviderServer>(
  options: ProviderContractOptions<Fake>,
): void {
  const settings: ContractProviderSettings = { maxRetries: 2, initialRetryDelayMs: 1 };
  let running: { fake: Fake; provider: ModelProvider } | undefined;
  const current = () => {
    if (running === undefined) throw new Error("The provider contract's fake is not running yet.");
    return running;
  };
  const contract: ContractContext = {
    get fake() {
      return current().fake;
    },
    get provider() {
      return current().provider;
    },
    model: options.model,
    capabilities: options.capabilities,
    timeout: options.timeoutMs ?? 30_000,
    settings,
    request: (overrides: Partial<ModelRequest> = {}) => ({
      model: options.model,
      maxTokens: 256,
      messages: [userText("What is the weather in Paris and in Rome?")],
      ...overrides,
    }),
    lastRequestBody: () => current().fake.requests.at(-1)?.body,
    withProvider: (override) => options.createProvider(current().fake, { ...settings, ...override }),
  };

  describe(`provider contract: ${options.name}`, () => {
    const skipped = unsupportedCapabilities(options.capabilities);
    if (skipped.length > 0) {
      // No scenario skips without a word: one line names what this provider does not support.
      console.info(
        `provider contract ${options.name}: scenarios skipped because the provider does not support them: ${skipped.join(", ")}.`,
      );
    }
    beforeAll(async () => {
      const fake = await options.startFake();
      running = { fake, provider: options.createProvider(fake, settings) };
    });
    afterAll(async () => {
      await running?.fake.close();
      running = undefined;
    });
    beforeEach(() => {
      // A scenario that failed may have left steps queued; none may reach the next one.
      contract.fake.reset();
    });

    describeRoundTripScenarios(contract);
    describeTokenCountingScenarios(contract);
    describeRequestShapeScenarios(contract);
    describeOverflowScenarios(contract);
    describeRetryScenarios(contract);
    describeBadResponseScenarios(contract);
    describeCancellationScenarios(contract);
    describeUnknownBlockScenarios(contract);
  });
}

/** The capabilities whose scenarios are skipped for this provider (each gates one or more `it.runIf`). */
function unsupportedCapabilities(capabilities: ProviderContractCapabilities): string[] {
  const skipped: string[] = [];
  if (!capabilities.nativeTokenCounting) skipped.push("nativeTokenCounting");
  if (capabilities.unsupportedCountingModel === undefined) skipped.push("unsupportedCountingModel");
  if (!capabilities.genericPromptTooLong) skipped.push("genericPromptTooLong");
  if (!capabilities.midStreamPromptTooLong) skipped.push("midStreamPromptTooLong");
  if (!capabilities.contextWindowExceededStop) skipped.push("contextWindowExceededStop");
  if (!capabilities.requestTooLarge) skipped.push("requestTooLarge");
  if (capabilities.abortClosesConnection !== true) skipped.push("abortClosesConnection");
  if (capabilities.unknownBlocks === undefined) skipped.push("unknownBlocks");
  else if (!capabilities.unknownBlocks.sentUnchanged) skipped.push("unknownBlocks.sentUnchanged");
  return skipped;
}
