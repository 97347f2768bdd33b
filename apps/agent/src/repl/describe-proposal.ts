import { MemoryNotFoundError, type MemoryProposal, type MemoryStore } from "@unforget/memory";
import { structuredPatch } from "diff";

/** Lines of context around each change of a memory, as `diff -u` shows them. */
const CONTEXT_LINES = 2;

async function currentContent(store: MemoryStore, name: string): Promise<string | undefined> {
  try {
    return (await store.read(name)).content;
  } catch (error) {
    if (error instanceof MemoryNotFoundError) return undefined;
    throw error;
  }
}

/** `- old` / `+ new` lines with a little context: what approving the change would do to the memory. */
function unifiedLines(name: string, before: string, after: string): string[] {
  const patch = structuredPatch(name, name, before, after, "", "", { context: CONTEXT_LINES });
  if (patch.hunks.length === 0) return ["  (no change: the memory says this already)"];
  return patch.hunks.flatMap((hunk) => [
    `  @@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`,
    ...hunk.lines.map((line) => `  ${line}`),
  ]);
}

/**
 * A proposal as `/memory show ID` prints it: who proposed it, then each change against the memory as it is now
 * (a diff for an update, the whole text for a new memory), and which changes approval would leave alone because
 * the memory changed since.
 */
export async function describeProposal(proposal: MemoryProposal, store: MemoryStore): Promise<string> {
  const catalog = new Map((await store.catalog()).map((entry) => [entry.name, entry.hash]));
  const lines = [
    `Proposal ${proposal.id} (${proposal.author}, ${proposal.createdAt.slice(0, 16).replace("T", " ")}): ${proposal.summary}`,
  ];
  for (const change of proposal.changes) {
    const hash = catalog.get(change.name);
    const stale = (hash ?? null) !== change.baseHash;
    const note = stale ? " (changed since it was proposed: approving leaves it alone)" : "";
    if (change.kind === "delete") {
      lines.push(`delete ${change.name}${note}`);
      continue;
    }
    const before = hash === undefined ? undefined : await currentContent(store, change.name);
    if (before === undefined) {
      lines.push(
        `new ${change.name}${note}`,
        ...change.content
          .trimEnd()
          .split("\n")
          .map((line) => `  +${line}`),
      );
    } else {
      lines.push(`update ${change.name}${note}`, ...unifiedLines(change.name, before, change.content));
    }
  }
  lines.push(`/memory approve ${proposal.id} applies it; /memory reject ${proposal.id} drops it.`);
  return lines.join("\n");
}
