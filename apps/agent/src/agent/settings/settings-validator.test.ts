import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GENERATED_VALIDATOR, settingsValidatorSource } from "../../../scripts/settings-validator.ts";

describe("the precompiled settings validator", () => {
  it("is generated from the current schema (run `pnpm generate` in apps/agent when this fails)", () => {
    expect(readFileSync(GENERATED_VALIDATOR, "utf8")).toBe(settingsValidatorSource());
  });
});
