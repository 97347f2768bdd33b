import { evaluationCorpus } from "@unforget/testing/corpus";
import { describeConformance } from "./__fixtures__/conformance.ts";

// Every session of the third-party corpus through every layer's contract and the whole ladder's (the generated
// conversations and the guarantees run in the unit suite, conformance.test.ts).
describeConformance(evaluationCorpus(), { recordedOnly: true });
