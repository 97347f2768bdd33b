import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { useFakeProvider } from "../__fixtures__/use-fake-provider.ts";
import { createMemoryDir, type MemoryDir } from "../dir/memory-dir.ts";
import { formatMemoryFile, type MemoryFrontmatter, parseMemoryFile } from "../store/memory-frontmatter.ts";
import { createProposalQueue, type ProposalQueue } from "../store/memory-proposals.ts";
import { createDreamJob } from "./dream.ts";

const NOW = new Date("2026-11-01T00:00:00Z");
const daysAgo = (days: number) => new Date(NOW.getTime() - days * 86_400_000).toISOString();

let parent: string;
let dir: MemoryDir;
let proposals: ProposalQueue;

const { fake: currentFake, provider } = useFakeProvider();
beforeEach(async () => {
  parent = await mkdtemp(join(tmpdir(), "memory-dream-"));
  dir = await createMemoryDir({ root: join(parent, "memory") });
  proposals = createProposalQueue(join(dir.storeFolder, "proposals"));
  return () => rm(parent, { recursive: true, force: true });
});

async function save(name: string, fields: Partial<MemoryFrontmatter>, body: string) {
  await dir.write(
    name,
    formatMemoryFile({ name: name.replace(/\.md$/, ""), description: "d", type: "project", ...fields }, body),
  );
}

async function seed() {
  await save(
    "ci_tests.md",
    { name: "ci", description: "CI runs the tests with vitest", updated: daysAgo(10) },
    "CI runs vitest on every push.\n",
  );
  await save(
    "ci_tests_copy.md",
    { name: "ci copy", description: "CI runs the tests with vitest", updated: daysAgo(3) },
    "CI runs vitest on every push.\nIt also runs on tags.\n",
  );
  await save(
    "db_old.md",
    { name: "database", description: "The app uses MySQL", updated: daysAgo(90) },
    "MySQL 8.\n",
  );
  await save(
    "db_new.md",
    { name: "database", description: "The app uses PostgreSQL", updated: daysAgo(2) },
    "PostgreSQL 16.\n",
  );
  await save(
    "stale.md",
    { description: "A one-off note about day 3", relevance: 0.2, updated: daysAgo(200) },
    "Day 3 build was slow.\n",
  );
  await save(
    "indent.md",
    { description: "2-space indent", type: "user", decay: false, relevance: 0.05 },
    "2 spaces.\n",
  );
}

