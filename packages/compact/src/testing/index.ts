export type { LayerContractOptions, LayerUnderTest } from "./layer-contract.ts";
export { describeLayerContract } from "./layer-contract.ts";
export type { PipelineContractOptions } from "./pipeline-contract.ts";
export { describeContextManagerContract } from "./pipeline-contract.ts";
