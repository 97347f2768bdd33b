import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { openHistory, type SessionHistory } from "@unforget/history";
import { defaultMemoryRoot } from "@unforget/memory/root";
import type { Command } from "commander";
import { unforgetHome } from "./agent/settings/settings.ts";
import type { CommandOutput } from "./replay/replay-command.ts";
import { OptionValueError } from "./replay/replay-errors.ts";

/**
 * `unforget history search SESSION QUERY` and `unforget history show SESSION ID`: the session's whole history
 * (what the model's history_search and history_read see), for people. SESSION is a session id of this project
 * (as `--resume` takes it) or a transcript path (`….jsonl`).
 */
export function registerHistoryCommand(program: Command, output: CommandOutput): void {
  const history = program
    .command("history")
    .summary("search a session's whole history, or show one item of it");
  history
    .command("search")
    .summary("ranked search over every message, tool call and result, and summary of a session")
    .argument("<session>", "a session id of this project, or a transcript path (.jsonl)")
    .argument("<query...>", "the words to look for")
    .option("--tool <name>", "only calls of this tool")
    .option("--path <path>", "only tool calls whose input names this path")
    .option("-n, --limit <n>", "most hits (default 10, at most 50)", wholeNumber("--limit"))
    .action(
      async (session: string, query: string[], options: { tool?: string; path?: string; limit?: number }) => {
        const opened = await open(session, output);
        const hits = await opened.search(query.join(" "), {
          ...(options.tool === undefined ? {} : { tool: options.tool }),
          ...(options.path === undefined ? {} : { path: options.path }),
          ...(options.limit === undefined ? {} : { limit: options.limit }),
        });
        if (hits.length === 0) output.stdout.write(`No item matches "${query.join(" ")}".\n`);
        for (const hit of hits) {
          output.stdout.write(
            `${hit.id}  turn ${hit.turn}  ${hit.tool ?? hit.kind}${hit.agent ? ` (sub-agent ${hit.agent})` : ""}\n  ${hit.excerpt}\n`,
          );
        }
      },
    );
  history
    .command("show")
    .summary("print one item of a session's history exactly as it was")
    .argument("<session>", "a session id of this project, or a transcript path (.jsonl)")
    .argument("<id>", "the item's id, as a search hit, a clearing marker or a summary names it")
    .action(async (session: string, id: string) => {
      const opened = await open(session, output);
      let offset: number | undefined = 0;
      while (offset !== undefined) {
        const page = await opened.read(id, { offset, limit: 100_000 });
        output.stdout.write(page.text);
        offset = page.nextOffset;
      }
    });
}

/** The history of a session id (in this project's sessions folder) or of a transcript path. */
function open(session: string, output: CommandOutput): Promise<SessionHistory> {
  if (session.endsWith(".jsonl")) return openHistory({ transcriptPath: resolve(session) });
  const home = resolve(output.env.HOME || homedir());
  const sessionsDir = join(
    dirname(defaultMemoryRoot(process.cwd(), { configHome: unforgetHome(home) })),
    "sessions",
  );
  return openHistory({ transcriptPath: join(sessionsDir, `${session}.jsonl`) });
}

function wholeNumber(option: string): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < 1)
      throw new OptionValueError(option, `${option} ${value}: give a whole number of at least 1.`);
    return parsed;
  };
}
