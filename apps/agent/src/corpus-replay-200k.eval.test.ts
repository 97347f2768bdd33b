import { evaluationCorpus } from "@unforget/testing/corpus";
import { corpusArguments, describeCorpusReplay } from "../test-support/corpus-replay.ts";

describeCorpusReplay("200K", 200_000, await corpusArguments(evaluationCorpus()), 31);
