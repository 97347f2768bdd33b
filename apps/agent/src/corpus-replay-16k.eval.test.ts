import { evaluationCorpus } from "@unforget/testing/corpus";
import { corpusArguments, describeCorpusReplay } from "../test-support/corpus-replay.ts";

describeCorpusReplay("16K", 16_000, await corpusArguments(evaluationCorpus()), 31);
