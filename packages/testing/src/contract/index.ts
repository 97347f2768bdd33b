export { containsDeep } from "./contract-context.ts";
export type {
  ContractProviderSettings,
  ProviderContractCapabilities,
  ProviderContractOptions,
} from "./provider-contract.ts";
export { describeProviderContract } from "./provider-contract.ts";
export type { ScriptedClock } from "./scripted-clock.ts";
export { withScriptedClock } from "./scripted-clock.ts";
export type {
  SessionMemorySourceContractOptions,
  SessionMemorySourceHarness,
} from "./session-memory-source-contract.ts";
export { describeSessionMemorySourceContract } from "./session-memory-source-contract.ts";
