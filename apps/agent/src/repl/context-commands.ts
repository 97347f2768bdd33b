// The commands that steer compaction: /compact (now, to a target size, or a preview) and the pins.
import { type CompactReport, PinLimitError } from "@unforget/session";
import { describeSummaryWriter } from "../agent/summary-writer.ts";
import { parseWindow } from "../parse-window.ts";
import { formatTokens } from "./repl-state.ts";
import { needSession, print, type SlashCommand, table } from "./slash-command.ts";

/** `/compact`'s arguments: `--preview`, a target size (`--target 20K`), and the instructions for the summary. */
export interface CompactArguments {
  preview: boolean;
  /** Compact until the context is at or under this many tokens. */
  target?: number;
  instructions: string;
}

/** Reads `[--preview] [--target SIZE] [instructions]` (a bad size throws, saying how to write one). */
export function parseCompactArguments(args: string): CompactArguments {
  let rest = args.trim();
  let preview = false;
  let target: number | undefined;
  for (;;) {
    const flag = /^--preview(?:\s+|$)/.exec(rest);
    if (flag) {
      preview = true;
      rest = rest.slice(flag[0].length);
      continue;
    }
    const sized = /^--target(?:\s+|=)(\S+)(?:\s+|$)/.exec(rest);
    if (sized) {
      target = parseWindow(sized[1]!);
      rest = rest.slice(sized[0].length);
      continue;
    }
    break;
  }
  return { preview, ...(target !== undefined ? { target } : {}), instructions: rest.trim() };
}

/** `/compact [--preview] [--target SIZE] [instructions]`. */
export const COMPACT_COMMAND: SlashCommand = {
  name: "compact",
  usage: "[--preview] [--target SIZE] [instructions]",
  summary:
    "compacts the conversation now (instructions steer the summary; --target 20K compacts until the context is at or under 20K tokens; --preview shows the summary and applies nothing)",
  whileIdle: true,
  async run(controller, args) {
    const { session } = needSession(controller);
    const { preview, target, instructions } = parseCompactArguments(args);
    if (preview && target !== undefined) {
      print(
        controller,
        "--preview shows one summary and applies nothing, so it takes no --target: drop one of them.",
      );
      return;
    }
    controller.store.update({ busy: true });
    try {
      if (target !== undefined) {
        const report = await session.compact(instructions || undefined, { targetTokens: target });
        print(controller, describeTargetOutcome(report, target));
        return;
      }
      const report = await session.compact(instructions || undefined, preview ? { preview: true } : {});
      if (preview) {
        const shown = report.preview;
        print(
          controller,
          shown
            ? [
                `Preview, nothing applied: the ${shown.layer} would take the context from ${formatTokens(shown.tokensBefore)} to ${formatTokens(shown.tokensAfter)} tokens, replacing ${shown.messagesSummarized} message${shown.messagesSummarized === 1 ? "" : "s"}.${shown.declined ? ` It would not be applied: ${shown.declined}` : ""}`,
                shown.summary,
              ].join("\n")
            : `Nothing to preview (the context is ${formatTokens(report.tokensBefore)} tokens). ${
                report.declined.map((declined) => declined.reason).join(" ") ||
                "No layer had anything to compact."
              }`,
        );
        return;
      }
      const layers = report.actions.map((action) => action.layer).join(", ");
      print(
        controller,
        layers.length > 0
          ? `Compacted (${layers}): ${formatTokens(report.tokensBefore)} → ${formatTokens(report.tokensAfter)} tokens${report.actions.map(describeSummaryWriter).join("")}.`
          : `Nothing was compacted (the context is ${formatTokens(report.tokensBefore)} tokens). ${
              report.declined.map((declined) => declined.reason).join(" ") ||
              "No layer had anything to compact."
            }`,
      );
    } finally {
      controller.store.update({ busy: false });
    }
  },
};

/** `/compact --target`'s line: where the context went, and why it stopped above the target when it did. */
function describeTargetOutcome(report: CompactReport, target: number): string {
  const { tokensBefore, tokensAfter } = report;
  const rounds = report.target?.rounds ?? 0;
  if (rounds === 0 && report.target?.reached)
    return `Nothing to do: the context is ${formatTokens(tokensBefore)} tokens, at or under the ${formatTokens(target)} target.`;
  const counted = rounds === 1 ? "one compaction" : `${rounds} compactions`;
  const writers = report.actions.map(describeSummaryWriter).join("");
  if (report.target?.reached)
    return `Compacted to the target with ${counted}: ${formatTokens(tokensBefore)} → ${formatTokens(tokensAfter)} tokens (target ${formatTokens(target)})${writers}.`;
  return `Could not reach ${formatTokens(target)} tokens: ${formatTokens(tokensBefore)} → ${formatTokens(tokensAfter)} with ${counted}${writers}. ${report.target?.reason ?? ""}`.trimEnd();
}

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
