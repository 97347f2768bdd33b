import { lintSource } from "@secretlint/core";
import { creator as recommendedRules } from "@secretlint/secretlint-rule-preset-recommend";

/** One thing in a text that looks like a secret. */
export interface SecretFinding {
  /** Rule id (ours, e.g. `jwt`, or secretlint's, e.g. `@secretlint/secretlint-rule-slack`). */
  rule: string;
  /** 1-based line of the match. */
  line: number;
  /** What was found, with the secret itself masked. */
  message: string;
}

/** Looks for secrets in a text before it is persisted. */
export interface SecretScanner {
  /** Called on every write; resolves to the findings (empty when the text is clean). Never rejects. */
  scan(text: string): Promise<SecretFinding[]>;
}

interface PatternRule {
  id: string;
  pattern: RegExp;
  what: string;
  /** Extra check on the match, to keep hashes, UUIDs and code out. */
  accept?: (match: string) => boolean;
}

function isJwtHeader(match: string): boolean {
  const header = match.split(".")[0] ?? "";
  try {
    const decoded = JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as Record<string, unknown>;
    return typeof decoded === "object" && decoded !== null && "alg" in decoded;
  } catch {
    return false;
  }
}

/**
 * Shapes secretlint's recommended preset recognises only in their exact, checksummed form (or not at all):
 * caught here by their fixed prefixes, which ordinary text (hashes, UUIDs, code) does not have.
 */
const PATTERN_RULES: readonly PatternRule[] = [
  {
    id: "aws-access-key-id",
    pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g,
    what: "an AWS access key id",
  },
  { id: "gcp-api-key", pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g, what: "a Google API key" },
  {
    id: "private-key",
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/g,
    what: "a PEM private key",
  },
  {
    id: "anthropic-api-key",
    pattern: /\bsk-ant-[a-z0-9]+-[A-Za-z0-9_-]{20,}/g,
    what: "an Anthropic API key",
  },
  {
    id: "openai-api-key",
    pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}/g,
    what: "an OpenAI-style API key",
  },
  {
    id: "github-token",
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b/g,
    what: "a GitHub token",
  },
  { id: "gitlab-token", pattern: /\bglpat-[A-Za-z0-9_-]{20,}\b/g, what: "a GitLab token" },
  { id: "slack-token", pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g, what: "a Slack token" },
  {
    id: "slack-webhook",
    pattern: /https:\/\/hooks\.slack\.com\/services\/[A-Za-z0-9/]+/g,
    what: "a Slack webhook URL",
  },
  {
    id: "discord-webhook",
    pattern: /https:\/\/(?:canary\.|ptb\.)?discord(?:app)?\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]+/g,
    what: "a Discord webhook URL",
  },
  {
    id: "jwt",
    pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}/g,
    what: "a JSON Web Token",
    accept: isJwtHeader,
  },
  {
    id: "password-in-url",
    pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:[^\s@/]+@[^\s/]+/gi,
    what: "a URL with a password in it",
    accept: (match) => !/:\/\/[^:]+:(?:\*+|x+|<[^>]*>|\$\{?[A-Z_]+\}?|password)@/i.test(match),
  },
];

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let index = 0; index < offset; index++) if (text.charCodeAt(index) === 10) line++;
  return line;
}

function mask(secret: string): string {
  return secret.length <= 8 ? "****" : `${secret.slice(0, 4)}…(${secret.length} characters)`;
}

function scanPatterns(text: string): SecretFinding[] {
  const findings: SecretFinding[] = [];
  for (const rule of PATTERN_RULES) {
    for (const match of text.matchAll(rule.pattern)) {
      if (rule.accept && !rule.accept(match[0])) continue;
      findings.push({
        rule: rule.id,
        line: lineOf(text, match.index ?? 0),
        message: `${rule.what} (${mask(match[0])})`,
      });
    }
  }
  return findings;
}

/**
 * The default scanner: secretlint's recommended rules (cloud keys, private keys, provider API keys, VCS and
 * chat tokens, database connection strings, basic auth in URLs, …) plus prefix rules for AWS key ids, JWTs,
 * unchecksummed tokens and passwords in URLs. A finding of either refuses the write.
 */
export function createSecretScanner(): SecretScanner {
  return {
    async scan(text) {
      const findings = scanPatterns(text);
      try {
        const result = await lintSource({
          source: { filePath: "memory.md", content: text, contentType: "text" },
          options: {
            config: {
              rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: recommendedRules }],
            },
            maskSecrets: true,
          },
        });
        for (const message of result.messages) {
          if (findings.some((finding) => finding.line === message.loc.start.line)) continue;
          findings.push({ rule: message.ruleId, line: message.loc.start.line, message: message.message });
        }
      } catch {
        // secretlint failing on odd input must not let a write through unscanned: the pattern rules ran.
      }
      return findings;
    },
  };
}
