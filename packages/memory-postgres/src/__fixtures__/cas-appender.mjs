// A separate process with its own pool and machine id that appends lines to one shared memory with
// compare-and-swap writes, retrying on every conflict. It loads the built packages, as an application
// would (plain JavaScript: no transpiler to start in each of the eight processes).
// Arguments: <url> <namespace> <worker> <appends>. Prints one JSON line: { worker, conflicts }.
import { MemoryConflictError } from "@unforget/memory";
import { createSqlClient } from "@unforget/postgres";
import { createPostgresMemoryStore } from "../../dist/index.js";

const [url, namespace, worker, appendsText] = process.argv.slice(2);
const client = await createSqlClient({ url, poolSize: 2 });
const store = await createPostgresMemoryStore({
  client,
  namespaces: [namespace],
  actor: `agent:${worker}`,
  machine: `machine-${worker}`,
});
let conflicts = 0;
for (let index = 0; index < Number(appendsText); index++) {
  for (;;) {
    const current = await store.read("shared.md");
    try {
      await store.write("shared.md", `${current.content}- ${worker} ${index}\n`, {
        expectedHash: current.hash,
      });
      break;
    } catch (error) {
      if (!(error instanceof MemoryConflictError)) throw error;
      conflicts++;
    }
  }
}
await client.close();
process.stdout.write(`${JSON.stringify({ worker, conflicts })}\n`);
