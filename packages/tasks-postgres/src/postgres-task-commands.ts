import { randomUUID } from "node:crypto";
import type { SqlClient } from "@unforget/postgres";
import type { TaskCommand, TaskCommandResult, TaskCommandStore } from "@unforget/tasks";
import { CHANNELS, type TransactionBound } from "./task-tables.ts";

/** Commands in `unforget_task_command`: sent with a NOTIFY to the task's owner, answered once. */
export function createPostgresTaskCommands(client: SqlClient, bound: TransactionBound): TaskCommandStore {
  return {
    async send(init) {
      const command: TaskCommand = { ...init, id: randomUUID(), sentAt: Date.now() };
      await client.transaction(async (transaction) => {
        await transaction.query(
          "INSERT INTO unforget_task_command (id, task_id, command) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
          [command.id, command.taskId, JSON.stringify(command)],
        );
        await transaction.query("SELECT pg_notify($1, $2)", [CHANNELS.command, command.taskId]);
      }, bound);
      return command;
    },
    async pending(taskId) {
      const result = await client.query<{ command: TaskCommand }>(
        "SELECT command FROM unforget_task_command WHERE task_id = $1 AND result IS NULL ORDER BY seq",
        [taskId],
      );
      return result.rows.map((row) => row.command);
    },
    async acknowledge(command, result) {
      await client.query("UPDATE unforget_task_command SET result = $2 WHERE id = $1 AND result IS NULL", [
        command.id,
        JSON.stringify(result),
      ]);
    },
    async result(command) {
      const found = await client.query<{ result: TaskCommandResult | null }>(
        "SELECT result FROM unforget_task_command WHERE id = $1",
        [command.id],
      );
      return found.rows[0]?.result ?? undefined;
    },
  };
}
