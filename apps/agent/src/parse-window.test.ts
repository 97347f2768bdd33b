import { describe, expect, it } from "vitest";
import { formatWindow, parseWindow } from "./parse-window.ts";
import { OptionValueError } from "./replay/replay-errors.ts";

describe("parseWindow", () => {
  it("reads plain numbers and K / M suffixes", () => {
    expect(parseWindow("16000")).toBe(16_000);
    expect(parseWindow("16_000")).toBe(16_000);
    expect(parseWindow("16K")).toBe(16_000);
    expect(parseWindow("32k")).toBe(32_000);
    expect(parseWindow("1M")).toBe(1_000_000);
    expect(parseWindow("1.5M")).toBe(1_500_000);
  });

  it("refuses what is not a window, naming the accepted forms", () => {
    for (const value of ["", "abc", "16KB", "-16K", "1e6"]) {
      expect(() => parseWindow(value)).toThrow(OptionValueError);
    }
    expect(() => parseWindow("abc")).toThrow(/16000, 16K or 1M/);
    expect(() => parseWindow("1K")).toThrow(/from 8,000/);
  });

  it("formats windows the way they are written", () => {
    expect(formatWindow(16_000)).toBe("16K");
    expect(formatWindow(1_000_000)).toBe("1M");
    expect(formatWindow(1_500_000)).toBe("1.5M");
    expect(formatWindow(16_500)).toBe("16,500");
  });
});
