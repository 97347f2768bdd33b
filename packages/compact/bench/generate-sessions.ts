import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ContentBlock, Message } from "@unforget/core";
import { seededRandom } from "@unforget/testing/arbitraries";
import type { CorpusSession } from "./replay-corpus.ts";

/**
 * Long single-task sessions, Claude Code style, made at bench time from this repository: an agent given one
 * task in one package reads real files (whole, numbered as Claude Code's Read shows them), greps and globs the
 * tree, edits, and runs real commands (git, node, ls, cat) whose real output and exit status it gets back —
 * including the failures node and the shell really print. Several hundred calls each, few idle gaps. The
 * choices come from a seeded generator and the outputs from the checked-out tree, so the same commit gives
 * the same sessions; nothing is stored in the repository. The recorded clock advances by a model's time per
 * call and a tool's time per result, with a user follow-up every 60–110 calls and, in every other session,
 * one pause longer than the prompt cache lives.
 */

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

/** Calls of each generated session (about 1,400 in all, as the unseen sessions the issue measured). */
const SESSION_CALLS = [170, 320, 210, 280, 190, 250];

/** Claude Code's Read shows at most 2,000 lines, each cut at 2,000 characters; its Bash keeps 30,000 characters of output. */
const READ_MAX_LINES = 2_000;
const READ_LINE_CHARS = 2_000;
const BASH_MAX_CHARS = 30_000;
const GREP_MAX_LINES = 250;

const ran = new Map<string, { output: string; status: number }>();

/**
 * What a command printed (stdout and stderr together, as a terminal shows them) and its exit status. The tree
 * does not change while sessions are made, so a command run again prints the same: it runs once.
 */
function run(command: string): { output: string; status: number } {
  const known = ran.get(command);
  if (known) return known;
  const result = spawnSync("bash", ["-c", `${command} 2>&1`], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 30_000,
    maxBuffer: 16 * 1024 * 1024,
    // A fixed environment, so that the outputs do not depend on the shell that runs the bench.
    env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/tmp", LANG: "C" },
  });
  const output = result.stdout ?? "";
  const cut =
    output.length > BASH_MAX_CHARS
      ? `${output.slice(0, BASH_MAX_CHARS)}\n... [${output.length - BASH_MAX_CHARS} characters truncated]`
      : output;
  const outcome = { output: cut.trimEnd(), status: result.status ?? 1 };
  ran.set(command, outcome);
  return outcome;
}

/** A file as Claude Code's Read returns it: numbered lines (`cat -n`), long lines cut, at most 2,000 lines. */
function readNumbered(path: string): { text: string; isError: boolean } {
  try {
    const lines = readFileSync(join(ROOT, path), "utf8").split("\n");
    return {
      text: lines
        .slice(0, READ_MAX_LINES)
        .map((line, index) => `${String(index + 1).padStart(6)}\t${line.slice(0, READ_LINE_CHARS)}`)
        .join("\n"),
      isError: false,
    };
  } catch (error) {
    return { text: (error as Error).message, isError: true };
  }
}

