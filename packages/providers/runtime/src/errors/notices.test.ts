import { afterEach, describe, expect, it, vi } from "vitest";
import { noticeDeprecatedModel, noticeOnce, withSdkWarnings } from "./notices.ts";

afterEach(() => {
  vi.restoreAllMocks();
  process.noDeprecation = false;
});

describe("notices", () => {
  it("names a deprecated model once per process, in one line, with when it retires and what to use", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    expect(noticeDeprecatedModel("claude-3-opus-20240229")).toBe(true);
    expect(noticeDeprecatedModel("claude-3-opus-latest")).toBe(false);
    expect(noticeDeprecatedModel("claude-sonnet-4-6")).toBe(false);
    expect(warn.mock.calls).toEqual([
      [
        "unforget: the model claude-3-opus-20240229 is deprecated and reaches its end of life on 2026-01-05; use claude-opus-4-6 instead (https://docs.anthropic.com/en/docs/resources/model-deprecations).",
      ],
    ]);
  });

  it("takes the SDK's date for a model core's table does not know, and shows nothing under --no-deprecation", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    process.noDeprecation = true;
    expect(noticeOnce("quiet", "not shown")).toBe(false);
    process.noDeprecation = false;
    expect(noticeDeprecatedModel("claude-imaginary-1", "March 1st, 2027")).toBe(true);
    expect(noticeOnce("two\nlines", "first\n  second")).toBe(true);
    expect(warn.mock.calls.map(([line]) => line)).toEqual([
      "unforget: the model claude-imaginary-1 is deprecated and reaches its end of life on March 1st, 2027 (https://docs.anthropic.com/en/docs/resources/model-deprecations).",
      "first second",
    ]);
  });
});

describe("withSdkWarnings", () => {
  it("shows an SDK's deprecation once per process in one line, and passes any other warning through", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const sdkCall = () => {
      console.warn("The Frobnicate API is deprecated.\nPlease migrate.");
      console.warn("rate limited, retrying");
      return 42;
    };
    expect(withSdkWarnings("the Frob SDK", sdkCall)).toBe(42);
    expect(withSdkWarnings("the Frob SDK", sdkCall)).toBe(42);
    expect(warn.mock.calls.map(([line]) => line)).toEqual([
      "unforget: the Frob SDK says: The Frobnicate API is deprecated. Please migrate.",
      "rate limited, retrying",
      "rate limited, retrying",
    ]);
    // Restored after the call, even when it throws.
    expect(() =>
      withSdkWarnings("the Frob SDK", () => {
        throw new Error("boom");
      }),
    ).toThrow("boom");
    console.warn("after");
    expect(warn.mock.calls.at(-1)).toEqual(["after"]);
  });
});
