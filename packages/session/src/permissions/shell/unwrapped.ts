// What a command runs besides itself, as each reader of a wrapper (wrappers.ts, wrapped-programs.ts) returns it.

/** A command's words as bash passes them; `undefined` for a word only known when it runs. */
export type Words = readonly (string | undefined)[];

/** What a command runs besides itself. */
export type Unwrapped =
  | { kind: "none" }
  | { kind: "unresolved"; why: string; transparent: false }
  | {
      kind: "command";
      words: Words;
      more: boolean;
      /** Variables set for it (`env NAME=value cmd`), by name. */
      assignments: string[];
      /** Files the wrapper itself writes (`time -o file`). */
      writes: (string | undefined)[];
      transparent: boolean;
    }
  | {
      kind: "script";
      /** Shell text it runs (`bash -c text`, `eval`, `watch`); undefined when it is only known at run time. */
      text?: string;
      /** A script file it runs (`bash file`, `source file`). */
      file?: string;
      writes: (string | undefined)[];
      transparent: boolean;
    }
  | { kind: "scripts"; texts: (string | undefined)[]; transparent: boolean }
  | {
      kind: "commands";
      commands: { words: Words; more: boolean }[];
      writes: (string | undefined)[];
      transparent: boolean;
    }
  | { kind: "writes"; targets: (string | undefined)[]; transparent: false };

/** It runs nothing besides itself (as far as the gate needs to know). */
export const none = { kind: "none" } as const;
/** What it runs cannot be told before it runs, and why. */
export const unresolved = (why: string): Unwrapped => ({ kind: "unresolved", why, transparent: false });
