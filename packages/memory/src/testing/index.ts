export { HOSTILE_MEMORY_NAMES } from "./hostile-memory-names.ts";
export type { MemoryStoreContractOptions } from "./memory-store-contract.ts";
export { describeMemoryStoreContract } from "./memory-store-contract.ts";
