import { sampleCorpus } from "@unforget/testing/corpus";
import { describeImporterFuzz } from "./__fixtures__/importer-fuzz.ts";

// The sample corpus's sessions, mutated; fuzz.eval.test.ts runs the same on the third-party corpus.
describeImporterFuzz(sampleCorpus());
