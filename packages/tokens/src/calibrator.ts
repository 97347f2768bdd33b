export interface CalibratorOptions {
  /** Smallest correction factor ever applied; default 0.5. */
  minFactor?: number;
  /** Largest correction factor ever applied; default 2. */
  maxFactor?: number;
  /** Observations remembered per key (the most recent win); default 32. */
  windowSize?: number;
  /** Observations needed before any correction is applied; default 3. */
  minSamples?: number;
  /** Estimates below this many tokens are ignored (too noisy to learn from); default 200. */
  minEstimateTokens?: number;
}

export interface CalibrationKey {
  providerId: string;
  model: string;
}

export interface Calibrator {
  /** Called after a response with the unpadded pre-flight estimate and the input the provider reported. */
  observe(key: CalibrationKey, estimatedTokens: number, reportedTokens: number): void;
  /** Current correction for a key: the median observed ratio, clamped to [minFactor, maxFactor]; 1 until learned. */
  factor(key: CalibrationKey): number;
  /** `estimatedTokens × factor(key)`, rounded up. */
  correct(key: CalibrationKey, estimatedTokens: number): number;
  /** Observations currently remembered for a key. */
  sampleCount(key: CalibrationKey): number;
}

/**
 * Learns how far the heuristic is from the live model's tokenizer, per provider and model, from
 * (estimate, reported usage) pairs. Robust: ratios are clamped before they are stored and the factor is the
 * median of a sliding window, so a few wild observations (a cache edit, a mis-attributed usage) do not move it.
 */
export function createCalibrator(options: CalibratorOptions = {}): Calibrator {
  const minFactor = options.minFactor ?? 0.5;
  const maxFactor = options.maxFactor ?? 2;
  const windowSize = Math.max(1, options.windowSize ?? 32);
  const minSamples = Math.max(1, options.minSamples ?? 3);
  const minEstimate = options.minEstimateTokens ?? 200;
  const windows = new Map<string, number[]>();
  const factors = new Map<string, number>();

  const keyOf = (key: CalibrationKey) => `${key.providerId}\u0000${key.model}`;

  const factor = (key: CalibrationKey) => factors.get(keyOf(key)) ?? 1;

  return {
    observe(key, estimatedTokens, reportedTokens) {
      if (!Number.isFinite(estimatedTokens) || !Number.isFinite(reportedTokens)) return;
      if (estimatedTokens < minEstimate || reportedTokens <= 0) return;
      const id = keyOf(key);
      const window = windows.get(id) ?? [];
      window.push(Math.min(maxFactor, Math.max(minFactor, reportedTokens / estimatedTokens)));
      if (window.length > windowSize) window.shift();
      windows.set(id, window);
      if (window.length < minSamples) return;
      const sorted = [...window].sort((a, b) => a - b);
      const middle = sorted.length >> 1;
      const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
      factors.set(id, median);
    },
    factor,
    correct(key, estimatedTokens) {
      return Math.ceil(estimatedTokens * factor(key));
    },
    sampleCount(key) {
      return windows.get(keyOf(key))?.length ?? 0;
    },
  };
}