function trackedFiles(): string[] {
  const listed = execFileSync("git", ["ls-files", "--", "packages", "apps"], {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  return listed
    .split("\n")
    .filter((path) => /\.(ts|tsx|md|json)$/.test(path) && !path.includes("__fixtures__"))
    .filter((path) => {
      try {
        return statSync(join(ROOT, path)).size < 120_000;
      } catch {
        return false;
      }
    })
    .sort();
}

/** The packages a task can be about: those with a src folder, in name order. */
function packageDirs(files: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const file of files) {
    const match = /^((?:packages\/providers|packages|apps)\/[^/]+)\/src\//.exec(file);
    if (match && match[1] !== "packages/providers") dirs.add(match[1]!);
  }
  return [...dirs].sort();
}

const TASKS = [
  (pkg: string) =>
    `In ${pkg}, the errors a caller gets when a limit is hit do not say what to do next. Go through the package, find every place that throws or returns such an error, and make each message name the setting or the call that fixes it. Keep the error codes as they are, run the checks after each change, and tell me at the end what you changed and what you left alone.`,
  (pkg: string) =>
    `Read ${pkg} and find where it repeats work on every call that it could do once (counting, parsing, sorting). Make those parts incremental without changing behaviour, run the checks as you go, and summarise what you found and what you changed.`,
  (pkg: string) =>
    `The README of ${pkg} has drifted from the code. Compare every exported function and option with what the README says, fix the README where it is wrong, and list anything the code does that the README does not mention. Run the checks before you finish.`,
  (pkg: string) =>
    `We are seeing odd behaviour in ${pkg} when inputs are empty or very large. Go through its entry points, find how each handles an empty input, a huge input and a malformed one, and fix the ones that misbehave. Run the checks after each fix.`,
];

const FOLLOW_UPS = [
  "Also check the tests of the files you touched: do they cover the cases you changed? Add what is missing.",
  "Before you go on: keep the public API as it is, no renamed exports please.",
  "Good. Now look at the places that call into this package from the other packages too, in case they depend on the old behaviour.",
  "One more thing: the error messages should end with what to do, not with what went wrong. Check the ones you changed.",
  "Please also run the broader checks again at the end and paste the tail of the output.",
];

const THOUGHTS_SHORT = [
  (subject: string) => `Let me look at ${subject}.`,
  (subject: string) => `Now ${subject}.`,
  (subject: string) => `I'll check ${subject} next.`,
  (subject: string) => `Checking ${subject}.`,
  (subject: string) => `Let me see how ${subject} fits in.`,
];

const THOUGHTS_LONG = [
  (subject: string, detail: string) =>
    `That output tells me more about the shape of the problem. ${detail} Before changing anything I want to see ${subject}, because if the same pattern is used there, a fix in one place would leave the other inconsistent and the checks would not catch it. I'll read it and then decide whether to change both together.`,
  (subject: string, detail: string) =>
    `So far: ${detail} The remaining question is whether ${subject} relies on the current behaviour. If it does, the change has to go through it as well; if not, I can keep the change local. Let me look.`,
  (subject: string, detail: string) =>
    `I think I understand the flow now. ${detail} The part I have not verified is ${subject}; it is where the value is produced, so any fix that only touches the consumer would be incomplete. Reading it next.`,
];

interface Pending {
  blocks: ContentBlock[];
  results: ContentBlock[];
  toolMs: number;
}

/** One generated session: a task in one package, `calls` model calls. */
function generateSession(index: number, files: readonly string[], calls: number): CorpusSession {
  const next = seededRandom(0x5eed + index * 7919);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const dirs = packageDirs(files);
  const pkg = dirs[(index * 5 + 3) % dirs.length]!;
  const own = files.filter((file) => file.startsWith(`${pkg}/`));
  const ownSource = own.filter((file) => file.endsWith(".ts"));
  const elsewhere = files.filter((file) => !file.startsWith(`${pkg}/`) && file.endsWith(".ts"));
  const read: string[] = [];
  const names = new Set<string>();
  const lastErrors: string[] = [];
  const messages: Message[] = [];
  let clock = Date.UTC(2026, 10, 2, 9, 0, 0) + index * 86_400_000;
  let ids = 0;
  const id = () => `gen${index}-${++ids}`;
  const stamp = () => new Date(clock).toISOString();
  const push = (role: Message["role"], content: ContentBlock[], extra: Partial<Message> = {}) =>
    messages.push({ id: id(), role, content, timestamp: stamp(), ...extra });

  // Commands the agent runs again and again (its checks), and the ones it runs once.
  const checks = [
    `node -e "import('./${pkg}/dist/index.js').then((m) => console.log(Object.keys(m).sort().join('\\n')))"`,
    `git grep -n -E "throw new|TODO|FIXME" -- ${pkg}/src | head -n 120`,
    `node ${pkg}/src/index.ts`,
    `git log --stat -n 4 -- ${pkg}`,
  ];
  const oneOffs = () => {
    const guess = pick(ownSource).replace(/\.ts$/, "-old.ts");
    return pick([
      `ls -1 ${pkg}/src`,
      `wc -l ${pkg}/src/*.ts`,
      `cat ${guess}`,
      `git log --oneline -n 25 -- ${pick(own)}`,
      `node -e "require('fs').readFileSync('${guess}')"`,
      `node -e "JSON.parse(require('fs').readFileSync('${pkg}/README.md', 'utf8'))"`,
      `node -e "import('@unforget/${pkg.split("/").pop()}/internal')"`,
      `wc -c ${pkg}/src/*.ts | sort -n | tail -n ${5 + Math.floor(next() * 20)}`,
      `cat ${pkg}/package.json`,
      `ls ${pkg}/src/missing-folder`,
      `node -e "const list = []; list.length = -1"`,
    ]);
  };

  const identifiers = (text: string) => {
    for (const match of text.matchAll(/export (?:async )?(?:function|const|interface|type|class) (\w+)/g))
      names.add(match[1]!);
  };
  const subjectOf = (path: string) => `\`${path.split("/").slice(-2).join("/")}\``;
  const thought = (subject: string) => {
    if (lastErrors.length > 0 && next() < 0.5) {
      const detail = `The last run failed with "${lastErrors.at(-1)!.slice(0, 120)}".`;
      return pick(THOUGHTS_LONG)(subject, detail);
    }
    if (next() < 0.2)
      return pick(THOUGHTS_LONG)(
        subject,
        `The code I read keeps its state in ${read.length} files and passes it through ${names.size} exported names.`,
      );
    return pick(THOUGHTS_SHORT)(subject);
  };

  const readCall = (path: string): Pending => {
    const useId = `toolu_${id()}`;
    const { text, isError } = readNumbered(path);
    if (!isError) {
      identifiers(text);
      if (!read.includes(path)) read.push(path);
    }
    return {
      blocks: [{ type: "tool_use", id: useId, name: "Read", input: { file_path: join(ROOT, path) } }],
      results: [
        { type: "tool_result", tool_use_id: useId, content: text, ...(isError ? { is_error: true } : {}) },
      ],
      toolMs: 200,
    };
  };
  const bashCall = (command: string): Pending => {
    const useId = `toolu_${id()}`;
    const { output, status } = run(command);
    const text = status === 0 ? output || "(no output)" : `Exit code ${status}\n${output}`;
    if (status !== 0) {
      const line = output.split("\n").find((candidate) => /error|Error|No such|cannot/.test(candidate));
      if (line) lastErrors.push(line.trim());
    }
    return {
      blocks: [{ type: "tool_use", id: useId, name: "Bash", input: { command } }],
      results: [
        {
          type: "tool_result",
          tool_use_id: useId,
          content: text,
          ...(status !== 0 ? { is_error: true } : {}),
        },
      ],
      toolMs: 1_000 + Math.floor(next() * 6_000),
    };
  };
  const grepCall = (): Pending => {
    const name = names.size > 0 ? pick([...names].sort()) : "export";
    const useId = `toolu_${id()}`;
    const { output } = run(`git grep -n -w ${name} -- packages apps | head -n ${GREP_MAX_LINES}`);
    return {
      blocks: [
        {
          type: "tool_use",
          id: useId,
          name: "Grep",
          input: { pattern: name, output_mode: "content", "-n": true },
        },
      ],
      results: [{ type: "tool_result", tool_use_id: useId, content: output || "No matches found" }],
      toolMs: 300,
    };
  };
  const globCall = (): Pending => {
    const useId = `toolu_${id()}`;
    const pattern = `${pkg}/src/**/*.ts`;
    const listed = ownSource.map((file) => join(ROOT, file)).join("\n");
    return {
      blocks: [{ type: "tool_use", id: useId, name: "Glob", input: { pattern } }],
      results: [{ type: "tool_result", tool_use_id: useId, content: listed || "No files found" }],
      toolMs: 100,
    };
  };
  const editCall = (): Pending => {
    const path = read.length > 0 ? pick(read) : pick(ownSource);
    const lines = readFileSync(join(ROOT, path), "utf8").split("\n");
    const at = Math.floor(next() * Math.max(1, lines.length - 12));
    const old = lines[at] ?? "";
    const snippet = lines
      .slice(at, at + 12)
      .map((line, offset) => `${String(at + offset + 1).padStart(6)}\t${line}`)
      .join("\n");
    const useId = `toolu_${id()}`;
    return {
      blocks: [
        {
          type: "tool_use",
          id: useId,
          name: "Edit",
          input: { file_path: join(ROOT, path), old_string: old, new_string: `${old} ` },
        },
      ],
      results: [
        {
          type: "tool_result",
          tool_use_id: useId,
          content: `The file ${join(ROOT, path)} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${snippet}`,
        },
      ],
      toolMs: 150,
    };
  };

  push("user", [{ type: "text", text: pick(TASKS)(pkg) }]);
  const longPauseAt = index % 2 === 0 ? Math.floor(calls * (0.35 + next() * 0.3)) : -1;
  let nextFollowUp = 60 + Math.floor(next() * 50);
  for (let call = 1; call <= calls; call++) {
    clock += 3_000 + Math.floor(next() * 22_000);
    // The one long pause: the user away while a permission prompt waits.
    if (call === longPauseAt) clock += 6 * 60_000 + Math.floor(next() * 540_000);
    if (call === calls || call === nextFollowUp) {
      // The end of a turn: a reply in words, then (unless the session ends) the user's next message.
      push("assistant", [
        {
          type: "text",
          text: `Here is where things stand. I read ${read.length} files in and around ${pkg} and ran the checks ${checks.length} ways. ${lastErrors.length > 0 ? `The last failure was: ${lastErrors.at(-1)!.slice(0, 200)}. ` : ""}The changes so far are small and local; the remaining items are listed above in the order I would take them.`,
        },
      ]);
      if (call === calls) break;
      clock += 30_000 + Math.floor(next() * 150_000);
      push("user", [{ type: "text", text: pick(FOLLOW_UPS) }]);
      nextFollowUp = call + 60 + Math.floor(next() * 50);
      continue;
    }
    const roll = next();
    let pending: Pending[];
    let subject: string;
    if (call <= 2) {
      pending = [globCall()];
      subject = `the files of ${pkg}`;
    } else if (roll < 0.26) {
      const unread = ownSource.filter((file) => !read.includes(file));
      const path = unread.length > 0 && next() < 0.8 ? pick(unread) : pick(elsewhere);
      pending = [readCall(path)];
      subject = subjectOf(path);
    } else if (roll < 0.3) {
      const unread = ownSource.filter((file) => !read.includes(file));
      const paths = [pick(unread.length > 1 ? unread : ownSource), pick(ownSource)].filter(
        (path, position, all) => all.indexOf(path) === position,
      );
      pending = paths.map(readCall);
      subject = paths.map(subjectOf).join(" and ");
    } else if (roll < 0.4 && read.length > 0) {
      const path = pick(read);
      pending = [readCall(path)];
      subject = `${subjectOf(path)} again, now that I know what to look for`;
    } else if (roll < 0.52) {
      pending = [grepCall()];
      subject = "where that name is used";
    } else if (roll < 0.55) {
      pending = [globCall()];
      subject = "the file list";
    } else if (roll < 0.68 && read.length > 0) {
      pending = [editCall()];
      subject = "the change";
    } else if (roll < 0.86) {
      pending = [bashCall(pick(checks))];
      subject = "the checks";
    } else {
      pending = [bashCall(oneOffs())];
      subject = "one more detail";
    }
    const responseId = `resp_${id()}`;
    push("assistant", [{ type: "text", text: thought(subject) }, ...pending.flatMap((part) => part.blocks)], {
      responseId,
      stopReason: "tool_use",
    });
    clock += pending.reduce((sum, part) => sum + part.toolMs, 0);
    push(
      "user",
      pending.flatMap((part) => part.results),
    );
  }
  return {
    name: `generated/${pkg.split("/").pop()} (one task, ${calls} calls)`,
    messages,
    system:
      "You are an agent that works in a TypeScript monorepo. Use the tools to read files, search, edit and run commands. Keep changes small, run the checks after each change, and report what you did.",
  };
}

/** The generated sessions, made from the checked-out tree (a few seconds of git and node commands). */
export function generateSessions(): CorpusSession[] {
  const files = trackedFiles();
  return SESSION_CALLS.map((calls, index) => generateSession(index, files, calls));
}
