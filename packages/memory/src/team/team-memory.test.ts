import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryDir, type MemoryDir } from "../dir/memory-dir.ts";
import { MemoryNotFoundError, MemorySecretError } from "../store/memory-errors.ts";
import { formatMemoryFile } from "../store/memory-frontmatter.ts";
import type { SecretScanner } from "./secret-scan.ts";
import { createTeamMemory } from "./team-memory.ts";

// Built at run time so that no secret-shaped literal sits in the repository for scanners to trip on.
const repeat = (text: string, times: number) => text.repeat(times);
const SECRETS: Array<[string, string, string]> = [
  ["AWS access key id", `aws_access_key_id = AKIA${"Q7RZ4XN2WB5KD3HM"}`, "aws-access-key-id"],
  ["AWS secret key", `aws_secret_access_key = ${"wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8w1J4Lk2"}`, "aws"],
  [
    "private key",
    `-----BEGIN OPENSSH ${"PRIVATE"} KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----`,
    "private-key",
  ],
  ["Anthropic key", `ANTHROPIC_API_KEY=sk-ant-api03-${repeat("Ab3dE", 19)}AA`, "anthropic"],
  ["OpenAI key", `OPENAI_API_KEY=sk-proj-${repeat("Zx9Qw7Ld", 6)}`, "openai-api-key"],
  ["Google API key", `key=AIza${"SyD3v9Xk2LmQ8rT1uVwY5zA7bC0dEfGhIjK"}`, "gcp-api-key"],
  ["GitHub token", `token: ghp_${repeat("a1B2c3D4e5", 4)}`, "github-token"],
  ["GitLab token", `glpat-${"xY8zQ2wE9rT4uI7oP3aS"}`, "gitlab-token"],
  ["Slack bot token", `xoxb-${"123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"}`, "slack"],
  [
    "Slack webhook",
    `https://hooks.slack.com/services/${"T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX"}`,
    "slack",
  ],
  [
    "JWT",
    `Bearer ${"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"}.${"eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"}.${"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"}`,
    "jwt",
  ],
  [
    "password in a URL",
    `DATABASE_URL=postgres://admin:${"hunter2pass"}@db.internal:5432/app`,
    "password-in-url",
  ],
];

const ORDINARY = [
  "The release commit is 9fceb02d0ae598e95dc970b74767f19372d61af8; the tarball sha256 is e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.",
  "Session 123e4567-e89b-12d3-a456-426614174000 reproduced the bug; request id req_01HX9ZK3V7Q8R2M4N6P8.",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: code with a template literal is the point.
  "```ts\nconst token = await getToken(process.env.API_TOKEN);\nconst url = `postgres://${user}:${password}@${host}/db`;\n```",
  "Connect with postgres://localhost:5432/app (no password locally); the docs use https://user:<password>@example.com.",
  "The JWT header is eyJhbGciOi…, never paste a whole token here. Keys look like AKIA… and live in the vault.",
  "base64 of the fixture: SGVsbG8gV29ybGQhIFRoaXMgaXMgYSBmaXh0dXJlIGZpbGUgZm9yIHRlc3RzLg==",
  "sk-learn is the scikit-learn package; xoxo means hugs; ghp is our internal project code.",
];

let parent: string;
let team: MemoryDir;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "team-memory-"));
  team = await createTeamMemory({ root: join(parent, "team"), author: "agent:alice" });
});

afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

const note = (body: string) =>
  formatMemoryFile({ name: "note", description: "a team note", type: "project" }, body);

describe("createTeamMemory", () => {
  it.each(SECRETS)("refuses %s, naming the rule, and writes nothing", async (_what, secret, rule) => {
    const error = await team.write("leak.md", note(`Deploy notes.\n${secret}\n`)).catch((e) => e);
    expect(error).toBeInstanceOf(MemorySecretError);
    expect((error as MemorySecretError).rules.join(" ")).toContain(rule);
    expect((error as Error).message).toMatch(/was not written/);
    expect((error as Error).message).not.toContain(secret.slice(-12));
    await expect(team.read("leak.md")).rejects.toBeInstanceOf(MemoryNotFoundError);
    expect((await readdir(team.root)).filter((file) => file.startsWith("leak"))).toEqual([]);
  });

  it.each(ORDINARY.map((text, index) => [index, text]))(
    "accepts ordinary text #%s (hashes, UUIDs, code)",
    async (index, text) => {
      const { hash } = await team.write(`ordinary-${index}.md`, note(`${text}\n`));
      expect((await team.read(`ordinary-${index}.md`)).hash).toBe(hash);
    },
  );

  it("scans the frontmatter too", async () => {
    const content = formatMemoryFile(
      { name: "creds", description: `token ghp_${"a1B2c3D4e5".repeat(4)}`, type: "reference" },
      "body\n",
    );
    await expect(team.write("creds.md", content)).rejects.toBeInstanceOf(MemorySecretError);
  });
});

describe("createTeamMemory with a store the application opens", () => {
  it("hands the scanner to `open` and returns the store as opened, its own members included", async () => {
    const handed: SecretScanner[] = [];
    const opened = await createTeamMemory({
      async open({ secretScanner }) {
        handed.push(secretScanner);
        const store = await createMemoryDir({ root: join(parent, "opened"), secretScanner });
        return Object.assign(Object.create(store) as MemoryDir, { close: async () => "closed" });
      },
    });
    expect(handed).toHaveLength(1);
    expect(await opened.close()).toBe("closed");
    const leak = await opened.write("leak.md", note(`token ghp_${"a1B2c3D4e5".repeat(4)}\n`)).catch((e) => e);
    expect(leak).toBeInstanceOf(MemorySecretError);
    await expect(opened.read("leak.md")).rejects.toBeInstanceOf(MemoryNotFoundError);
    await opened.write("fine.md", note("Deploys run on Fridays.\n"));
    expect((await opened.list()).map((entry) => entry.name)).toEqual(["fine.md"]);
  });

  it("hands over the scanner the caller chose", async () => {
    const mine: SecretScanner = {
      scan: async (text) =>
        text.includes("codename") ? [{ rule: "codename", line: 1, message: "a codename" }] : [],
    };
    let handed: SecretScanner | undefined;
    await createTeamMemory({
      secretScanner: mine,
      async open({ secretScanner }) {
        handed = secretScanner;
        return createMemoryDir({ root: join(parent, "mine"), secretScanner });
      },
    });
    expect(handed).toBe(mine);
  });
});
