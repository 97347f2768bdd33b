import { sampleCorpus } from "@unforget/testing/corpus";
import { describeCorpusImport } from "./__fixtures__/corpus-checks.ts";

// The sample corpus: every format at least once; corpus-import.eval.test.ts runs the same on the third-party corpus.
describeCorpusImport(sampleCorpus(), {
  "claude-code": 2,
  "swe-agent": 2,
  "mini-swe-agent": 1,
  openhands: 1,
  "openhands-evaluation": 1,
});
