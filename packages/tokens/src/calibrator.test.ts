import { describe, expect, it } from "vitest";
import { createCalibrator } from "./calibrator.ts";

const key = { providerId: "anthropic", model: "claude-opus-4-6" };

describe("createCalibrator", () => {
  it("applies no correction until it has enough observations", () => {
    const calibrator = createCalibrator();
    calibrator.observe(key, 10_000, 12_000);
    calibrator.observe(key, 10_000, 12_000);
    expect(calibrator.factor(key)).toBe(1);
    calibrator.observe(key, 10_000, 12_000);
    expect(calibrator.factor(key)).toBeCloseTo(1.2, 6);
    expect(calibrator.correct(key, 1_000)).toBe(1_200);
  });

  it("converges on the live tokenizer's ratio and ignores outliers", () => {
    const calibrator = createCalibrator();
    for (let turn = 0; turn < 20; turn++)
      calibrator.observe(key, 10_000 + turn * 100, (10_000 + turn * 100) * 1.3);
    calibrator.observe(key, 10_000, 200_000);
    calibrator.observe(key, 10_000, 1);
    expect(calibrator.factor(key)).toBeCloseTo(1.3, 6);
  });

  it("is bounded, keeps keys apart and ignores unusable pairs", () => {
    const calibrator = createCalibrator({ minFactor: 0.8, maxFactor: 1.5, minSamples: 1 });
    calibrator.observe(key, 1_000, 100_000);
    expect(calibrator.factor(key)).toBe(1.5);
    expect(calibrator.factor({ ...key, model: "other" })).toBe(1);
    calibrator.observe(key, Number.NaN, 5);
    calibrator.observe(key, 50, 5_000);
    calibrator.observe(key, 1_000, 0);
    expect(calibrator.sampleCount(key)).toBe(1);
  });

  it("forgets old observations beyond its window", () => {
    const calibrator = createCalibrator({ windowSize: 4, minSamples: 1 });
    for (let turn = 0; turn < 4; turn++) calibrator.observe(key, 1_000, 1_500);
    for (let turn = 0; turn < 4; turn++) calibrator.observe(key, 1_000, 1_100);
    expect(calibrator.factor(key)).toBeCloseTo(1.1, 6);
  });
});
