import { evaluationCorpus } from "@unforget/testing/corpus";
import {
  describeCorpusImport,
  describeFormatRecognition,
  describeObservationsAsUserText,
} from "./__fixtures__/corpus-checks.ts";

const corpus = evaluationCorpus();
// The sessions of every format the corpus README lists.
describeCorpusImport(corpus, {
  "claude-code": 7,
  "swe-agent": 22,
  "mini-swe-agent": 2,
  openhands: 4,
  "openhands-evaluation": 2,
});
describeFormatRecognition(corpus);
describeObservationsAsUserText(corpus);
