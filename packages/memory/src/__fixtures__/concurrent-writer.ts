// A separate process that appends its own lines to one shared memory with compare-and-swap writes,
// re-reading and retrying on every conflict. Arguments: <root> <worker id> <appends> <team|dir>.
import { createMemoryDir } from "../memory-dir.ts";
import { MemoryConflictError, MemoryNotFoundError } from "../memory-errors.ts";
import { createTeamMemory } from "../team-memory.ts";

const [root, worker, appendsText, kind] = process.argv.slice(2);
if (!root || !worker || !appendsText)
  throw new Error("usage: concurrent-writer <root> <worker> <appends> [team]");
const appends = Number(appendsText);
const store =
  kind === "team"
    ? await createTeamMemory({ root, author: `agent:${worker}` })
    : await createMemoryDir({ root, author: `agent:${worker}` });
let conflicts = 0;
for (let index = 0; index < appends; index++) {
  for (;;) {
    let current: { content: string; hash: string | null };
    try {
      current = await store.read("shared.md");
    } catch (error) {
      if (!(error instanceof MemoryNotFoundError)) throw error;
      current = {
        content: "---\nname: shared\ndescription: lines from every worker\ntype: project\n---\n",
        hash: null,
      };
    }
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
  // Also a file of its own, to race the catalog and MEMORY.md updates.
  await store.write(
    `${worker}.md`,
    `---\nname: ${worker}\ndescription: worker ${worker} wrote ${index + 1}\ntype: project\n---\n`,
  );
}
process.stdout.write(JSON.stringify({ worker, conflicts }));
