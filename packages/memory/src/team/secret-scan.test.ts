import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createMemoryDir } from "../dir/memory-dir.ts";
import { formatMemoryFile } from "../store/memory-frontmatter.ts";
import { createSecretScanner } from "./secret-scan.ts";
import { createTeamMemory } from "./team-memory.ts";

// Every fake is assembled at run time, so that no secret-shaped literal sits in the repository for push
// protection and scanners to trip on. The shapes are the vendors' documented formats; the values are random.
const cat = (...parts: string[]) => parts.join("");
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** Deterministic random-looking text: the digest of a counter, spelled in letters and digits. */
const alnum = (length: number, seed = 7) => {
  let text = "";
  for (let block = 0; text.length < length; block++) {
    for (const byte of createHash("sha256").update(`${seed}:${block}`).digest()) {
      text += ALPHABET[byte % ALPHABET.length];
    }
  }
  return text.slice(0, length);
};
const hex = (length: number, seed = 3) =>
  alnum(length, seed)
    .toLowerCase()
    .replace(/[g-z]/g, (letter) => "abcdef"[letter.charCodeAt(0) % 6] ?? "a");
const b64 = (length: number) => alnum(length, 11).replace(/[05]/g, "+");

/** One realistic fake per family of gitleaks' default rules: [family, text, the rule that must name it]. */
const FAMILIES: Array<[string, string, RegExp]> = [
  ["AWS access key id", cat("aws_access_key_id = ", "AKIA", "Q7RZ4XN2WB5KD3HM"), /aws/],
  ["AWS secret access key", cat("aws_secret_access_key = ", b64(40)), /aws/],
  ["Google API key", cat("maps key AIza", alnum(35)), /gcp/],
  [
    "Google service account",
    cat(
      '{"type": "service_account", "private_key": "-----BEGIN ',
      "PRIVATE KEY-----\\nMIIE",
      alnum(40),
      '"}',
    ),
    /gcp-service-account|private-?key/,
  ],
  ["Azure storage key", cat("DefaultEndpointsProtocol=https;AccountKey=", b64(86), "=="), /azure/],
  ["Azure AD client secret", cat("client secret: ", "abc8Q~", alnum(34)), /azure/],
  ["GitHub token", cat("token: ghp_", alnum(36)), /github/],
  ["GitHub fine-grained token", cat("github_pat_", alnum(22), "_", alnum(59)), /github/],
  ["GitLab token", cat("glpat-", alnum(20)), /gitlab/],
  ["Bitbucket app password", cat("ATBB", alnum(32)), /bitbucket/],
  ["Atlassian API token", cat("ATATT3", alnum(180), "=", hex(8)), /atlassian/],
  ["Slack bot token", cat("xoxb-", "123456789012-1234567890123-", alnum(24)), /slack/],
  [
    "Slack webhook",
    cat("https://hooks.slack.com/services/", "T0", alnum(8), "/B0", alnum(8), "/", alnum(24)),
    /slack/,
  ],
  ["Twilio API key", cat("twilio: SK", hex(32)), /twilio/],
  ["SendGrid API key", cat("SG.", alnum(22), ".", alnum(43)), /sendgrid/],
  ["Mailgun API key", cat("mailgun: key-", hex(32)), /mailgun/],
  ["Stripe live secret key", cat("STRIPE_SECRET_KEY=sk_", "live_", alnum(24)), /stripe/],
  ["Stripe restricted key", cat("rk_", "live_", alnum(24)), /stripe/],
  ["Stripe test secret key", cat("sk_", "test_", alnum(24)), /stripe/],
  ["npm token", cat("//registry.npmjs.org/:_authToken=npm_", alnum(36)), /npm/],
  ["PyPI token", cat("password = pypi-", "AgEIcHlwaS5vcmc", alnum(60)), /pypi/],
  ["OpenAI key", cat("OPENAI_API_KEY=sk-proj-", alnum(48)), /openai/],
  ["Anthropic key", cat("ANTHROPIC_API_KEY=sk-ant-", "api03-", alnum(93), "AA"), /anthropic/],
  ["Hugging Face token", cat("hf_", alnum(34).replace(/[0-9]/g, "q")), /huggingface/],
  [
    "RSA private key",
    cat("-----BEGIN RSA ", "PRIVATE KEY-----\nMIIEow", alnum(60), "\n-----END RSA PRIVATE KEY-----"),
    /private-?key/,
  ],
  [
    "OpenSSH private key",
    cat(
      "-----BEGIN OPENSSH ",
      "PRIVATE KEY-----\nb3BlbnNz",
      alnum(40),
      "\n-----END OPENSSH PRIVATE KEY-----",
    ),
    /private-?key/,
  ],
  [
    "JWT",
    cat(
      "Bearer ",
      "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
      ".",
      "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0",
      ".",
      alnum(43),
    ),
    /jwt/,
  ],
  [
    "password in a URL",
    cat("DATABASE_URL=postgres://admin:", "hunter2pass", "@db.internal:5432/app"),
    /password-in-url|database|basicauth/,
  ],
  ["password assignment", cat('db_password = "', "Tr0ub4dor&3x", '"'), /assigned-secret/],
  ["client secret assignment", cat("client_secret: ", alnum(32)), /assigned-secret/],
];

