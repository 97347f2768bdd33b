// The history benchmarks: recall after many compactions, and a very long session.
// Both drive compact's ContextManager the way the session does — every message written to the transcript when it
// is appended, the manager's own entries through a sink that skips messages already written, prepare() before each
// model call — with the offline (extractive) summariser, so no provider is needed and the numbers are repeatable.
// Run: `pnpm bench` in packages/history (`-- recall` or `-- long [compactions]` for one part).
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createContextManager } from "@unforget/compact";
import { createMessage, type Message } from "@unforget/core";
import { type TranscriptEntry, TranscriptWriter } from "@unforget/transcript";
import { openHistory } from "../src/index.ts";

const WORDS = ["parse", "token", "cache", "module", "error", "config", "build", "result", "index", "stream"];

/** A deterministic pseudo-random stream (no Math.random: the same run every time). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state;
  };
}

/** Code-like filler of about `tokens` tokens, with none of the fact keys' shapes in it. */
function filler(next: () => number, tokens: number): string {
  const lines: string[] = [];
  for (let line = 0; line * 10 < tokens; line++) {
    const value = next();
    lines.push(
      `  ${WORDS[value % 10]}_${line}(${WORDS[(value >> 4) % 10]}); // ${WORDS[(value >> 8) % 10]} ${value % 97}`,
    );
  }
  return lines.join("\n");
}

interface Driver {
  path: string;
  dir: string;
  conversation: Message[];
  append(message: Message): Promise<void>;
  prepare(): Promise<Message[]>;
  compactions(): number;
  close(): Promise<void>;
}

/** A session as the agent loop runs it: the manager at `window` tokens, the transcript on disk. */
async function openDriver(window: number): Promise<Driver> {
  // The results are kept (never cleared): only summaries free room, so the session compacts as often as it can.
  const dir = await mkdtemp(join(tmpdir(), "unforget-history-bench-"));
  const path = join(dir, "bench.jsonl");
  const writer = await TranscriptWriter.open(path, { sessionId: "bench", fsync: "never" });
  const written = new Set<string>();
  const manager = createContextManager({
    model: "bench-model",
    limits: { contextWindow: window, maxOutputTokens: Math.floor(window / 8) },
    sessionDir: join(dir, "bench"),
    resultRetention: () => "keep",
    transcript: {
      append: (entries: readonly TranscriptEntry[]) => {
        const fresh = entries.filter((entry) => entry.type !== "message" || !written.has(entry.id));
        for (const entry of fresh) if (entry.type === "message") written.add(entry.id);
        return fresh.length === 0 ? undefined : writer.append(fresh);
      },
    },
  });
  const conversation: Message[] = [];
  return {
    path,
    dir,
    conversation,
    async append(message) {
      conversation.push(message);
      written.add(message.id);
      await writer.appendMessage(message);
    },
    async prepare() {
      return (await manager.prepare(conversation)).projected;
    },
    compactions: () => manager.status().compactions,
    async close() {
      await writer.close();
    },
  };
}

let ids = 0;
/** One model call and its tool round: a short note and a call, the result holding `fact` amid filler. */
async function toolRound(
  driver: Driver,
  next: () => number,
  text: string,
  tokens: number,
  fact = "",
): Promise<string> {
  const id = `toolu_${++ids}`;
  const tool = ids % 2 === 0 ? "Bash" : "Read";
  const input = tool === "Bash" ? { command: `inspect part ${ids}` } : { file_path: `src/part${ids}.ts` };
  await driver.append(
    createMessage("assistant", [
      { type: "text", text },
      { type: "tool_use", id, name: tool, input },
    ]),
  );
  const body = filler(next, tokens);
  const cut = body.indexOf("\n", Math.floor(body.length / 2));
  const output = fact === "" ? body : `${body.slice(0, cut)}\n${fact}${body.slice(cut)}`;
  await driver.append(createMessage("user", [{ type: "tool_result", tool_use_id: id, content: output }]));
  await driver.prepare();
  return id;
}

