import type { ModelProvider, ModelRequest } from "@unforget/core";

/** A provider that hands every request to `record` before sending it, so summariser requests can be dumped. */
export function recordingProvider(
  provider: ModelProvider,
  record: (request: ModelRequest) => void,
): ModelProvider {
  return {
    specificationVersion: provider.specificationVersion,
    providerId: provider.providerId,
    capabilities: provider.capabilities,
    countTokens: (request, options) => provider.countTokens(request, options),
    createMessage(request, options) {
      record(request);
      return provider.createMessage(request, options);
    },
    streamMessage(request, options) {
      record(request);
      return provider.streamMessage(request, options);
    },
    getModelLimits: (model) => provider.getModelLimits(model),
  };
}
