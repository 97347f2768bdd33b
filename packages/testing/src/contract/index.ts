export { containsDeep } from "./contract-context.ts";
export type {
  ContractProviderSettings,
  ProviderContractCapabilities,
  ProviderContractOptions,
} from "./provider-contract.ts";
export { describeProviderContract } from "./provider-contract.ts";
