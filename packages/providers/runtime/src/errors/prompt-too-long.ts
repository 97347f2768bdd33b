/** What a provider's prompt-too-long message said; both numbers are absent for generic wordings. */
export interface PromptTooLongMatch {
  /** Tokens the prompt had, as the provider counted them. */
  actualTokens?: number;
  /** The maximum the provider enforced (may be a regional or quota cap, not the model window). */
  limitTokens?: number;
}

const NUMBER = String.raw`(\d[\d,]*)`;

// Ordered: the most specific wordings first. Each yields [actual, limit] from its match.
const NUMBERED_PATTERNS: readonly { pattern: RegExp; read: (match: RegExpExecArray) => [string, string] }[] =
  [
    {
      // Anthropic and Bedrock-Claude: "prompt is too long: 208310 tokens > 200000 maximum"
      pattern: new RegExp(String.raw`prompt is too long:\s*${NUMBER}\s*tokens?\s*>\s*${NUMBER}`, "i"),
      read: (match) => [match[1] ?? "", match[2] ?? ""],
    },
    {
      // Vertex / Gemini: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)."
      pattern: new RegExp(
        String.raw`input token count\s*\(?${NUMBER}\)?\s*exceeds the maximum number of tokens allowed\s*\(?${NUMBER}\)?`,
        "i",
      ),
      read: (match) => [match[1] ?? "", match[2] ?? ""],
    },
    {
      // Vertex, older front-ends: "Unable to submit request because the input token count is 35238 but
      // model only supports up to 32768. Reduce the input token count and try again."
      pattern: new RegExp(
        String.raw`input token count is\s*${NUMBER}\s*but (?:the )?model only supports up to\s*${NUMBER}`,
        "i",
      ),
      read: (match) => [match[1] ?? "", match[2] ?? ""],
    },
    {
      // Anthropic: "input length and max_tokens exceed context limit: 188240 + 21333 > 200000"
      pattern: new RegExp(
        String.raw`exceed context limit:\s*${NUMBER}\s*\+\s*${NUMBER}\s*>\s*${NUMBER}`,
        "i",
      ),
      read: (match) => [String(toNumber(match[1] ?? "0") + toNumber(match[2] ?? "0")), match[3] ?? ""],
    },
  ];

const GENERIC_PATTERNS: readonly RegExp[] = [
  /prompt is too long/i,
  /input is too long/i,
  /too many input tokens/i,
  /exceeds the maximum number of tokens allowed/i,
  /model_context_window_exceeded/i,
];

/**
 * Recognises a provider's "prompt too long" wording and extracts the token numbers when the message has
 * them. Returns undefined when the text is not a prompt-too-long message (an output `max_tokens` error is
 * not one).
 */
export function parsePromptTooLongMessage(text: string): PromptTooLongMatch | undefined {
  for (const { pattern, read } of NUMBERED_PATTERNS) {
    const match = pattern.exec(text);
    if (match) {
      const [actual, limit] = read(match);
      return { actualTokens: toNumber(actual), limitTokens: toNumber(limit) };
    }
  }
  return GENERIC_PATTERNS.some((pattern) => pattern.test(text)) ? {} : undefined;
}

function toNumber(digits: string): number {
  return Number(digits.replaceAll(",", ""));
}
