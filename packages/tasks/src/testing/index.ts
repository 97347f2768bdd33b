export type {
  TaskBackendContractOptions,
  TaskBackendFixture,
} from "./task-backend-contract.ts";
export { describeTaskBackendContract } from "./task-backend-contract.ts";
export type { TaskManagerContractOptions, TaskManagerFixture } from "./task-manager-contract.ts";
export { describeTaskManagerContract } from "./task-manager-contract.ts";
export type { TaskStateStoreContractOptions, TaskStateStoreFixture } from "./task-state-store-contract.ts";
export { describeTaskStateStoreContract, sampleTaskRecord } from "./task-state-store-contract.ts";
