/** One step of the scripted session: the assistant says something and calls a tool. */
export interface DemoStep {
  /** What the assistant says before the call. */
  say: string;
  tool: "Read" | "Bash" | "Grep" | "Edit" | "Write" | "TodoWrite";
  input: Record<string, unknown>;
}

/** One user turn and the work that follows it. */
export interface DemoPhase {
  user: string;
  /** Minutes the user was away before writing (an idle gap lets time-based clearing act). */
  idleMinutes?: number;
  steps: DemoStep[];
  /** The assistant's closing words for the turn. */
  reply: string;
}

/** The repository's source files the script reads, found when the demo is generated. */
export interface DemoSources {
  /** A file's content (the script writes real code, copied from the repository). */
  content(path: string): string;
  /** Non-test `.ts` files of a package's `src`, sorted, relative to the repository root. */
  sources(packageName: string): string[];
  /** Test files of a package's `src`, sorted. */
  tests(packageName: string): string[];
}

const read = (path: string, say: string): DemoStep => ({ say, tool: "Read", input: { file_path: path } });
const bash = (command: string, say: string): DemoStep => ({ say, tool: "Bash", input: { command } });
const grep = (pattern: string, path: string, say: string): DemoStep => ({
  say,
  tool: "Grep",
  input: { pattern, path, output_mode: "content", "-n": true },
});

function readAll(paths: readonly string[], topic: string): DemoStep[] {
  return paths.map((path, index) =>
    read(path, index === 0 ? `Reading the ${topic} sources, starting with ${path}.` : `Next: ${path}.`),
  );
}

/** The opening turn: a map of the packages, and the rule not to edit dist/ or node_modules/. */
function packageMapPhase(): DemoPhase {
  return {
    user: "I'm new to this repository. Give me a map of the packages first: what each one does and how they depend on each other. Rule for the whole session: never edit anything under dist/ or node_modules/.",
    steps: [
      bash("ls packages apps tooling", "Let me look at the layout."),
      read("package.json", "The root manifest shows the scripts."),
      read("pnpm-workspace.yaml", "And the workspace with its catalog."),
      bash(
        "find packages -name package.json -not -path '*/node_modules/*' | sort",
        "Listing the package manifests.",
      ),
      read("packages/core/package.json", "Core first: everything depends on it."),
      read("packages/tokens/package.json", "Then tokens."),
      read("packages/compact/package.json", "And compact, which builds on both."),
      read("AGENTS.md", "The contributor notes describe the dependency rule."),
    ],
    reply:
      "Core holds the message model, transcripts, tool-pair invariants and the provider contract; tokens counts and sets thresholds; hooks is the plugin bus; compact runs the ladder; the providers wrap the SDKs. Arrows point one way, towards core.",
  };
}

/** Reading core: the message model and the transcript. */
function messageModelPhase(repository: DemoSources): DemoPhase {
  return {
    user: "Now explain the message model and the transcript: how does a session get written and read back?",
    steps: [
      ...readAll(repository.sources("core"), "core"),
      grep("export function", "packages/core/src", "Which functions does core export?"),
    ],
    reply:
      "Messages are Anthropic-style content blocks. Transcripts are append-only JSONL; what is sent is a projection of the entries (boundaries, summaries, layer edits), so a resumed session sends the same bytes.",
  };
}

/** Reading tokens: counting before a call and the thresholds. */
function tokensPhase(repository: DemoSources): DemoPhase {
  return {
    user: "How are tokens counted before a call, and where are the thresholds decided?",
    steps: [
      ...readAll(repository.sources("tokens"), "tokens"),
      grep("autoCompactThreshold", "packages", "Where is the auto-compact threshold used?"),
      bash(
        "find packages/tokens/src -name '*.ts' | sort | xargs wc -l | sort -n | tail -5",
        "Which token files are the largest?",
      ),
    ],
    reply:
      "The count is anchored on the last usage the provider reported plus an estimate of what was added since; the thresholds scale with the window and leave room for the output.",
  };
}

/** After an idle lunch break: the compaction ladder, layer by layer. */
function ladderPhase(repository: DemoSources): DemoPhase {
  return {
    user: "Back from lunch. Walk me through the compaction ladder, layer by layer, reading the code.",
    idleMinutes: 75,
    steps: [
      {
        say: "I'll track the layers as I go.",
        tool: "TodoWrite",
        input: {
          todos: [
            {
              content: "Read the cheap layers",
              status: "in_progress",
              activeForm: "Reading the cheap layers",
            },
            {
              content: "Read the summary paths",
              status: "pending",
              activeForm: "Reading the summary paths",
            },
            {
              content: "Read the ContextManager",
              status: "pending",
              activeForm: "Reading the ContextManager",
            },
          ],
        },
      },
      ...readAll(repository.sources("compact"), "compact"),
      grep("runLayer\\(", "packages/compact/src", "Where does the manager run each layer?"),
    ],
    reply:
      "Cheap layers run first (tool-result budget, microcompact, collapse); only when the context still passes the threshold does a summary run, by the model or the extractive summariser, with a thrash guard and a circuit breaker per layer.",
  };
}

