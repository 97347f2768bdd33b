// The reference BPE tokenizers the estimator is fitted and benchmarked against (dev dependencies only).
import { getTokenizer } from "@anthropic-ai/tokenizer";
import { getEncoding } from "js-tiktoken";

export interface ReferenceTokenizer {
  /** Profile name of the estimator fitted against this tokenizer. */
  name: "claude" | "o200k" | "cl100k";
  label: string;
  count(text: string): number;
}

export function loadReferenceTokenizers(): ReferenceTokenizer[] {
  const o200k = getEncoding("o200k_base");
  const cl100k = getEncoding("cl100k_base");
  // Created once: the package's own countTokens() rebuilds the whole tokenizer on every call.
  const claude = getTokenizer();
  return [
    {
      name: "claude",
      label: "@anthropic-ai/tokenizer (legacy Claude)",
      count: (text) => claude.encode(text.normalize("NFKC"), "all").length,
    },
    { name: "o200k", label: "js-tiktoken o200k_base", count: (text) => o200k.encode(text, "all").length },
    { name: "cl100k", label: "js-tiktoken cl100k_base", count: (text) => cl100k.encode(text, "all").length },
  ];
}
