import { isProposalId } from "@unforget/memory";
import { listSessions, PERMISSION_MODES, type PermissionMode } from "@unforget/session";
import { describeMcpOutcome } from "../agent/mcp-outcome.ts";
import { modelNameProblem } from "../agent/model-names.ts";
import { closestName } from "../agent/settings/settings-schema.ts";
import { COMPACT_COMMAND, PIN_COMMANDS } from "./context-commands.ts";
import { describeProposal } from "./describe-proposal.ts";
import { bar, formatTokens, nextCompactionLine } from "./repl-state.ts";
import { needSession, print, type SlashCommand, table } from "./slash-command.ts";

const context: SlashCommand = {
  name: "context",
  usage: "[summary]",
  summary:
    "what the context holds: a table of its parts and a bar against the threshold; the summary it starts with",
  async run(controller, args) {
    const { session } = needSession(controller);
    if (args.trim() === "summary") {
      const summary = session.summary();
      print(
        controller,
        summary ??
          "No summary yet: nothing has been compacted into one. /compact --preview shows what one would say.",
      );
      return;
    }
    if (args.trim() !== "") {
      print(controller, `/context takes no argument but "summary"; it was "${args.trim()}".`);
      return;
    }
    const status = session.status();
    const parts = status.breakdown;
    const rows: string[][] = [["part", "tokens", "share"]];
    const named: [string, number][] = [
      ["system prompt", parts.system],
      ["tools", parts.tools],
      ["memory", parts.memory],
      ["summary", parts.summary],
      ["attachments", parts.attachments],
      ["tool results", parts.toolResults],
      ["messages", parts.messages],
    ];
    for (const [name, tokens] of named)
      rows.push([
        name,
        formatTokens(tokens),
        parts.total > 0 ? `${Math.round((tokens / parts.total) * 100)}%` : "0%",
      ]);
    rows.push(["total", formatTokens(parts.total), ""]);
    // Before the first request the gauge has nothing measured yet: the parts' estimate stands in, as in the table.
    const tokens = status.tokens > 0 ? status.tokens : parts.total;
    const share = status.threshold > 0 ? tokens / status.threshold : 0;
    const next = nextCompactionLine(status);
    print(
      controller,
      [
        `${bar(share, 30)} ${formatTokens(tokens)} / ${formatTokens(status.threshold)} threshold (${Math.round(share * 100)}%), window ${formatTokens(status.contextWindow)}`,
        table(rows),
        `${next}; ${status.compactions} compaction${status.compactions === 1 ? "" : "s"} so far`,
      ].join("\n"),
    );
  },
};

const memory: SlashCommand = {
  name: "memory",
  usage: "[show NAME|N | approve N | reject N]",
  summary:
    "lists memories and proposals; shows a memory, or what a proposal would change; approves or rejects one",
  async run(controller, args) {
    const { environment } = needSession(controller);
    const { store, proposals } = await environment.memory();
    const [verb, given] = args.split(/\s+/, 2);
    // A proposal is named by its id or by its number in the list below.
    const numbered =
      given !== undefined && /^\d+$/.test(given) ? (await proposals.list())[Number(given) - 1] : undefined;
    if (given !== undefined && /^\d+$/.test(given) && !numbered)
      throw new Error(`there is no proposal ${given}; /memory lists them.`);
    const target = numbered?.id ?? given;
    if (verb === "show" && target) {
      // A proposal is shown as what it would change, before anyone approves it.
      if (isProposalId(target)) {
        print(controller, await describeProposal(await proposals.get(target), store));
        return;
      }
      const content = await store.read(target);
      print(controller, `${target}\n${content.content}`);
      return;
    }
    if (verb === "approve" && target) {
      const outcome = await proposals.approve(target, store, { author: "user" });
      print(
        controller,
        `Approved ${target}: applied ${outcome.applied.join(", ") || "nothing"}${
          outcome.conflicts.length > 0 ? `; left alone (changed since): ${outcome.conflicts.join(", ")}` : ""
        }.`,
      );
      return;
    }
    if (verb === "reject" && target) {
      await proposals.reject(target);
      print(controller, `Rejected ${target}.`);
      return;
    }
    if (verb)
      throw new Error(
        "use /memory, /memory show NAME (or a proposal's ID), /memory approve ID or /memory reject ID.",
      );
    const memories = await store.list();
    const pending = await proposals.list();
    print(
      controller,
      [
        `Memories in ${store.location}:`,
        ...(memories.length > 0
          ? memories.map((entry) => `  ${entry.name}  ${entry.description}`)
          : ["  none yet"]),
        pending.length > 0
          ? "Proposals waiting for you (/memory show N shows what one would change; /memory approve N, /memory reject N):"
          : "No proposals waiting.",
        ...pending.map(
          (proposal, index) =>
            `  ${index + 1}. ${proposal.id}  ${proposal.changes.map((change) => `${change.kind === "delete" ? "delete " : ""}${change.name}`).join(", ")} — ${proposal.summary}`,
        ),
      ].join("\n"),
    );
  },
};

