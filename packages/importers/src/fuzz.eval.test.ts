import { evaluationCorpus } from "@unforget/testing/corpus";
import { describeImporterFuzz } from "./__fixtures__/importer-fuzz.ts";

// The third-party corpus's sessions, mutated (`UNFORGET_FUZZ_RUNS=30 pnpm eval` hunts thirty times longer).
describeImporterFuzz(evaluationCorpus());
