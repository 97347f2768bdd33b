import { join } from "node:path";
import { evaluationCorpus } from "@unforget/testing/corpus";
import { describeModelSummaries } from "../test-support/model-summaries.ts";

// A run of the corpus that needs summaries at 16K (its tool outputs are short, so the cheap layers cannot help
// enough); model-summarizer.test.ts runs the same on a session it writes.
describeModelSummaries(`${join(evaluationCorpus().dir, "openhands", "resolver_mock_output.jsonl")}#2`);