const tasks: SlashCommand = {
  name: "tasks",
  usage: "[output ID | stop ID]",
  summary: "lists background tasks; shows one's output; stops one",
  async run(controller, args) {
    const { environment } = needSession(controller);
    const [verb, id] = args.split(/\s+/, 2);
    if (verb === "output" && id) {
      const info = await environment.tasks.get(id);
      const from = Math.max(0, info.outputBytes - 4000);
      const chunk = await environment.tasks.readOutput(id, from);
      print(
        controller,
        `${id} (${info.status})${from > 0 ? `, last ${info.outputBytes - from} bytes` : ""}:\n${chunk.data}`,
      );
      return;
    }
    if (verb === "stop" && id) {
      const info = await environment.tasks.stop(id);
      print(controller, `Stopped ${id}: ${info.status}.`);
      return;
    }
    if (verb) throw new Error("use /tasks, /tasks output ID or /tasks stop ID.");
    const list = await environment.tasks.list();
    print(
      controller,
      list.length === 0
        ? "No background tasks."
        : table([
            ["id", "status", "description"],
            ...list.map((task) => [task.id, task.status, task.description]),
          ]),
    );
  },
};

const mcp: SlashCommand = {
  name: "mcp",
  usage: "[reconnect NAME]",
  summary: "lists the MCP servers, their state and tools; connects one again",
  async run(controller, args) {
    const { session } = needSession(controller);
    const servers = session.mcpServers;
    const [verb, name] = args.split(/\s+/, 2);
    if (!servers) {
      if (verb) throw new Error("there are no MCP servers in this session.");
      print(
        controller,
        "No MCP servers: add them to .mcp.json or the settings' mcpServers, or pass --mcp-config.",
      );
      return;
    }
    if (verb === "reconnect" && name) {
      print(controller, `Connecting ${name} again…`);
      const status = await servers.reconnect(name);
      print(controller, describeMcpOutcome(status));
      return;
    }
    if (verb) throw new Error("use /mcp or /mcp reconnect NAME.");
    const statuses = servers.status();
    print(
      controller,
      [
        table([
          ["server", "transport", "state", "tools"],
          ...statuses.map((status) => [
            status.server,
            status.transport,
            status.state,
            status.tools.length === 0 ? "-" : status.tools.join(", "),
          ]),
        ]),
        ...statuses.flatMap((status) => (status.error ? [status.error.message] : [])),
        "/mcp reconnect NAME stops a server and connects it again.",
      ].join("\n"),
    );
  },
};

const resume: SlashCommand = {
  name: "resume",
  usage: "[N | ID]",
  summary: "lists this folder's sessions; picks one to continue",
  whileIdle: true,
  async run(controller, args) {
    const { session, environment } = needSession(controller);
    const sessions = (await listSessions(environment.sessionsDir)).filter(
      (summary) => summary.sessionId !== session.sessionId,
    );
    if (args === "") {
      print(
        controller,
        sessions.length === 0
          ? "No other session in this folder."
          : [
              "Sessions (newest first); /resume N continues one:",
              ...sessions
                .slice(0, 20)
                .map(
                  (summary, index) =>
                    `  ${index + 1}. ${summary.modifiedAt.slice(0, 16).replace("T", " ")}  ${summary.title ?? summary.firstPrompt ?? "(no prompt)"}  ${summary.sessionId.slice(0, 8)}`,
                ),
            ].join("\n"),
      );
      return;
    }
    const index = /^\d+$/.test(args) ? Number(args) - 1 : -1;
    const picked = sessions[index] ?? sessions.find((summary) => summary.sessionId.startsWith(args));
    if (!picked) throw new Error(`there is no session ${args}; /resume lists them.`);
    await controller.switchSession(picked.sessionId);
    print(controller, `Resumed ${picked.sessionId}: ${picked.firstPrompt ?? ""}`);
    controller.drawConversation();
  },
};

