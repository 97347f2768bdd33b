const CROSS_REGION_PREFIX = /^(?:us|eu|apac|global|us-gov|jp|au|ca)\./;
const MODEL_ARN = /^arn:aws[\w-]*:bedrock:[^:]*:[^:]*:(?:inference-profile|foundation-model)\/(.+)$/;

/**
 * The model id CountTokens accepts for a Converse model id. CountTokens takes bare foundation-model ids only:
 * cross-region inference-profile prefixes (`us.`, `eu.`, `apac.`, `global.`, …) and the ARN around a
 * system inference profile or foundation model are removed.
 * `us.anthropic.claude-sonnet-4-5-20250929-v1:0` → `anthropic.claude-sonnet-4-5-20250929-v1:0`.
 * Application inference-profile ARNs have no derivable foundation id and are returned unchanged.
 */
export function countTokensModelId(modelId: string): string {
  const trimmed = modelId.trim();
  const fromArn = MODEL_ARN.exec(trimmed)?.[1] ?? trimmed;
  return fromArn.replace(CROSS_REGION_PREFIX, "");
}
