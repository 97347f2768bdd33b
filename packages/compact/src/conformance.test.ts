import { sampleCorpus } from "@unforget/testing/corpus";
import { describeConformance } from "./__fixtures__/conformance.ts";

// Generated conversations, the guarantees each built for, and the sample corpus's sessions;
// conformance.eval.test.ts replays every session of the third-party corpus through the same contracts.
describeConformance(sampleCorpus());
