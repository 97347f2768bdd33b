import { readFileSync } from "node:fs";
import { join } from "node:path";
import { evaluationCorpus } from "@unforget/testing/corpus";
import { describe, expect, it } from "vitest";
import { listFiles, named, optimised, reference } from "./__fixtures__/reference-text-features.ts";

const { dir } = evaluationCorpus();

describe("collectTextFeatures (optimised) against the reference scanner, on the corpus", () => {
  it("gives the same counts on every corpus text file", () => {
    const files = listFiles(join(dir, "text"));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      expect(named(optimised(text)), file).toEqual(named(reference(text)));
    }
  });
});
