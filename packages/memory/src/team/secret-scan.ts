/** One thing in a text that looks like a secret. */
export interface SecretFinding {
  /** Rule id (ours, e.g. `jwt`, or secretlint's, e.g. `@secretlint/secretlint-rule-slack`). */
  rule: string;
  /** 1-based line of the match. */
  line: number;
  /** What was found, with the secret itself masked. */
  message: string;
}

/**
 * What a scan found (empty when the text is clean). `incomplete`, when set, says which part of the scan could not
 * run: the findings are those of the rest, and the text was not checked by that part.
 */
export type SecretScanResult = SecretFinding[] & { incomplete?: string };

/** Looks for secrets in a text before it is persisted. */
export interface SecretScanner {
  /** Called on every write; resolves to the findings, marked `incomplete` when part of the scan failed. Never rejects. */
  scan(text: string): Promise<SecretScanResult>;
}

/** How the default scanner runs its second rule set, and where it says that one failed. */
export interface SecretScannerOptions {
  /**
   * The rule set run beside the pattern rules, called on every scan: by default secretlint's recommended preset
   * (loaded with the first scan). A rejection never lets a finding of the pattern rules through: the scan
   * resolves with those, marked `incomplete`.
   */
  lint?: (text: string) => Promise<SecretFinding[]>;
  /** Told once per scan that ran on the pattern rules alone; defaults to `process.emitWarning`. */
  onWarning?: (message: string) => void;
}

interface PatternRule {
  id: string;
  pattern: RegExp;
  what: string;
  /** Extra check on the match, to keep hashes, UUIDs, placeholders and code out. */
  accept?: (match: RegExpMatchArray) => boolean;
}

function isJwtHeader(match: RegExpMatchArray): boolean {
  const header = match[0].split(".")[0] ?? "";
  try {
    const decoded = JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as Record<string, unknown>;
    return typeof decoded === "object" && decoded !== null && "alg" in decoded;
  } catch {
    return false;
  }
}

/** Shannon entropy in bits per character: random keys score above 3.5, words and identifiers below. */
function entropy(text: string): number {
  const counts = new Map<string, number>();
  for (const character of text) counts.set(character, (counts.get(character) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) {
    const share = count / text.length;
    bits -= share * Math.log2(share);
  }
  return bits;
}

/** Values that stand for a secret without being one: references, placeholders, masks, types and code. */
const PLACEHOLDER =
  /^(?:\$\{?[A-Za-z_][\w.]*\}?|%\(?[\w.]+\)?s?|\{\{.*\}\}|<[^>]*>|\[[^\]]*\]|\*+|x{3,}|\.{3,}|…|(?:process\.env|os\.environ|getenv|env|secrets|vault|config|settings)\b.*|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|(?:true|false|null|none|nil|undefined|string|number|str|int|bool|required|optional|redacted|changeme|placeholder|example|sample|dummy|test|secret|password|token)|(?:your|my|an?|the|some)[-_]?\w*|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+)$/i;

/** `password = "…"`, `api_key: …`, `client_secret => …` with a value that is neither a placeholder nor code. */
function isAssignedSecret(match: RegExpMatchArray): boolean {
  const keyword = (match[1] ?? "").toLowerCase();
  const value = match[3] ?? "";
  if (PLACEHOLDER.test(value)) return false;
  if (/^pass(?:word|wd)?$|^pwd$/.test(keyword.replace(/[^a-z]/g, ""))) {
    // A password: anything of 6+ characters that mixes classes (a plain word is a name, not a password).
    return value.length >= 6 && /[0-9\W_]/.test(value) && /[A-Za-z]/.test(value);
  }
  return value.length >= 16 && /[0-9]/.test(value) && /[A-Za-z]/.test(value) && entropy(value) >= 3.5;
}

/** A URL's password part that is a placeholder (`:***@`, `:<password>@`, `:${PASS}@`) is not a secret. */
function hasRealUrlPassword(match: RegExpMatchArray): boolean {
  return !PLACEHOLDER.test(match[1] ?? "");
}

/**
 * Rules by family, at the breadth of gitleaks' default configuration: tokens recognised by their fixed
 * prefixes or shapes (which hashes, UUIDs, integrity strings and code do not have), plus assignments and
 * URLs that carry a credential. secretlint's recommended preset runs beside them.
 */