describe("createDreamJob", () => {
  it("without a model: merges a duplicate, resolves a contradiction, prunes below the threshold, and reports", async () => {
    await seed();
    const job = createDreamJob({
      store: dir,
      stateFolder: join(dir.storeFolder, "dream"),
      mode: "apply",
      now: () => NOW,
    });
    const lines: string[] = [];
    const report = await job.run({ force: true, log: (line) => void lines.push(line) });
    expect(report.ran).toBe(true);
    expect(report.conflicts).toEqual([]);
    expect(report.actions.map((action) => action.action).sort()).toEqual(["merge", "prune", "supersede"]);

    // The duplicate was merged into the newer copy, which kept the extra line; the older is gone, with its last version kept.
    const merged = parseMemoryFile((await dir.read("ci_tests_copy.md")).content, "x");
    expect(merged.body).toContain("It also runs on tags.");
    expect(merged.frontmatter?.supersedes).toEqual(["ci_tests.md"]);
    expect((await dir.listVersions("ci_tests.md"))[0]).toMatchObject({
      operation: "delete",
      author: "dream",
    });

    // The contradiction: PostgreSQL (newer) supersedes MySQL, which stays on disk, ranked lower.
    const names = (await dir.list()).map((entry) => [entry.name, entry.supersededBy]);
    expect(names).toContainEqual(["db_old.md", "db_new.md"]);
    expect(parseMemoryFile((await dir.read("db_old.md")).content, "x").frontmatter?.relevance).toBe(0.5);

    // Pruned: the stale low-relevance note; never the pinned fact, whatever its relevance.
    expect((await dir.list()).map((entry) => entry.name)).not.toContain("stale.md");
    expect((await dir.list()).map((entry) => entry.name)).toContain("indent.md");

    const markdown = await readFile(report.reportPath as string, "utf8");
    expect(markdown).toContain("merged ci_tests.md into ci_tests_copy.md");
    expect(markdown).toContain("db_new.md supersedes db_old.md");
    expect(lines.map((line) => line.split(":")[0])).toEqual([
      "orient",
      "gather",
      "consolidate",
      "prune",
      "Dream over 6 memories",
    ]);
  });

  it("with a model, by default: proposes a reviewable change and touches nothing until approved", async () => {
    await seed();
    const before = await dir.list();
    currentFake().enqueue({
      kind: "reply",
      toolCalls: [
        {
          name: "consolidate",
          input: {
            actions: [
              {
                action: "merge",
                keep: "ci_tests.md",
                remove: ["ci_tests_copy.md"],
                content: formatMemoryFile(
                  { name: "ci", description: "CI runs vitest on pushes and tags", type: "project" },
                  "CI runs vitest on every push and tag.\n",
                ),
                reason: "same fact twice",
              },
              {
                action: "supersede",
                newer: "db_new.md",
                older: "db_old.md",
                reason: "migrated to PostgreSQL on 2026-10-30",
              },
              { action: "relevance", name: "indent.md", relevance: 0.9, reason: "still used" },
              {
                action: "supersede",
                newer: "invented.md",
                older: "db_old.md",
                reason: "ignored: unknown memory",
              },
              { action: "delete", name: "db_new.md", reason: "ignored: not an action" },
            ],
          },
        },
      ],
    });
    const job = createDreamJob({
      store: dir,
      stateFolder: join(dir.storeFolder, "dream"),
      proposals,
      provider: provider(),
      model: "claude-sonnet-4-5",
      recentSessions: () => ["Session 41: moved the app to PostgreSQL."],
      now: () => NOW,
    });
    const requestsBefore = currentFake().requests.length;
    const report = await job.run({ force: true });
    expect(JSON.stringify(currentFake().requests[requestsBefore]?.body)).toContain(
      "moved the app to PostgreSQL",
    );
    expect(report.actions.map((action) => action.action)).toEqual([
      "merge",
      "supersede",
      "relevance",
      "prune",
    ]);
    expect(report.proposalId).toBeDefined();
    expect((await dir.list()).map((entry) => entry.hash)).toEqual(before.map((entry) => entry.hash));

    const outcome = await proposals.approve(report.proposalId as string, dir);
    expect(outcome.conflicts).toEqual([]);
    const after = new Map((await dir.list()).map((entry) => [entry.name, entry]));
    expect(after.has("ci_tests_copy.md")).toBe(false);
    expect(after.get("ci_tests.md")?.description).toBe("CI runs vitest on pushes and tags");
    expect(after.get("db_old.md")?.supersededBy).toBe("db_new.md");
    expect(after.get("indent.md")?.relevance).toBe(0.9);
    expect(after.has("stale.md")).toBe(false);
    expect((await dir.listVersions("ci_tests_copy.md"))[0]?.content).toContain("It also runs on tags.");
  });

  it("is gated by the cooldown, the number of sessions and a lock", async () => {
    await seed();
    let now = NOW;
    const options = {
      store: dir,
      stateFolder: join(dir.storeFolder, "dream"),
      proposals,
      minSessions: 2,
      now: () => now,
    };
    const job = createDreamJob(options);
    expect(await job.due()).toEqual({ due: false, reason: "0 of 2 sessions since the last dream" });
    await job.recordSession("s1");
    await job.recordSession("s1");
    expect((await job.run()).skipped).toBe("1 of 2 sessions since the last dream");
    await job.recordSession("s2");
    expect((await job.run()).ran).toBe(true);
    expect((await job.due()).reason).toMatch(/cooling down/);
    now = new Date(NOW.getTime() + 25 * 3_600_000);
    expect((await job.due()).reason).toBe("0 of 2 sessions since the last dream");

    // A second dream while one holds the lock does not run.
    currentFake().enqueue({ kind: "reply", toolCalls: [{ name: "consolidate", input: { actions: [] } }] });
    const gate = currentFake().hold();
    const slow = createDreamJob({ ...options, provider: provider(), model: "m" }).run({ force: true });
    // The first dream holds the lock and waits on its model call.
    await gate.reached;
    const second = await createDreamJob(options).run({ force: true });
    gate.release();
    expect(second).toMatchObject({ ran: false, skipped: "another dream is running" });
    expect((await slow).ran).toBe(true);
  });
});
