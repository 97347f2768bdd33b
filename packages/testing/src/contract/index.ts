export type {
  ContractProviderSettings,
  ProviderContractCapabilities,
  ProviderContractOptions,
} from "./provider-contract.ts";
export { containsDeep, describeProviderContract } from "./provider-contract.ts";
