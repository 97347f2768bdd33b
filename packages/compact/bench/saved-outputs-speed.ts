// prepare() per step on a session whose tool is not reproducible (a name no list knows, nothing said), with a
// session folder: old results are saved (durably) before the cheap layers clear them. Two clocks: the prompt cache
// warm at every call (a response a second ago), and cold at every call (an hour), where the cheap layers may act
// on every step. Prints, per clock, the median and p95 wall time per step, the median CPU time, the median of the
// steps where a layer acted, which layers acted and how many outputs were saved. `npx tsx bench/saved-outputs-speed.ts`
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMessage, createUsage, type Message } from "@unforget/core";
import { estimateMessageTokens } from "@unforget/tokens";
import { createContextManager } from "../src/index.ts";

function round(index: number, tokens: number, time: number, contextTokens: number): Message[] {
  const lines: string[] = [];
  for (let line = 0; line * 9 < tokens; line++)
    lines.push(`  value_${index}_${line}(${(index * 31 + line) % 997});`);
  const id = `toolu_${index}`;
  return [
    createMessage("assistant", [{ type: "tool_use", id, name: "custom_Run", input: { n: index } }], {
      id: `a${index}`,
      timestamp: new Date(time).toISOString(),
      usage: createUsage({ inputTokens: contextTokens, outputTokens: 30 }),
      responseId: `resp_${index}`,
    }),
    createMessage("user", [{ type: "tool_result", tool_use_id: id, content: lines.join("\n") }], {
      id: `r${index}`,
      timestamp: new Date(time + 500).toISOString(),
    }),
  ];
}

export async function measureSavedOutputSteps(idleMs: number, startTokens = 60_000, steps = 200) {
  const sessionDir = await mkdtemp(join(tmpdir(), "unforget-saved-bench-"));
  try {
    const history: Message[] = [
      createMessage("user", "Run the checks.", { id: "u0", timestamp: new Date(0).toISOString() }),
    ];
    let total = 0;
    let index = 0;
    while (total < startTokens) {
      const pair = round(index, 1_500, index * 10_000, total);
      index++;
      for (const message of pair) total += estimateMessageTokens(message);
      history.push(...pair);
    }
    const manager = createContextManager({
      model: "bench",
      limits: { contextWindow: 80_000, maxOutputTokens: 8_000 },
      sessionDir,
      clock: () => Date.parse(history[history.length - 1]!.timestamp) + idleMs,
    });
    await manager.prepare(history);
    const times: number[] = [];
    const cpu: number[] = [];
    const acted = new Map<string, number>();
    const acting: number[] = [];
    for (let step = 0; step < steps; step++) {
      history.push(...round(index++, 300, index * 10_000, manager.status().tokens));
      const started = process.hrtime.bigint();
      const startedCpu = process.cpuUsage();
      const result = await manager.prepare(history);
      for (const action of result.actions) acted.set(action.layer, (acted.get(action.layer) ?? 0) + 1);
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      const used = process.cpuUsage(startedCpu);
      if (result.actions.length > 0) acting.push(times.at(-1)!);
      cpu.push((used.user + used.system) / 1e3);
    }
    const sorted = [...times].sort((a, b) => a - b);
    const sortedCpu = [...cpu].sort((a, b) => a - b);
    const saved = (await readdir(join(sessionDir, "tool-results")).catch(() => [])).length;
    return {
      median: sorted[Math.floor(sorted.length / 2)]!,
      p95: sorted[Math.floor(sorted.length * 0.95)]!,
      cpuMedian: sortedCpu[Math.floor(sortedCpu.length / 2)]!,
      actingMedian: [...acting].sort((a, b) => a - b)[Math.floor(acting.length / 2)],
      saved,
      acted: Object.fromEntries(acted),
      tokens: manager.status().tokens,
    };
  } finally {
    await rm(sessionDir, { recursive: true, force: true, maxRetries: 5 });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [name, idleMs] of [
    ["warm", 1_000],
    ["cold", 3_600_000],
  ] as const)
    console.log(name, JSON.stringify(await measureSavedOutputSteps(idleMs)));
}