const PATTERN_RULES: readonly PatternRule[] = [
  // Cloud: AWS, Google Cloud, Azure.
  {
    id: "aws-access-key-id",
    pattern: /\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b/g,
    what: "an AWS access key id",
  },
  {
    id: "aws-secret-access-key",
    pattern:
      /\baws_?(?:secret|private)?_?(?:access)?_?key\b["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi,
    what: "an AWS secret access key",
  },
  { id: "gcp-api-key", pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g, what: "a Google API key" },
  {
    id: "gcp-service-account",
    pattern: /"type"\s*:\s*"service_account"[\s\S]{0,2000}?"private_key"\s*:\s*"-----BEGIN/g,
    what: "a Google service account key",
  },
  {
    id: "azure-storage-key",
    pattern: /\bAccountKey=([A-Za-z0-9+/]{86}==)/g,
    what: "an Azure storage account key",
  },
  {
    id: "azure-client-secret",
    pattern: /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g,
    what: "an Azure AD client secret",
  },
  {
    id: "azure-sas-token",
    pattern: /\bsv=\d{4}-\d{2}-\d{2}&[^\s"']*\bsig=[A-Za-z0-9%+/]{30,}/g,
    what: "an Azure shared access signature",
  },
  // Version control: GitHub, GitLab, Bitbucket and Atlassian.
  {
    id: "github-token",
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b/g,
    what: "a GitHub token",
  },
  {
    id: "gitlab-token",
    pattern:
      /\b(?:gl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|soat|agent)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20})\b/g,
    what: "a GitLab token",
  },
  {
    id: "bitbucket-app-password",
    pattern: /\bATBB[A-Za-z0-9_=.-]{28,}\b/g,
    what: "a Bitbucket app password",
  },
  { id: "atlassian-api-token", pattern: /\bATATT3[A-Za-z0-9_=.-]{100,}\b/g, what: "an Atlassian API token" },
  // Chat and mail: Slack, Discord, Telegram, Twilio, SendGrid, Mailgun, Mailchimp.
  { id: "slack-token", pattern: /\bxox[abposre]-[A-Za-z0-9-]{10,}\b/g, what: "a Slack token" },
  { id: "slack-app-token", pattern: /\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+\b/gi, what: "a Slack app token" },
  {
    id: "slack-webhook",
    pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9/_-]+/g,
    what: "a Slack webhook URL",
  },
  {
    id: "discord-webhook",
    pattern: /https:\/\/(?:canary\.|ptb\.)?discord(?:app)?\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]+/g,
    what: "a Discord webhook URL",
  },
  { id: "telegram-bot-token", pattern: /\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b/g, what: "a Telegram bot token" },
  { id: "twilio-api-key", pattern: /\bSK[0-9a-fA-F]{32}\b/g, what: "a Twilio API key" },
  {
    id: "sendgrid-api-key",
    pattern: /\bSG\.[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{39,50}\b/g,
    what: "a SendGrid API key",
  },
  { id: "mailgun-api-key", pattern: /\b(?:key|pubkey)-[0-9a-f]{32}\b/g, what: "a Mailgun API key" },
  { id: "mailchimp-api-key", pattern: /\b[0-9a-f]{32}-us\d{1,2}\b/g, what: "a Mailchimp API key" },
  // Payments: Stripe, Square, Shopify, PayPal Braintree.
  {
    id: "stripe-secret-key",
    pattern: /\b(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,99}\b/g,
    what: "a Stripe secret or restricted key",
  },
  { id: "stripe-webhook-secret", pattern: /\bwhsec_[A-Za-z0-9]{24,}\b/g, what: "a Stripe webhook secret" },
  { id: "square-token", pattern: /\b(?:sq0atp|sq0csp|EAAA)[A-Za-z0-9_-]{22,60}\b/g, what: "a Square token" },
  { id: "shopify-token", pattern: /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/g, what: "a Shopify token" },
  {
    id: "braintree-token",
    pattern: /\baccess_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}\b/g,
    what: "a PayPal Braintree access token",
  },
  // Package registries: npm, PyPI, RubyGems, NuGet, Docker Hub.
  { id: "npm-token", pattern: /\bnpm_[A-Za-z0-9]{36}\b/g, what: "an npm access token" },
  {
    id: "npmrc-auth-token",
    pattern: /\/\/[^\s]+\/:_authToken=([^\s$][^\s]{15,})/g,
    what: "an npm registry token in .npmrc",
    accept: (match) => !PLACEHOLDER.test(match[1] ?? ""),
  },
  { id: "pypi-token", pattern: /\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}/g, what: "a PyPI upload token" },
  { id: "rubygems-api-key", pattern: /\brubygems_[a-f0-9]{48}\b/g, what: "a RubyGems API key" },
  { id: "nuget-api-key", pattern: /\boy2[a-z0-9]{43}\b/g, what: "a NuGet API key" },
  { id: "docker-hub-token", pattern: /\bdckr_pat_[A-Za-z0-9_-]{27,}\b/g, what: "a Docker Hub access token" },
  // Model APIs: Anthropic, OpenAI, Hugging Face, and others with fixed prefixes.
  {
    id: "anthropic-api-key",
    pattern: /\bsk-ant-[a-z0-9]+-[A-Za-z0-9_-]{20,}/g,
    what: "an Anthropic API key",
  },
  {
    id: "openai-api-key",
    pattern: /\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}/g,
    what: "an OpenAI-style API key",
  },
  { id: "huggingface-token", pattern: /\b(?:hf_|api_org_)[A-Za-z]{34}\b/g, what: "a Hugging Face token" },
  { id: "groq-api-key", pattern: /\bgsk_[A-Za-z0-9]{52}\b/g, what: "a Groq API key" },
  { id: "replicate-api-token", pattern: /\br8_[A-Za-z0-9]{37}\b/g, what: "a Replicate API token" },
  { id: "xai-api-key", pattern: /\bxai-[A-Za-z0-9]{80}\b/g, what: "an xAI API key" },
  { id: "perplexity-api-key", pattern: /\bpplx-[A-Za-z0-9]{48}\b/g, what: "a Perplexity API key" },
  // Keys, tokens and credentials in any text.
  {
    id: "private-key",
    pattern: /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----/g,
    what: "a PEM private key",
  },
  {
    id: "jwt",
    pattern: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,}/g,
    what: "a JSON Web Token",
    accept: isJwtHeader,
  },
  {
    id: "password-in-url",
    pattern: /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:([^\s@/]+)@[^\s/]+/gi,
    what: "a URL with a password in it",
    accept: hasRealUrlPassword,
  },
  {
    id: "assigned-secret",
    pattern:
      /\b[\w.-]*?(pass(?:word|wd)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|auth[_-]?key|private[_-]?key|client[_-]?secret|credentials?)[\w.-]*["']?\s*(?::=|=>|=|:)\s*(["'`]?)([^\s"'`,;()[\]{}<>]+)\2(?!\s*\()/gi,
    what: "a credential assigned in text",
    accept: isAssignedSecret,
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
      if (rule.accept && !rule.accept(match)) continue;
      findings.push({
        rule: rule.id,
        line: lineOf(text, match.index ?? 0),
        message: `${rule.what} (${mask(match[0])})`,
      });
    }
  }
  return findings;
}

/** secretlint's recommended preset on `text`, as findings (secretlint loads with the first scan, not at start). */
async function lintWithSecretlint(text: string): Promise<SecretFinding[]> {
  const [{ lintSource }, { creator: recommendedRules }] = await Promise.all([
    import("@secretlint/core"),
    import("@secretlint/secretlint-rule-preset-recommend"),
  ]);
  const result = await lintSource({
    source: { filePath: "memory.md", content: text, contentType: "text" },
    options: {
      config: { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: recommendedRules }] },
      maskSecrets: true,
    },
  });
  return result.messages.map((message) => ({
    rule: message.ruleId,
    line: message.loc.start.line,
    message: message.message,
  }));
}

/**
 * The default scanner: secretlint's recommended rules (cloud keys, private keys, provider API keys, VCS and
 * chat tokens, database connection strings, basic auth in URLs, …) plus prefix rules for AWS key ids, JWTs,
 * unchecksummed tokens and passwords in URLs. A finding of either refuses the write. When secretlint fails
 * (a broken install, a rule crashing on odd input), the pattern rules' findings still refuse the write, and
 * the result is marked `incomplete` and a warning says so: a write never goes ahead on half a scan silently.
 */
export function createSecretScanner(options: SecretScannerOptions = {}): SecretScanner {
  const lint = options.lint ?? lintWithSecretlint;
  const warn =
    options.onWarning ??
    ((message: string) => process.emitWarning(message, { code: "secret_scan_incomplete" }));
  return {
    async scan(text) {
      const findings: SecretScanResult = scanPatterns(text);
      let linted: SecretFinding[];
      try {
        linted = await lint(text);
      } catch (error) {
        findings.incomplete = `the secret scan ran on the pattern rules alone: secretlint failed (${error instanceof Error ? error.message : String(error)}), so what only its rules catch was not checked`;
        warn(findings.incomplete);
        return findings;
      }
      for (const finding of linted) {
        if (findings.some((found) => found.line === finding.line)) continue;
        findings.push(finding);
      }
      return findings;
    },
  };
}