async function recall(): Promise<void> {
  const facts = 240;
  const driver = await openDriver(32_000);
  const next = random(7);
  const planted: { key: string; value: string; id: string; output: string }[] = [];
  for (let index = 0; index < facts; index++) {
    if (index % 8 === 0) {
      await driver.append(createMessage("user", `Go on with part ${index / 8 + 1} of the audit.`));
      await driver.prepare();
    }
    const key = `k${index.toString(36)}q${(next() % 46656).toString(36)}`;
    const value = `v${next().toString(16)}`;
    const id = await toolRound(
      driver,
      next,
      `Looking at part ${index}. ${filler(next, 300)}`,
      1_600,
      `The setting ${key} is ${value}.`,
    );
    planted.push({ key, value, id, output: "" });
  }
  const projected = JSON.stringify(await driver.prepare());
  await driver.close();
  const history = await openHistory({ transcriptPath: driver.path });
  let top3 = 0;
  let exact = 0;
  let inContext = 0;
  for (const fact of planted) {
    if (projected.includes(fact.value)) inContext++;
    const hits = await history.search(fact.key, { limit: 3 });
    const hit = hits.find((candidate) => candidate.id === fact.id);
    if (hit === undefined) continue;
    top3++;
    let text = "";
    let offset: number | undefined = 0;
    while (offset !== undefined) {
      const page = await history.read(hit.id, { offset });
      text += page.text;
      offset = page.nextOffset;
    }
    const original = driver.conversation
      .flatMap((message) => message.content)
      .find((block) => block.type === "tool_result" && block.tool_use_id === fact.id);
    if (original?.type === "tool_result" && original.content === text && text.includes(fact.value)) exact++;
  }
  const size = (await stat(driver.path)).size;
  console.log(
    `## recall: ${facts} facts at a 32,000-token window, ${driver.compactions()} compactions (offline summariser)`,
  );
  console.log(
    `| facts | compactions | in top 3 of one search | read back byte-exact | still in the context | transcript |`,
  );
  console.log(
    `| ${facts} | ${driver.compactions()} | ${top3} (${pct(top3, facts)}) | ${exact} (${pct(exact, facts)}) | ${inContext} (${pct(inContext, facts)}) | ${mb(size)} |`,
  );
  await rm(driver.dir, { recursive: true, force: true });
}

async function long(target: number): Promise<void> {
  const window = 16_000;
  const driver = await openDriver(window);
  const next = random(11);
  const marks = [10, 100, 1_000, 10_000].filter((mark) => mark <= target);
  const rows: string[] = [];
  let turns = 0;
  let since = { turns: 0, time: performance.now() };
  let keys: string[] = [];
  while (driver.compactions() < target) {
    if (turns % 6 === 0) await driver.append(createMessage("user", `Next step ${turns / 6 + 1}.`));
    const key = `x${turns.toString(36)}z`;
    keys.push(key);
    const before = driver.compactions();
    await toolRound(driver, next, `Step ${turns}. ${filler(next, 200)}`, 1_200, `The marker ${key} is set.`);
    turns++;
    since.turns++;
    if (driver.compactions() > before && marks.includes(driver.compactions())) {
      const perTurn = (performance.now() - since.time) / since.turns;
      (globalThis as { gc?: () => void }).gc?.();
      const heap = process.memoryUsage().heapUsed;
      const size = (await stat(driver.path)).size;
      const started = performance.now();
      // From scratch (any index an earlier row saved is removed first), then again from the index it saved.
      await rm(join(driver.dir, "bench", "history-index.json"), { force: true });
      await openHistory({ transcriptPath: driver.path, sessionDir: join(driver.dir, "bench") });
      const opened = performance.now() - started;
      const reopenStart = performance.now();
      const history = await openHistory({
        transcriptPath: driver.path,
        sessionDir: join(driver.dir, "bench"),
      });
      const reopened = performance.now() - reopenStart;
      const sample = keys.filter((_, index) => index % Math.max(1, Math.floor(keys.length / 50)) === 0);
      const searchStart = performance.now();
      let found = 0;
      for (const probe of sample) if ((await history.search(probe, { limit: 3 }))[0] !== undefined) found++;
      const search = (performance.now() - searchStart) / sample.length;
      rows.push(
        `| ${driver.compactions()} | ${turns} | ${perTurn.toFixed(2)} ms | ${mb(heap)} | ${mb(size)} | ${history.size} | ${opened.toFixed(0)} ms | ${reopened.toFixed(0)} ms (${history.opened.loaded} loaded) | ${search.toFixed(2)} ms (${found}/${sample.length} found) |`,
      );
      since = { turns: 0, time: performance.now() };
    }
  }
  await driver.close();
  console.log(
    `## a very long session: ${target} compactions at a ${window.toLocaleString("en-US")}-token window (offline summariser)`,
  );
  console.log(
    "| compactions | turns | time per turn (since the previous row) | heap used | transcript | items | index built from scratch (and saved) | opened again from the saved index | one search |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const row of rows) console.log(row);
  await rm(driver.dir, { recursive: true, force: true });
  keys = [];
}

function pct(part: number, whole: number): string {
  return `${((part / whole) * 100).toFixed(1)} %`;
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

const [part, count] = process.argv.slice(2);
if (part === undefined || part === "recall") await recall();
if (part === undefined || part === "long") await long(Number(count ?? 1_000));
