// Its typings name Node's types (child processes, signals), from the @types/node peer dependency.
/// <reference types="node" preserve="true" />
export { type GroupTermination, groupExists, signalGroup, terminateGroup } from "./process-group.ts";
export {
  currentProcessIdentity,
  isProcessAlive,
  type ProcessIdentity,
  readProcessIdentity,
} from "./process-identity.ts";
export {
  type GroupChild,
  type SpawnGroupOptions,
  shellCommandLine,
  spawnGroup,
  spawnShellCommand,
} from "./spawn-group.ts";
