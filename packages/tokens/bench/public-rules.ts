// Baseline estimators re-implemented from their public descriptions, for the benchmark only.
import { type ContentBlock, contentBlocks, type RequestMessage } from "@unforget/core";

/** The common rule: one token per four characters. (OpenCode's `Token.estimate` is this, rounded.) */
export function lengthOverFour(text: string): number {
  return Math.ceil(text.length / 4);
}

// The published character-class rule: every character adds a fractional weight chosen by its cluster.
const CLUSTER_WEIGHTS = [
  0.2020182639633662, 0.4790556468110302, 0.3042805747355606, 0.6581971122770317, 0.08086208692099685,
  0.4157646363858563, 0.2372744211422125,
];
const OTHER_WEIGHT = 0.980083857442348;
const CLUSTERS = [
  "NORabcdefghilnopqrstuvy",
  "\"#%)*+56789<>?@Z[\\]^|§«äç'",
  "-.ABDEFGIKWY_\r\tz{ü",
  ",01234:~Üß",
  "",
  "!$&(/;=JX`j\n}ö",
  "CHLMPQSTUVfkmspwx",
];
const weightByCode = new Float64Array(256).fill(OTHER_WEIGHT);
for (const [cluster, characters] of CLUSTERS.entries()) {
  for (const character of characters) weightByCode[character.charCodeAt(0)] = CLUSTER_WEIGHTS[cluster]!;
}

/** Character-class weights: a space after a space is cheap, characters above U+00FF share one weight. */
export function characterClassRule(text: string): number {
  let total = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 0x20)
      total += index > 0 && text.charCodeAt(index - 1) === 0x20 ? CLUSTER_WEIGHTS[4]! : CLUSTER_WEIGHTS[0]!;
    else if (code > 255) total += CLUSTER_WEIGHTS[3]!;
    else total += weightByCode[code]!;
  }
  return Math.round(total);
}

function blockCharacters(block: ContentBlock): number {
  switch (block.type) {
    case "text":
      return block.text.length;
    case "tool_use":
      // Tool calls are stringified whole (id, name, arguments).
      return JSON.stringify({ id: block.id, name: block.name, args: block.input }).length;
    case "tool_result":
      return typeof block.content === "string"
        ? block.content.length
        : block.content.reduce((total, part) => total + blockCharacters(part), 0);
    case "thinking":
      return block.thinking.length;
    case "redacted_thinking":
      return block.data.length;
    case "unknown":
      return JSON.stringify(block.original).length;
    default:
      return JSON.stringify(block).length;
  }
}

/**
 * LangChain's `countTokensApproximately`: message characters (text, stringified tool calls) / 4 characters
 * per token, rounded up, plus `extraTokensPerMessage` (3 in LangChain; 0 here when only content is compared).
 */
export function langChainApproximately(message: RequestMessage, extraTokensPerMessage = 0): number {
  let characters = 0;
  for (const block of contentBlocks(message.content)) characters += blockCharacters(block);
  return Math.ceil(characters / 4) + extraTokensPerMessage;
}
