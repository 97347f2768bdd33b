import { evaluationCorpus } from "@unforget/testing/corpus";
import { corpusArguments, describeCorpusReplay } from "../test-support/corpus-replay.ts";

describeCorpusReplay("32K", 32_000, await corpusArguments(evaluationCorpus()), 31);
