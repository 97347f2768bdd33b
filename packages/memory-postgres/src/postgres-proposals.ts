import {
  applyProposal,
  isProposalId,
  MemoryNotFoundError,
  type MemoryProposal,
  newProposalId,
  normalizeMemoryName,
  type ProposalQueue,
} from "@unforget/memory";
import type { SqlClient } from "@unforget/postgres";
import { exactText, textColumn } from "./memory-rows.ts";

interface ProposalRow {
  id: string;
  created_at: Date | string;
  author: string;
  summary: string;
  changes: MemoryProposal["changes"] | string;
}

function proposalOf(row: ProposalRow): MemoryProposal {
  return {
    id: row.id,
    createdAt: (row.created_at instanceof Date ? row.created_at : new Date(row.created_at)).toISOString(),
    author: exactText(row.author),
    summary: exactText(row.summary),
    changes: typeof row.changes === "string" ? JSON.parse(row.changes) : row.changes,
  };
}

/** The proposal queue of one namespace, in `memory_proposal`: decided proposals stay, marked approved or rejected. */
export function createPostgresProposalQueue(client: SqlClient, namespace: string): ProposalQueue {
  const missing = (id: string) =>
    new MemoryNotFoundError(
      `There is no pending proposal "${id}" in ${namespace}; list them to see the pending ones.`,
      {
        memoryName: id,
      },
    );
  const decide = async (id: string, status: "approved" | "rejected") => {
    const { rowCount } = await client.query(
      "UPDATE memory_proposal SET status = $3, decided_at = now() WHERE namespace = $1 AND id = $2 AND status = 'pending'",
      [namespace, id, status],
    );
    if (rowCount === 0) throw missing(id);
  };
  const queue: ProposalQueue = {
    async propose(input) {
      const { id, createdAt } = newProposalId();
      const changes = input.changes.map((change) => ({ ...change, name: normalizeMemoryName(change.name) }));
      await client.query(
        "INSERT INTO memory_proposal (namespace, id, created_at, author, summary, changes) VALUES ($1, $2, $3, $4, $5, $6::jsonb)",
        [namespace, id, createdAt, input.author, input.summary, JSON.stringify(changes)],
      );
      return { ...input, changes, id, createdAt };
    },
    async list() {
      const { rows } = await client.query<ProposalRow>(
        `SELECT id, created_at, ${textColumn("author")}, ${textColumn("summary")}, changes FROM memory_proposal WHERE namespace = $1 AND status = 'pending' ORDER BY created_at, id`,
        [namespace],
      );
      return rows.map(proposalOf);
    },
    async get(id) {
      if (!isProposalId(id)) throw missing(String(id));
      const { rows } = await client.query<ProposalRow>(
        `SELECT id, created_at, ${textColumn("author")}, ${textColumn("summary")}, changes FROM memory_proposal WHERE namespace = $1 AND id = $2 AND status = 'pending'`,
        [namespace, id],
      );
      const row = rows[0];
      if (row === undefined) throw missing(id);
      return proposalOf(row);
    },
    async approve(id, store, options = {}) {
      const outcome = await applyProposal(await queue.get(id), store, options);
      await decide(id, "approved");
      return outcome;
    },
    async reject(id) {
      await queue.get(id);
      await decide(id, "rejected");
    },
  };
  return queue;
}