const clear: SlashCommand = {
  name: "clear",
  summary: "starts a new session with an empty context (SessionStart: clear)",
  whileIdle: true,
  async run(controller) {
    const { session } = needSession(controller);
    await session.clear();
    print(controller, `New session ${session.sessionId}; the context is empty.`);
  },
};

const model: SlashCommand = {
  name: "model",
  usage: "[MODEL]",
  summary: "shows or changes the model",
  whileIdle: true,
  async run(controller, args) {
    const { session, environment } = needSession(controller);
    if (args === "") {
      print(controller, `Model: ${session.model} (${environment.providerName}). /model NAME changes it.`);
      return;
    }
    const problem = modelNameProblem(args, environment.config.models);
    if (problem !== undefined) throw new Error(problem);
    session.setModel(args);
    print(controller, `Model: ${args}.`);
  },
};

const permissions: SlashCommand = {
  name: "permissions",
  aliases: ["allowed-tools"],
  usage: "[mode MODE | allow RULE | deny RULE | ask RULE]",
  summary: "shows the permission mode and rules; changes them for this session",
  async run(controller, args) {
    const { session } = needSession(controller);
    const gate = session.permissions;
    if (!gate) throw new Error("this session has no permission gate.");
    const [verb = "", ...rest] = args.split(/\s+/);
    const value = rest.join(" ");
    if (verb === "mode") {
      if (!(PERMISSION_MODES as readonly string[]).includes(value))
        throw new Error(`the modes are ${PERMISSION_MODES.join(", ")}.`);
      gate.setMode(value as PermissionMode);
      print(controller, `Permission mode: ${value}.`);
      return;
    }
    if ((verb === "allow" || verb === "deny" || verb === "ask") && value !== "") {
      gate.update([{ type: "addRules", behavior: verb, rules: [value] }]);
      print(controller, `${verb} ${value} (for this session).`);
      return;
    }
    if (verb !== "")
      throw new Error("use /permissions, /permissions mode MODE, or /permissions allow|deny|ask RULE.");
    const rules = gate.rules();
    print(
      controller,
      [
        `Mode: ${gate.mode()}. Working folders: ${gate.directories().join(", ")}`,
        rules.length === 0
          ? "No rules: read-only tools run in the working folders, anything else asks."
          : table([
              ["rule", "does", "from"],
              ...rules.map((rule) => [rule.text, rule.behavior, rule.source.file ?? rule.source.name]),
            ]),
      ].join("\n"),
    );
  },
};

const help: SlashCommand = {
  name: "help",
  summary: "lists the commands and keys",
  async run(controller) {
    print(
      controller,
      [
        table(
          SLASH_COMMANDS.map((command) => [
            `/${command.name}${command.usage ? ` ${command.usage}` : ""}`,
            command.summary,
          ]),
        ),
        "Keys: Enter sends (typed while a turn runs, it waits for it), ↑/↓ history, Esc stops the turn, Ctrl-C stops the turn (twice: exits), Ctrl-D exits.",
      ].join("\n"),
    );
  },
};

const exit: SlashCommand = {
  name: "exit",
  aliases: ["quit"],
  summary: "ends the session and leaves",
  async run(controller) {
    await controller.exit();
  },
};

/** Every command, in `/help` order. Adding one is a new object here. */
export const SLASH_COMMANDS: readonly SlashCommand[] = [
  help,
  COMPACT_COMMAND,
  ...PIN_COMMANDS,
  context,
  memory,
  tasks,
  mcp,
  resume,
  clear,
  model,
  permissions,
  exit,
];

export function findCommand(word: string): SlashCommand | undefined {
  const name = word.toLowerCase();
  return SLASH_COMMANDS.find((command) => command.name === name || command.aliases?.includes(name));
}

/** The command a mistyped word most likely meant. */
export function suggestCommand(word: string): string | undefined {
  const names = SLASH_COMMANDS.flatMap((command) => [command.name, ...(command.aliases ?? [])]);
  const prefixed = names.find((name) => name.startsWith(word.toLowerCase()) && word !== "");
  return prefixed ?? closestName(word, names);
}
