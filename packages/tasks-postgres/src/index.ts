export {
  createPostgresTaskBackend,
  MAX_RUN_MS,
  type PostgresTaskBackend,
  type PostgresTaskBackendOptions,
  type SecretFinding,
} from "./postgres-task-backend.ts";
export { createTaskWorker, type TaskWorker, type TaskWorkerOptions } from "./task-worker.ts";
