import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigurationError, modelRetirement } from "@unforget/core";
import { startAnthropicFake, startBedrockFake } from "@unforget/testing/fakes";
import { afterAll, describe, expect, it } from "vitest";
import { createProviderFromEnv } from "./create-provider-from-env.ts";
import { loadProviderPackage, PROVIDER_NAMES } from "./provider-packages.ts";

const hello = (model: string) => ({
  model,
  maxTokens: 64,
  messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }],
});

// A home without AWS or gcloud files, so what this machine has never changes the outcome.
const home = mkdtempSync(join(tmpdir(), "unforget-providers-"));
const keyFile = join(home, "service-account.json");
writeFileSync(keyFile, "{}");
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** `variables` on top of an empty home: no shared AWS files, no gcloud credentials. */
function isolated(variables: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    HOME: home,
    CLOUDSDK_CONFIG: join(home, "gcloud"),
    AWS_CONFIG_FILE: join(home, "aws-config"),
    AWS_SHARED_CREDENTIALS_FILE: join(home, "aws-credentials"),
    ...variables,
  };
}

async function configurationError(run: () => unknown): Promise<ConfigurationError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error("Expected a ConfigurationError.");
}

describe("createProviderFromEnv", () => {
  it("with nothing configured, lists what each provider needs, one line per provider", async () => {
    const error = await configurationError(() => createProviderFromEnv({ env: isolated() }));
    const lines = error.message.split("\n");
    expect(lines.filter((line) => /^ {2}(anthropic|bedrock|vertex): /.test(line))).toHaveLength(3);
    expect(lines.length).toBeLessThanOrEqual(6);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(140);
    for (const variable of [
      "UNFORGET_PROVIDER",
      "ANTHROPIC_API_KEY",
      "AWS_REGION",
      "AWS_ACCESS_KEY_ID",
      "AWS_BEARER_TOKEN_BEDROCK",
      "AWS_PROFILE",
      "GOOGLE_CLOUD_PROJECT",
      "GOOGLE_APPLICATION_CREDENTIALS",
      "UNFORGET_MODEL",
    ]) {
      expect(error.message).toContain(variable);
    }
    expect(error.setting).toBe("UNFORGET_PROVIDER");
  });

  it("rejects an unknown UNFORGET_PROVIDER and names the valid values", async () => {
    const error = await configurationError(() =>
      createProviderFromEnv({ env: isolated({ UNFORGET_PROVIDER: "openai" }) }),
    );
    expect(error.message).toContain('"openai"');
    expect(error.message).toContain("anthropic, bedrock or vertex");
  });

  it("says what an explicitly chosen provider lacks", async () => {
    const lacks = async (variables: Record<string, string>) =>
      (await configurationError(() => createProviderFromEnv({ env: isolated(variables) }))).message;
    expect(await lacks({ UNFORGET_PROVIDER: "anthropic" })).toContain("ANTHROPIC_API_KEY");
    expect(await lacks({ UNFORGET_PROVIDER: "bedrock" })).toContain("AWS_REGION");
    // A profile without a region in the config file gives the Bedrock provider no region.
    expect(await lacks({ UNFORGET_PROVIDER: "bedrock", AWS_PROFILE: "dev" })).toContain("AWS_REGION");
    expect(await lacks({ UNFORGET_PROVIDER: "vertex" })).toContain("GOOGLE_CLOUD_PROJECT");
  });

  it("AWS keys without a region fail at detection, exactly as UNFORGET_PROVIDER=bedrock fails", async () => {
    const keys = { AWS_ACCESS_KEY_ID: "AKID", AWS_SECRET_ACCESS_KEY: "secret" };
    const detected = await configurationError(() => createProviderFromEnv({ env: isolated(keys) }));
    const explicit = await configurationError(() =>
      createProviderFromEnv({ env: isolated({ ...keys, UNFORGET_PROVIDER: "bedrock" }) }),
    );
    expect(detected.setting).toBe("AWS_REGION");
    expect(detected.message).toContain("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are set");
    expect(explicit.setting).toBe(detected.setting);
    expect(explicit.message).toContain(detected.message);
  });

  it("GOOGLE_CLOUD_PROJECT alone is reported as what it is: a project without credentials", async () => {
    const error = await configurationError(() =>
      createProviderFromEnv({ env: isolated({ GOOGLE_CLOUD_PROJECT: "proj" }) }),
    );
    expect(error.message).toContain("GOOGLE_CLOUD_PROJECT is set");
    expect(error.message).toContain("GOOGLE_APPLICATION_CREDENTIALS");
    expect(error.message).not.toContain("No model provider is configured");
    expect(error.setting).toBe("GOOGLE_APPLICATION_CREDENTIALS");
  });

  it("detection and an explicit choice agree, for every environment tried", async () => {
    const environments: Record<string, string>[] = [
      { ANTHROPIC_API_KEY: "k" },
      { ANTHROPIC_BASE_URL: "http://127.0.0.1:9" },
      { AWS_ACCESS_KEY_ID: "AKID", AWS_SECRET_ACCESS_KEY: "s", AWS_REGION: "us-east-1" },
      { AWS_ACCESS_KEY_ID: "AKID", AWS_SECRET_ACCESS_KEY: "s" },
      { AWS_BEARER_TOKEN_BEDROCK: "t", AWS_DEFAULT_REGION: "eu-west-1" },
      { AWS_PROFILE: "dev" },
      { GOOGLE_CLOUD_PROJECT: "p", GOOGLE_APPLICATION_CREDENTIALS: keyFile },
      { GOOGLE_CLOUD_PROJECT: "p", GOOGLE_APPLICATION_CREDENTIALS: join(home, "missing.json") },
      { GCLOUD_PROJECT: "p", K_SERVICE: "agent" },
    ];
    const outcome = async (env: Record<string, string | undefined>) =>
      createProviderFromEnv({ env }).then(
        (chosen) => ({ provider: chosen.providerName, model: chosen.model }),
        (error: ConfigurationError) => ({ setting: error.setting }),
      );
    for (const variables of environments) {
      const detected = await outcome(isolated(variables));
      const provider =
        "provider" in detected
          ? detected.provider
          : Object.keys(variables)[0]?.startsWith("AWS")
            ? "bedrock"
            : "vertex";
      const explicit = await outcome(isolated({ ...variables, UNFORGET_PROVIDER: provider }));
      expect(explicit, JSON.stringify(variables)).toEqual(detected);
    }
  });

  it("says where requests go when an endpoint of one's own is set, and nothing for the provider's own service", async () => {
    const endpointOf = async (variables: Record<string, string>) =>
      (await createProviderFromEnv({ env: isolated(variables) })).endpoint;
    expect(await endpointOf({ ANTHROPIC_BASE_URL: "http://127.0.0.1:9/" })).toBe("http://127.0.0.1:9");
    expect(await endpointOf({ ANTHROPIC_API_KEY: "k" })).toBeUndefined();
    const aws = { AWS_ACCESS_KEY_ID: "AKID", AWS_SECRET_ACCESS_KEY: "s", AWS_REGION: "us-east-1" };
    expect(await endpointOf({ ...aws, AWS_ENDPOINT_URL_BEDROCK_RUNTIME: "http://127.0.0.1:8" })).toBe(
      "http://127.0.0.1:8",
    );
    expect(await endpointOf(aws)).toBeUndefined();
    expect(
      await endpointOf({
        GOOGLE_CLOUD_PROJECT: "p",
        GOOGLE_APPLICATION_CREDENTIALS: keyFile,
        GOOGLE_VERTEX_API_ENDPOINT: "127.0.0.1:7",
      }),
    ).toBe("127.0.0.1:7");
  });

  it("picks the provider from the credentials present, Anthropic first, with each provider's default model", async () => {
    const anthropic = await createProviderFromEnv({
      env: isolated({ ANTHROPIC_API_KEY: "k", AWS_PROFILE: "dev" }),
    });
    expect([anthropic.providerName, anthropic.provider.providerId, anthropic.model]).toEqual([
      "anthropic",
      "anthropic",
      "claude-sonnet-4-6",
    ]);
    expect(anthropic.reason).toBe("ANTHROPIC_API_KEY is set");

    const bedrock = await createProviderFromEnv({
      env: isolated({ AWS_ACCESS_KEY_ID: "AKID", AWS_SECRET_ACCESS_KEY: "secret", AWS_REGION: "us-east-1" }),
    });
    expect([bedrock.providerName, bedrock.provider.providerId, bedrock.model]).toEqual([
      "bedrock",
      "bedrock",
      "us.anthropic.claude-sonnet-4-6",
    ]);
    const bearer = isolated({ AWS_BEARER_TOKEN_BEDROCK: "t", AWS_REGION: "us-west-2" });
    expect((await createProviderFromEnv({ env: bearer })).providerName).toBe("bedrock");
    const profile = isolated({ AWS_PROFILE: "dev", AWS_REGION: "us-west-2" });
    expect((await createProviderFromEnv({ env: profile })).providerName).toBe("bedrock");

    const vertex = await createProviderFromEnv({
      env: isolated({ GOOGLE_CLOUD_PROJECT: "proj", GOOGLE_APPLICATION_CREDENTIALS: keyFile }),
    });
    expect([vertex.providerName, vertex.provider.providerId, vertex.model]).toEqual([
      "vertex",
      "vertex",
      "gemini-2.5-pro",
    ]);
  });

  it("lets UNFORGET_PROVIDER override detection and UNFORGET_MODEL override the model", async () => {
    const chosen = await createProviderFromEnv({
      env: isolated({
        ANTHROPIC_API_KEY: "k",
        UNFORGET_PROVIDER: "Vertex",
        GOOGLE_CLOUD_PROJECT: "proj",
        GOOGLE_APPLICATION_CREDENTIALS: keyFile,
        UNFORGET_MODEL: "gemini-2.5-flash",
      }),
    });
    expect(chosen.providerName).toBe("vertex");
    expect(chosen.model).toBe("gemini-2.5-flash");
    expect(chosen.reason).toBe("UNFORGET_PROVIDER=vertex");
  });

  it("builds a working Anthropic provider from the environment (against the Anthropic fake)", async () => {
    const fake = await startAnthropicFake();
    try {
      const { provider, model } = await createProviderFromEnv({
        env: isolated({
          UNFORGET_PROVIDER: "anthropic",
          ANTHROPIC_API_KEY: "sk-ant-env",
          ANTHROPIC_BASE_URL: fake.url,
          ANTHROPIC_CUSTOM_HEADERS: "X-Gateway-Tenant: team-a",
        }),
      });
      fake.enqueue({ kind: "reply", text: "configured by environment" });
      const response = await provider.createMessage(hello(model));
      expect(response.content).toEqual([{ type: "text", text: "configured by environment" }]);
      expect(fake.requests[0]?.headers.authorization).toBe("Bearer sk-ant-env");
      expect(fake.requests[0]?.headers["x-gateway-tenant"]).toBe("team-a");
      expect(fake.requests[0]?.body).toMatchObject({ model: "claude-sonnet-4-6" });
    } finally {
      await fake.close();
    }
  });

  it("builds a working Bedrock provider from AWS credentials in the environment (against the Bedrock fake)", async () => {
    const fake = await startBedrockFake();
    try {
      const { provider, model } = await createProviderFromEnv({
        env: isolated({
          AWS_ACCESS_KEY_ID: fake.credentials.accessKeyId,
          AWS_SECRET_ACCESS_KEY: fake.credentials.secretAccessKey,
          AWS_REGION: fake.region,
          UNFORGET_MODEL: "anthropic.claude-sonnet-4-6",
        }),
        bedrock: { baseURL: fake.url },
      });
      fake.enqueue({ kind: "reply", text: "hello from bedrock" });
      const response = await provider.createMessage(hello(model));
      expect(response.content).toEqual([{ type: "text", text: "hello from bedrock" }]);
      expect(fake.requests[0]?.path).toContain("/converse");
      expect(fake.requests[0]?.headers.authorization).toContain(
        `Credential=${fake.credentials.accessKeyId}/`,
      );
    } finally {
      await fake.close();
    }
  });

  it("AWS_PROFILE reaches the SDK: the profile's keys sign the request, its region from the config file is used", async () => {
    const fake = await startBedrockFake({ region: "eu-central-1" });
    const files = mkdtempSync(join(tmpdir(), "unforget-aws-"));
    try {
      mkdirSync(files, { recursive: true });
      writeFileSync(
        join(files, "config"),
        "[default]\nregion = us-east-1\n\n[profile agent]\nregion = eu-central-1\n",
      );
      writeFileSync(
        join(files, "credentials"),
        `[agent]\naws_access_key_id = AKIDPROFILEAGENT\naws_secret_access_key = ${fake.credentials.secretAccessKey}\n`,
      );
      const { provider, providerName, reason } = await createProviderFromEnv({
        env: isolated({
          AWS_PROFILE: "agent",
          AWS_CONFIG_FILE: join(files, "config"),
          AWS_SHARED_CREDENTIALS_FILE: join(files, "credentials"),
          UNFORGET_MODEL: "anthropic.claude-sonnet-4-6",
        }),
        bedrock: { baseURL: fake.url },
      });
      expect(providerName).toBe("bedrock");
      expect(reason).toContain("AWS_PROFILE");
      fake.enqueue({ kind: "reply", text: "signed by the profile" });
      const response = await provider.createMessage(hello("anthropic.claude-sonnet-4-6"));
      expect(response.content).toEqual([{ type: "text", text: "signed by the profile" }]);
      expect(fake.requests[0]?.headers.authorization).toContain("Credential=AKIDPROFILEAGENT/");
      expect(fake.requests[0]?.headers.authorization).toContain("/eu-central-1/bedrock/aws4_request");
    } finally {
      rmSync(files, { recursive: true, force: true });
      await fake.close();
    }
  });

  it("refuses an option it does not read, and the chosen provider refuses a setting it does not read", async () => {
    const misspelt = await configurationError(() =>
      createProviderFromEnv({ env: isolated(), bedrok: { region: "eu-west-1" } } as object),
    );
    expect(misspelt.message).toBe(
      'createProviderFromEnv() has no setting "bedrok", so it would be ignored. Did you mean "bedrock"?',
    );
    const endpoint = await configurationError(() =>
      createProviderFromEnv({
        env: isolated({
          UNFORGET_PROVIDER: "bedrock",
          AWS_REGION: "us-east-1",
          AWS_BEARER_TOKEN_BEDROCK: "k",
        }),
        bedrock: { endpoint: "http://127.0.0.1:1" } as object,
      }),
    );
    expect(endpoint.message).toContain('createBedrockProvider() has no setting "endpoint"');
    expect(endpoint.message).toContain('Here the setting is "baseURL"');
  });

  it("gives every provider a current default model: none is deprecated", async () => {
    for (const name of PROVIDER_NAMES) {
      const loaded = await loadProviderPackage(name);
      expect(loaded, name).toBeDefined();
      expect(modelRetirement(loaded?.defaultModel ?? ""), `${name}: ${loaded?.defaultModel}`).toBeUndefined();
    }
  });
});
