import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// A project that installed @unforget/providers and one provider package only: the built packages laid out
// in a scratch node_modules, as npm would (run after the build).
const packages = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
let project: string;

beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), "unforget-optional-providers-"));
  const scope = join(project, "node_modules", "@unforget");
  mkdirSync(join(scope, "providers"), { recursive: true });
  // Copied, not linked: a link would resolve to the workspace, where every provider is a dev dependency.
  const fromEnv = join(packages, "providers", "from-env");
  cpSync(join(fromEnv, "package.json"), join(scope, "providers", "package.json"));
  cpSync(join(fromEnv, "dist"), join(scope, "providers", "dist"), { recursive: true });
  symlinkSync(join(packages, "core"), join(scope, "core"), "dir");
  symlinkSync(join(packages, "providers", "runtime"), join(scope, "provider-runtime"), "dir");
  symlinkSync(join(packages, "providers", "anthropic"), join(scope, "provider-anthropic"), "dir");
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

/** Runs `code` as an ES module inside the scratch project and returns what it printed as JSON. */
function run(code: string, env: Record<string, string> = {}): unknown {
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", code], {
    cwd: project,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: project, ...env },
    timeout: 30_000,
  });
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

const attempt = `
import { createProviderFromEnv } from "@unforget/providers";
try {
  const { providerName, provider } = await createProviderFromEnv();
  console.log(JSON.stringify({ providerName, providerId: provider.providerId }));
} catch (error) {
  console.log(JSON.stringify({ name: error.name, code: error.code, message: error.message, packageName: error.packageName }));
}`;

describe("provider packages are optional peers, loaded on demand", () => {
  it("works with only the chosen provider's package installed", () => {
    expect(run(attempt, { ANTHROPIC_API_KEY: "sk-ant-test" })).toEqual({
      providerName: "anthropic",
      providerId: "anthropic",
    });
  });

  it("names the package to install when the chosen provider's is missing", () => {
    const outcome = run(attempt, { UNFORGET_PROVIDER: "bedrock", AWS_REGION: "us-east-1" }) as Record<
      string,
      string
    >;
    expect(outcome.name).toBe("ProviderPackageMissingError");
    expect(outcome.code).toBe("configuration");
    expect(outcome.packageName).toBe("@unforget/provider-bedrock");
    expect(outcome.message).toContain("npm install @unforget/provider-bedrock");
  });

  it("lists the providers that are not installed when nothing is configured", () => {
    const outcome = run(attempt) as Record<string, string>;
    expect(outcome.message).toMatch(/^ {2}bedrock: .*npm install @unforget\/provider-bedrock/m);
    expect(outcome.message).toMatch(/^ {2}vertex: .*npm install @unforget\/provider-vertex/m);
    expect(outcome.message).toMatch(/^ {2}anthropic: ANTHROPIC_API_KEY/m);
  });
});
