// A separate process that appends its own lines to one shared memory with compare-and-swap writes,
// re-reading and retrying on every conflict. Arguments: <root> <worker id> <appends> <team|dir> [counter].
// With `counter`, each of its updates instead reads a shared counter, adds one and writes it back.
import { createMemoryDir } from "../dir/memory-dir.ts";
import { MemoryConflictError, MemoryNotFoundError } from "../store/memory-errors.ts";
import { createTeamMemory } from "../team/team-memory.ts";

const [root, worker, appendsText, kind, mode] = process.argv.slice(2);
if (!root || !worker || !appendsText)
  throw new Error("usage: concurrent-writer <root> <worker> <appends> [team]");
const appends = Number(appendsText);
const store =
  kind === "team"
    ? await createTeamMemory({ root, author: `agent:${worker}` })
    : await createMemoryDir({ root, author: `agent:${worker}` });
let conflicts = 0;
const counter = (value: number) =>
  `---\nname: counter\ndescription: a shared counter\ntype: project\n---\n${value}\n`;
if (mode === "counter") {
  for (let index = 0; index < appends; index++) {
    for (;;) {
      const current = await store.read("counter.md");
      const value = Number(current.content.split("---\n")[2]);
      try {
        await store.write("counter.md", counter(value + 1), { expectedHash: current.hash });
        break;
      } catch (error) {
        if (!(error instanceof MemoryConflictError)) throw error;
        conflicts++;
      }
    }
  }
  process.stdout.write(JSON.stringify({ worker, conflicts }));
  process.exit(0);
}
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
