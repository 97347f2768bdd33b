import { sampleCorpus } from "@unforget/testing/corpus";
import { corpusArguments, describeCorpusReplay } from "../test-support/corpus-replay.ts";

// The sample corpus at every window the evaluation suite replays the third-party corpus at
// (corpus-replay-*.eval.test.ts).
const sessions = await corpusArguments(sampleCorpus());
describeCorpusReplay("16K", 16_000, sessions, 9);
describeCorpusReplay("32K", 32_000, sessions, 9);
describeCorpusReplay("200K", 200_000, sessions, 9);
