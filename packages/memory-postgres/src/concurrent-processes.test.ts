import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runNode } from "./__fixtures__/run-node.ts";
import { freshNamespace, server, useServerDatabase } from "./__fixtures__/stores.ts";
import { createPostgresMemoryStore } from "./postgres-memory-store.ts";

const APPENDER = join(dirname(fileURLToPath(import.meta.url)), "__fixtures__", "cas-appender.mjs");

async function appender(
  url: string,
  namespace: string,
  worker: string,
  appends: number,
): Promise<{ conflicts: number }> {
  return JSON.parse(await runNode([APPENDER, url, namespace, worker, String(appends)])) as {
    conflicts: number;
  };
}

describe.skipIf(server === undefined)("many processes on one memory", () => {
  const database = useServerDatabase();

  it("8 processes × 200 compare-and-swap appends give 1,600 lines and version 1,601", async () => {
    const namespace = freshNamespace();
    const store = await createPostgresMemoryStore({
      client: database().client,
      namespaces: [namespace],
      actor: "agent:setup",
    });
    await store.write(
      "shared.md",
      "---\nname: shared\ndescription: lines from every process\ntype: project\n---\n",
    );
    const workers = Array.from({ length: 8 }, (_, index) => `w${index + 1}`);
    const outcomes = await Promise.all(
      workers.map((worker) => appender(database().url, namespace, worker, 200)),
    );
    const { content, version } = await store.read("shared.md");
    const lines = content.split("\n").filter((line) => line.startsWith("- "));
    expect(lines).toHaveLength(1_600);
    expect(new Set(lines).size).toBe(1_600);
    expect(version).toBe(1_601);
    const versions = await store.listVersions("shared.md");
    expect(versions).toHaveLength(1_601);
    expect(new Set(versions.map((each) => each.actor))).toEqual(
      new Set(
        ["agent:setup", ...workers.map((worker) => `agent:${worker}@machine-${worker}`)].map((actor) =>
          actor === "agent:setup" ? versions.at(-1)?.actor : actor,
        ),
      ),
    );
    // The race was real: processes lost compare-and-swaps and retried.
    expect(outcomes.reduce((sum, outcome) => sum + outcome.conflicts, 0)).toBeGreaterThan(0);
  }, 600_000);
});
