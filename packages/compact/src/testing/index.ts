export { fixedSummarizer } from "./fixed-summarizer.ts";
export type { LayerContractOptions, LayerUnderTest } from "./layer-contract.ts";
export { describeLayerContract, layerUnderTest } from "./layer-contract.ts";
export type { ManagerUnderTest, PipelineContractOptions } from "./pipeline-contract.ts";
export { describeContextManagerContract } from "./pipeline-contract.ts";