/** Text that looks like a secret to a careless rule and is not one. */
const BENIGN: Array<[string, string]> = [
  ["commit hash", "The release commit is 9fceb02d0ae598e95dc970b74767f19372d61af8 on main."],
  ["sha256 digest", "tarball sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
  ["UUID", "Session 123e4567-e89b-12d3-a456-426614174000 reproduced the bug."],
  [
    "sha512 integrity",
    "integrity: sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
  ],
  [
    "environment-variable names",
    "Set AWS_SECRET_ACCESS_KEY, STRIPE_SECRET_KEY and GITHUB_TOKEN in the CI secrets.",
  ],
  [
    "password from the environment",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a reference to an environment variable is the point.
    "password: ${DB_PASSWORD}\napi_key = os.environ['API_KEY']\ntoken = process.env.TOKEN",
  ],
  [
    "postgres URL without a password",
    "Connect with postgres://localhost:5432/app or postgres://app@localhost/app.",
  ],
  [
    "URL with a placeholder password",
    "The docs use https://user:<password>@example.com and postgres://u:***@host/db.",
  ],
  ["typed field", "interface Login { password: string; token: string | undefined }"],
  ["code reading a secret", "const secret = await vault.read('stripe'); const token = getToken(user);"],
  ["truncated key mention", "Keys look like AKIA… and sk_live_… and live in the vault, never here."],
  ["base64 of text", "fixture: SGVsbG8gV29ybGQhIFRoaXMgaXMgYSBmaXh0dXJlIGZpbGUgZm9yIHRlc3RzLg=="],
  [
    "words that share a prefix",
    "sk-learn is scikit-learn; xoxo means hugs; ghp is our project code; key-value store.",
  ],
  ["request id", "request id req_01HX9ZK3V7Q8R2M4N6P8 failed with 529."],
  [
    "an ordinary password field name",
    "The form has fields username and password; passwords must be 12+ characters.",
  ],
];

describe("createSecretScanner", () => {
  const scanner = createSecretScanner();

  it.each(FAMILIES)("refuses a %s, naming the rule", async (_family, text, rule) => {
    const findings = await scanner.scan(`Deploy notes.\n${text}\nMore notes.\n`);
    expect(findings.length, text).toBeGreaterThan(0);
    expect(findings.map((finding) => finding.rule).join(" ")).toMatch(rule);
    expect(findings[0]?.line).toBe(2);
    // The finding never repeats the secret itself.
    for (const finding of findings) expect(finding.message).not.toContain(text.slice(-10));
  });

  it.each(BENIGN)("keeps a %s", async (_what, text) => {
    expect(await scanner.scan(text)).toEqual([]);
  });
});

describe("createSecretScanner when secretlint fails", () => {
  const failing = () => {
    const warnings: string[] = [];
    const scanner = createSecretScanner({
      // secretlint's place in the scan, failing the way a broken install or a rule's crash does.
      lint: async () => {
        throw new TypeError("Cannot read properties of undefined (reading 'rules')");
      },
      onWarning: (message) => warnings.push(message),
    });
    return { scanner, warnings };
  };

  it("still refuses what the pattern rules find, and says the scan was incomplete", async () => {
    const { scanner, warnings } = failing();
    const findings = await scanner.scan(`token: ghp_${alnum(36)}\n`);
    expect(findings.map((finding) => finding.rule)).toEqual(["github-token"]);
    expect(findings.incomplete).toMatch(/pattern rules alone: secretlint failed \(.*reading 'rules'\)/);
    expect(warnings).toEqual([findings.incomplete]);
  });

  it("a clean text comes back clean but marked incomplete, with one warning per scan", async () => {
    const { scanner, warnings } = failing();
    const findings = await scanner.scan("Deploys run on Fridays.\n");
    expect([...findings]).toEqual([]);
    expect(findings.incomplete).toMatch(/secretlint failed/);
    await scanner.scan("Another note.\n");
    expect(warnings).toHaveLength(2);
  });

  it("a complete scan is not marked", async () => {
    const findings = await createSecretScanner().scan("Deploys run on Fridays.\n");
    expect(findings.incomplete).toBeUndefined();
  });

  it("a write that goes ahead on the pattern rules alone says so in its result", async () => {
    const { scanner, warnings } = failing();
    const root = await mkdtemp(join(tmpdir(), "secret-scan-incomplete-"));
    try {
      const team = await createTeamMemory({ root, secretScanner: scanner });
      const note = formatMemoryFile(
        { name: "deploy", description: "deploys", type: "project" },
        "Fridays.\n",
      );
      const written = await team.write("deploy.md", note);
      expect(written.warnings).toEqual([expect.stringMatching(/^deploy\.md: .*secretlint failed/)]);
      expect((await team.read("deploy.md")).content).toBe(note);
      // Around any store, too.
      const wrapped = await createTeamMemory({
        store: await createMemoryDir({ root }),
        secretScanner: scanner,
      });
      const again = await wrapped.write("other.md", note.replace("deploys", "other"));
      expect(again.warnings).toEqual([expect.stringMatching(/^other\.md: .*secretlint failed/)]);
      expect(warnings).toHaveLength(2);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
