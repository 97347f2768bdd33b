import { ConfigurationError } from "@unforget/core";
import { startAnthropicFake, startBedrockFake } from "@unforget/testing/fakes";
import { describe, expect, it } from "vitest";
import { createProviderFromEnv, DEFAULT_MODELS } from "./create-provider-from-env.ts";

const hello = (model: string) => ({
  model,
  maxTokens: 64,
  messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "hi" }] }],
});

function configurationError(run: () => unknown): ConfigurationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error("Expected a ConfigurationError.");
}

describe("createProviderFromEnv", () => {
  it("says exactly what to set when nothing is configured", () => {
    const error = configurationError(() => createProviderFromEnv({ env: {} }));
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

  it("rejects an unknown UNFORGET_PROVIDER and names the valid values", () => {
    const error = configurationError(() => createProviderFromEnv({ env: { UNFORGET_PROVIDER: "openai" } }));
    expect(error.message).toContain('"openai"');
    expect(error.message).toContain("anthropic, bedrock or vertex");
  });

  it("says what an explicitly chosen provider lacks", () => {
    expect(
      configurationError(() => createProviderFromEnv({ env: { UNFORGET_PROVIDER: "anthropic" } })).message,
    ).toContain("ANTHROPIC_API_KEY");
    expect(
      configurationError(() => createProviderFromEnv({ env: { UNFORGET_PROVIDER: "bedrock" } })).message,
    ).toContain("AWS_REGION");
    // A profile does not give the Bedrock provider a region: it would fail on its first call.
    expect(
      configurationError(() =>
        createProviderFromEnv({ env: { UNFORGET_PROVIDER: "bedrock", AWS_PROFILE: "dev" } }),
      ).message,
    ).toContain("AWS_REGION");
    expect(
      configurationError(() => createProviderFromEnv({ env: { UNFORGET_PROVIDER: "vertex" } })).message,
    ).toContain("GOOGLE_CLOUD_PROJECT");
  });

  it("picks the provider from the credentials present, Anthropic first, with per-provider default models", () => {
    const anthropic = createProviderFromEnv({ env: { ANTHROPIC_API_KEY: "k", AWS_PROFILE: "dev" } });
    expect([anthropic.providerName, anthropic.provider.providerId, anthropic.model]).toEqual([
      "anthropic",
      "anthropic",
      DEFAULT_MODELS.anthropic,
    ]);
    expect(anthropic.reason).toBe("ANTHROPIC_API_KEY is set");

    const bedrock = createProviderFromEnv({
      env: { AWS_ACCESS_KEY_ID: "AKID", AWS_SECRET_ACCESS_KEY: "secret", AWS_REGION: "us-east-1" },
    });
    expect([bedrock.providerName, bedrock.provider.providerId, bedrock.model]).toEqual([
      "bedrock",
      "bedrock",
      DEFAULT_MODELS.bedrock,
    ]);
    expect(
      createProviderFromEnv({ env: { AWS_BEARER_TOKEN_BEDROCK: "t", AWS_REGION: "us-west-2" } }).providerName,
    ).toBe("bedrock");
    expect(createProviderFromEnv({ env: { AWS_PROFILE: "dev" } }).providerName).toBe("bedrock");

    const vertex = createProviderFromEnv({
      env: { GOOGLE_CLOUD_PROJECT: "proj", GOOGLE_APPLICATION_CREDENTIALS: "/tmp/key.json" },
    });
    expect([vertex.providerName, vertex.provider.providerId, vertex.model]).toEqual([
      "vertex",
      "vertex",
      "gemini-2.5-pro",
    ]);
    // A project alone is not credentials: nothing is detected.
    configurationError(() => createProviderFromEnv({ env: { GOOGLE_CLOUD_PROJECT: "proj" } }));
  });

  it("lets UNFORGET_PROVIDER override detection and UNFORGET_MODEL override the model", () => {
    const chosen = createProviderFromEnv({
      env: {
        ANTHROPIC_API_KEY: "k",
        UNFORGET_PROVIDER: "Vertex",
        GOOGLE_CLOUD_PROJECT: "proj",
        UNFORGET_MODEL: "gemini-2.5-flash",
      },
    });
    expect(chosen.providerName).toBe("vertex");
    expect(chosen.model).toBe("gemini-2.5-flash");
    expect(chosen.reason).toBe("UNFORGET_PROVIDER=vertex");
  });

  it("builds a working Anthropic provider from the environment (against the Anthropic fake)", async () => {
    const fake = await startAnthropicFake();
    try {
      const { provider, model } = createProviderFromEnv({
        env: {
          UNFORGET_PROVIDER: "anthropic",
          ANTHROPIC_API_KEY: "sk-ant-env",
          ANTHROPIC_BASE_URL: fake.url,
          ANTHROPIC_CUSTOM_HEADERS: "X-Gateway-Tenant: team-a",
        },
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
    const saved = process.env.AWS_BEARER_TOKEN_BEDROCK;
    delete process.env.AWS_BEARER_TOKEN_BEDROCK;
    try {
      const { provider, model } = createProviderFromEnv({
        env: {
          AWS_ACCESS_KEY_ID: fake.credentials.accessKeyId,
          AWS_SECRET_ACCESS_KEY: fake.credentials.secretAccessKey,
          AWS_REGION: fake.region,
          UNFORGET_MODEL: "anthropic.claude-sonnet-4-5-20250929-v1:0",
        },
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
      if (saved !== undefined) process.env.AWS_BEARER_TOKEN_BEDROCK = saved;
      await fake.close();
    }
  });
});
