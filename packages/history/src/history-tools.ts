import { isUnforgetError, type Tool, type ToolOutput } from "@unforget/core";
import type { HistoryHit, HistoryPage, SessionHistory } from "./session-history.ts";

/** Most characters one `history_read` call returns (about 12K tokens): a page is bounded like a file read. */
const MAX_READ_CHARS = 50_000;
/** Characters per page when the model gives no limit: about 5K tokens. */
const DEFAULT_READ_CHARS = 20_000;
/** Most hits one `history_search` call lists; each is one line of about 300 characters. */
const MAX_SEARCH_HITS = 20;
const DEFAULT_SEARCH_HITS = 8;

/** What the history tools need: the session's history, opened on first use (and re-opened after a /clear). */
export type HistorySource = () => Promise<SessionHistory>;

/**
 * The model-callable history tools (core's `Tool` contract): `history_search` ranks the session's whole history
 * (every message, tool call with its full result, summary, sub-agent) and `history_read` returns one item
 * byte-exact in pages. Both only read, so they may run beside the turn's other calls; their results can be had
 * again, so compaction may clear them ("reproducible"), and they are never indexed themselves.
 */
export function createHistoryTools(history: HistorySource): Tool[] {
  return [createHistorySearchTool(history), createHistoryReadTool(history)];
}

function createHistorySearchTool(history: HistorySource): Tool {
  return {
    name: "history_search",
    description:
      "Search this session's whole history — every message, every tool call with its full result, every summary, sub-agents included — even what compaction cleared or summarised. Returns ranked hits, each with an id, its turn, its tool and an excerpt; read a hit in full with history_read. Use it before re-running a command or re-reading a file only to recover something you saw earlier.",
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", description: "Words to look for (ranked with BM25)." },
        tool: { type: "string", description: "Only calls of this tool (e.g. Bash, Read)." },
        path: { type: "string", description: "Only tool calls whose input names this path." },
        from_turn: { type: "integer", minimum: 0, description: "Only items of this turn or later." },
        to_turn: { type: "integer", minimum: 0, description: "Only items of this turn or earlier." },
        limit: {
          type: "integer",
          minimum: 1,
          maximum: MAX_SEARCH_HITS,
          description: "Most hits (default 8).",
        },
      },
      required: ["query"],
      additionalProperties: false,
    },
    readOnly: true,
    concurrencySafe: true,
    resultRetention: "reproducible",
    async execute(input) {
      const query = input.query;
      if (typeof query !== "string" || query.trim() === "") {
        return { content: "history_search needs a `query`: the words to look for.", isError: true };
      }
      const turns = {
        ...(typeof input.from_turn === "number" ? { from: input.from_turn } : {}),
        ...(typeof input.to_turn === "number" ? { to: input.to_turn } : {}),
      };
      const limit =
        typeof input.limit === "number" ? Math.min(input.limit, MAX_SEARCH_HITS) : DEFAULT_SEARCH_HITS;
      return guarded(async () => {
        const hits = await (await history()).search(query, {
          ...(typeof input.tool === "string" ? { tool: input.tool } : {}),
          ...(typeof input.path === "string" ? { path: input.path } : {}),
          turns,
          limit,
        });
        if (hits.length === 0) {
          return {
            content: `No item of this session's history matches "${query}" with these filters.`,
            isError: false,
          };
        }
        return {
          content: [`${hits.length} hits, best first:`, ...hits.map(hitLine)].join("\n"),
          isError: false,
        };
      });
    },
  };
}

function hitLine(hit: HistoryHit): string {
  const what = hit.tool ?? hit.kind;
  const flags = [hit.agent ? `sub-agent ${hit.agent}` : "", hit.isError ? "error" : ""].filter(Boolean);
  return `- id=${hit.id} turn ${hit.turn} ${what}${flags.length > 0 ? ` (${flags.join(", ")})` : ""}, ${hit.chars.toLocaleString("en-US")} chars: ${hit.excerpt}`;
}

function createHistoryReadTool(history: HistorySource): Tool {
  return {
    name: "history_read",
    description:
      "Read one item of this session's history exactly as it was (a tool result, a message, a summary), by the id a history_search hit, a clearing marker or a summary names. A range of the user's messages a summary folded (\"<first id>..<last id>\") lists them, each with its id. Long items come in pages: pass the offset the previous page gave.",
    inputSchema: {
      type: "object",
      properties: {
        id: { type: "string", description: "The item's id (e.g. a tool call's id toolu_…)." },
        offset: { type: "integer", minimum: 0, description: "First character to return (default 0)." },
        limit: {
          type: "integer",
          minimum: 1,
          maximum: MAX_READ_CHARS,
          description: "Most characters to return (default 20000).",
        },
      },
      required: ["id"],
      additionalProperties: false,
    },
    readOnly: true,
    concurrencySafe: true,
    resultRetention: "reproducible",
    async execute(input) {
      const id = input.id;
      if (typeof id !== "string" || id === "")
        return { content: "history_read needs the `id` of an item.", isError: true };
      const offset = typeof input.offset === "number" ? input.offset : 0;
      const limit =
        typeof input.limit === "number" ? Math.min(input.limit, MAX_READ_CHARS) : DEFAULT_READ_CHARS;
      return guarded(async () => {
        const page = await (await history()).read(id, { offset, limit });
        return { content: `${pageHeader(page)}\n${page.text}`, isError: false };
      });
    },
  };
}

/** One line before the text: what the item is and where this page sits in it. */
function pageHeader(page: HistoryPage): string {
  const what = page.tool ? `${page.tool}(${clipInput(page.input)})` : page.kind;
  const range = `characters ${page.offset}–${page.offset + page.text.length} of ${page.totalChars}`;
  const next = page.nextOffset === undefined ? "last page" : `next page: offset ${page.nextOffset}`;
  return `[history id=${page.id} turn ${page.turn} ${what}${page.agent ? ` sub-agent ${page.agent}` : ""}${page.isError ? " error" : ""}; ${range}; ${next}]`;
}

function clipInput(input: unknown): string {
  const text = JSON.stringify(input ?? null);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** A typed error (unknown id, bad range) is an error result saying what to do; anything else is rethrown. */
async function guarded(run: () => Promise<ToolOutput>): Promise<ToolOutput> {
  try {
    return await run();
  } catch (error) {
    if (isUnforgetError(error)) return { content: error.message, isError: true };
    throw error;
  }
}
