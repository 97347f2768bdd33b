export type { TaskStateStoreContractOptions, TaskStateStoreFixture } from "./task-state-store-contract.ts";
export { describeTaskStateStoreContract, sampleTaskRecord } from "./task-state-store-contract.ts";
