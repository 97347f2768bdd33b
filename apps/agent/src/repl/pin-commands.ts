import { PinLimitError } from "@unforget/session";
import { formatTokens } from "./repl-state.ts";
import { needSession, print, type SlashCommand, table } from "./slash-command.ts";

const pin: SlashCommand = {
  name: "pin",
  usage: "<id|last>",
  summary:
    "keeps a message verbatim through every compaction, with its tool call or result (last: the newest message; an id: a message's, or a tool call's as history_read names it); pins take at most a quarter of the window",
  whileIdle: true,
  async run(controller, args) {
    const { session } = needSession(controller);
    const id = args.trim();
    if (id === "")
      throw new Error("say what to pin: /pin last pins the newest message, /pin <id> a given one.");
    try {
      const item = await session.pin(id, { by: "user" });
      const partners = item.messageIds.length - 1;
      print(
        controller,
        `Pinned ${item.messageId}${partners > 0 ? ` with ${partners === 1 ? "its tool partner" : `${partners} tool partners`}` : ""} (${formatTokens(item.tokens)} tokens): no compaction clears or summarises it. /unpin ${item.messageId} lets it go.`,
      );
    } catch (error) {
      if (!(error instanceof PinLimitError)) throw error;
      throw new Error(
        `pins may take ${formatTokens(error.capTokens)} tokens; they take ${formatTokens(error.pinnedTokens)} and this would add ${formatTokens(error.itemTokens)}. /pins lists them; /unpin <id> makes room.`,
      );
    }
  },
};

const unpin: SlashCommand = {
  name: "unpin",
  usage: "<id>",
  summary: "lets a pinned message be compacted again (/pins lists the ids)",
  whileIdle: true,
  async run(controller, args) {
    const { session } = needSession(controller);
    const id = args.trim();
    if (id === "") throw new Error("say which pin to remove: /pins lists their ids.");
    print(
      controller,
      (await session.unpin(id))
        ? `Unpinned ${id}: compactions may summarise it again.`
        : `Nothing pinned holds ${id}; /pins lists the pins.`,
    );
  },
};

const pins: SlashCommand = {
  name: "pins",
  summary: "the pinned messages: their ids, sizes, and whether each is kept now",
  async run(controller) {
    const { session } = needSession(controller);
    const status = session.pins();
    if (status.items.length === 0) {
      print(
        controller,
        `No pins. /pin last keeps the newest message verbatim through compactions (pins may take ${formatTokens(status.capTokens)} tokens).`,
      );
      return;
    }
    print(
      controller,
      [
        table([
          ["id", "messages", "tokens", "kept", "by"],
          ...status.items.map((item) => [
            item.messageId,
            String(item.messageIds.length),
            formatTokens(item.tokens),
            item.honoured ? "yes" : "no: over the cap",
            item.by ?? "",
          ]),
        ]),
        `${formatTokens(status.tokens)} of ${formatTokens(status.capTokens)} tokens pinned (${Math.round(status.maxShare * 100)}% of the window).`,
      ].join("\n"),
    );
  },
};

/** `/pin`, `/unpin` and `/pins`, in `/help` order. */
export const PIN_COMMANDS: readonly SlashCommand[] = [pin, unpin, pins];