/** Reading hooks: how plugins join compaction. */
function hooksPhase(repository: DemoSources): DemoPhase {
  return {
    user: "How do plugins hook into compaction? Show me the hook bus.",
    steps: [...readAll(repository.sources("hooks"), "hooks")],
    reply:
      "Hooks are tapable hooks created per session: waterfall hooks transform (PreCompact instructions), bail hooks veto, parallel hooks observe; a failing observer is reported, never fatal.",
  };
}

/** Reading the tests of compact, tokens, core and hooks. */
function testsPhase(repository: DemoSources): DemoPhase {
  return {
    user: "Let's check the tests of compact and tokens: what do they prove?",
    steps: [
      ...readAll(repository.tests("compact"), "compact test"),
      ...readAll(repository.tests("tokens"), "tokens test"),
      ...readAll(repository.tests("core"), "core test"),
      ...readAll(repository.tests("hooks"), "hooks test"),
      bash(
        "find packages/compact/src packages/tokens/src -name '*.test.ts' | sort | xargs grep -c 'it('",
        "Counting the test cases.",
      ),
    ],
    reply:
      "The conformance suites replay every corpus session at 16K, 32K and 200K and check pairs, alternation, the user's messages and the projection; property tests cover generated conversations.",
  };
}

/** A large write turn: a copy of every compact and tokens source file under src/layers/. */
function layoutCopyPhase(repository: DemoSources): DemoPhase {
  return {
    user: "Prototype a new layout for compact: put a copy of every compact and tokens source file under src/layers/ of its package so we can compare. Keep the originals for now.",
    steps: [...repository.sources("compact"), ...repository.sources("tokens")].map((path, index) => ({
      say: index === 0 ? "Writing the copies, one file at a time." : `Copying ${path}.`,
      tool: "Write" as const,
      input: {
        file_path: path.replace("/src/", "/src/layers/"),
        content: repository.content(path),
      },
    })),
    reply: "Every file now has a copy under src/layers/; the originals are unchanged.",
  };
}

/** A small edit: a note in the compact README. */
function readmeNotePhase(): DemoPhase {
  return {
    user: "Add a short note to the compact README on when each layer runs. Remember the rule about dist/.",
    steps: [
      read("packages/compact/README.md", "Reading the README before I edit it."),
      bash("grep -n '^## ' packages/compact/README.md", "Finding the section headings."),
      {
        say: "Adding the note after the ladder table.",
        tool: "Edit",
        input: {
          file_path: "packages/compact/README.md",
          old_string: "## Options (`createContextManager`)",
          new_string:
            "Cheap layers act from 60-85 % of the threshold; summaries only at the threshold.\n\n## Options (`createContextManager`)",
        },
      },
    ],
    reply: "Done: the note is in packages/compact/README.md; nothing under dist/ was touched.",
  };
}

/** The last turn: the providers and how a deployment switches between them. */
function providersPhase(repository: DemoSources): DemoPhase {
  return {
    user: "Last thing: read the providers and summarise how a deployment switches between Anthropic, Bedrock and Vertex.",
    steps: [
      ...readAll(repository.sources("providers"), "providers"),
      ...readAll(repository.sources("provider-anthropic"), "Anthropic provider"),
      ...readAll(repository.sources("provider-bedrock"), "Bedrock provider"),
      ...readAll(repository.sources("provider-vertex"), "Vertex provider"),
    ],
    reply:
      "createProviderFromEnv picks the provider from UNFORGET_PROVIDER or the credentials present; each provider maps its SDK's requests, streams, usage and errors to the one contract, so nothing else changes.",
  };
}

/**
 * A long coding session over this repository: a newcomer asks the agent to learn how Unforget decides when
 * and how to compact, then to tighten a few things. Every tool output is real (files read, commands run when
 * the demo is generated), so the session is as large and as varied as a real one.
 */
export function demoScript(repository: DemoSources): DemoPhase[] {
  return [
    packageMapPhase(),
    messageModelPhase(repository),
    tokensPhase(repository),
    ladderPhase(repository),
    hooksPhase(repository),
    testsPhase(repository),
    layoutCopyPhase(repository),
    readmeNotePhase(),
    providersPhase(repository),
  ];
}
