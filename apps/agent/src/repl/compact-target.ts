import { parseWindow } from "../parse-window.ts";

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
