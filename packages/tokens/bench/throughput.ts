// Throughput of a counting function, shared by `bench/run.ts` and `bench/scanner-speed.ts`.
import { quantile } from "./fitting.ts";

/** Median MB/s of `run` over `bytes` of UTF-8, repeated for at least `minimumMs` (and at least three times). */
export function throughput(run: () => void, bytes: number, minimumMs: number): number {
  run();
  const rates: number[] = [];
  const deadline = performance.now() + minimumMs;
  do {
    const start = performance.now();
    run();
    rates.push(bytes / 1e6 / ((performance.now() - start) / 1_000));
  } while (performance.now() < deadline || rates.length < 3);
  return quantile(rates, 0.5);
}
