import {
  AbortedError,
  ConfigurationError,
  createUsage,
  type ModelRequest,
  type ModelStreamEvent,
  ProviderRequestError,
} from "@unforget/core";
import { describe, expect, it } from "vitest";
import { createProviderRuntime, type ProviderDefinition } from "./provider-runtime.ts";
import type { ProviderRuntimeSettings } from "./provider-settings.ts";

// A provider whose "SDK" is a few lines of local code: it answers, hangs or never settles on demand, and
// never looks at a signal, like SDKs that cannot cancel a request.
interface LocalClient {
  connects: number;
}

const request: ModelRequest = {
  model: "local-model",
  maxTokens: 16,
  messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
};

const never = () => new Promise<never>(() => {});

function definition(overrides: Partial<ProviderDefinition<LocalClient, "local">> = {}) {
  let connects = 0;
  const base: ProviderDefinition<LocalClient, "local"> = {
    providerId: "local",
    displayName: "The local provider",
    factoryName: "createLocalProvider()",
    settingNames: ["endpointUrl"],
    unsignedThinking: "drop",
    capabilities: {
      nativeTokenCounting: false,
      nativeContextManagement: false,
      promptCaching: false,
      thinking: false,
    },
    settings: { maxRetries: 0, initialRetryDelayMs: 1 },
    connect: () => ({ connects: ++connects }),
    toError: (error) => new ProviderRequestError(String(error), { providerId: "local", retryable: false }),
    createMessage: async () => ({
      id: "r",
      model: "local-model",
      role: "assistant",
      content: [{ type: "text", text: "ok" }],
      stopReason: "end_turn",
      usage: createUsage(),
    }),
    async *streamMessage(): AsyncGenerator<ModelStreamEvent> {
      yield { type: "message_start", id: "r", model: "local-model", usage: createUsage() };
      yield { type: "message_stop" };
    },
  };
  return { ...base, ...overrides };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("Expected the call to fail.");
    },
    (error: unknown) => error,
  );
}

describe("createProviderRuntime", () => {
  it("connects on the first request, not before, and tries again after a failed connection", async () => {
    let attempts = 0;
    const { provider } = createProviderRuntime(
      definition({
        connect: () => {
          attempts += 1;
          if (attempts === 1) throw new ConfigurationError("No key yet.", { setting: "apiKey" });
          return { connects: attempts };
        },
      }),
    );
    expect(attempts).toBe(0);
    expect(await failure(provider.createMessage(request))).toBeInstanceOf(ConfigurationError);
    await provider.createMessage(request);
    await provider.createMessage(request);
    expect(attempts).toBe(2);
  });

  it("abandons an answer that never comes when the caller aborts, even if the SDK ignores the signal", async () => {
    const { provider } = createProviderRuntime(definition({ createMessage: never }));
    const controller = new AbortController();
    const pending = failure(provider.createMessage(request, { signal: controller.signal }));
    setTimeout(() => controller.abort(), 20);
    expect(await pending).toBeInstanceOf(AbortedError);
  });

  it("bounds each wait between stream events with the per-attempt timeout, and retries nothing after the first", async () => {
    let opened = 0;
    const { provider } = createProviderRuntime(
      definition({
        settings: { maxRetries: 2, initialRetryDelayMs: 1 },
        async *streamMessage(): AsyncGenerator<ModelStreamEvent> {
          opened += 1;
          yield { type: "message_start", id: "r", model: "local-model", usage: createUsage() };
          await never();
        },
      }),
    );
    const seen: string[] = [];
    const error = await failure(
      (async () => {
        for await (const event of provider.streamMessage(request, { timeoutMs: 50 })) seen.push(event.type);
      })(),
    );
    expect(error).toBeInstanceOf(ProviderRequestError);
    expect((error as ProviderRequestError).message).toContain("sent nothing more within 50 ms");
    expect(seen).toEqual(["message_start"]);
    expect(opened).toBe(1);
  });

  it("answers counts with the heuristic when the provider has no counting endpoint", async () => {
    const { provider } = createProviderRuntime(definition());
    const counted = await provider.countTokens(request);
    expect(counted.method).toBe("heuristic");
    expect(counted.inputTokens).toBeGreaterThan(0);
    expect(provider.capabilities.nativeTokenCounting).toBe(false);
  });

  it("tells onUnknownModel, once per model, what it assumes for a model it does not know; modelLimits make it known", () => {
    const told: string[] = [];
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on("warning", onWarning);
    try {
      const { provider } = createProviderRuntime(
        definition({
          settings: {
            modelLimits: { "house-model": { contextWindow: 64_000, maxOutputTokens: 4_000 } },
            onUnknownModel: (model, assumed) => told.push(`${model} ${assumed.contextWindow}`),
          },
        }),
      );
      expect(provider.getModelLimits("local-model").known).toBe(false);
      provider.getModelLimits("local-model");
      expect(provider.getModelLimits("house-model")).toMatchObject({ known: true, contextWindow: 64_000 });
      expect(told).toEqual(["local-model 128000"]);
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it("refuses a setting the provider does not read, naming the one meant", () => {
    const refused = (settings: object) => {
      try {
        createProviderRuntime(definition({ settings: settings as ProviderRuntimeSettings }));
      } catch (error) {
        return error;
      }
      return undefined;
    };
    // Shared and own names are taken.
    expect(refused({ maxRetries: 1, endpointUrl: "http://127.0.0.1:1", env: {} })).toBeUndefined();
    const typo = refused({ maxRetires: 1 });
    expect(typo).toBeInstanceOf(ConfigurationError);
    expect((typo as ConfigurationError).setting).toBe("maxRetires");
    expect((typo as Error).message).toBe(
      'createLocalProvider() has no setting "maxRetires", so it would be ignored. Did you mean "maxRetries"?',
    );
    expect((refused({ max_retries: 1 }) as Error).message).toContain('Did you mean "maxRetries"?');
    expect((refused({ maxAttempts: 3 }) as Error).message).toContain(
      'Here the setting is "maxRetries": it counts only the retries (maxAttempts 3 is maxRetries 2).',
    );
    expect((refused({ colour: "blue" }) as Error).message).toContain("The settings are maxRetries,");
    expect((refused([]) as Error).message).toBe(
      "createLocalProvider() takes an object of settings; it was given an array.",
    );
  });
});
