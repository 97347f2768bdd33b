import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectHeldReply } from "../__fixtures__/held-reply.ts";
import { fakeTokenCount } from "./fake-script.ts";
import {
  startVertexFake,
  VERTEX_FAKE_CA_CERTIFICATE,
  type VertexFakeServer,
  writeVertexFakeCaCertificate,
} from "./vertex-fake.ts";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

const BASE = "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro";

/** A raw HTTPS call that trusts only the fake's certificate, as the SDK does under NODE_EXTRA_CA_CERTS. */
function call(
  fake: VertexFakeServer,
  path: string,
  body: unknown,
  authorization = "Bearer token",
): Promise<Answer> {
  const [host, port] = fake.endpoint.split(":");
  return new Promise((resolve, reject) => {
    const outgoing = httpsRequest(
      {
        host,
        port: Number(port),
        path,
        method: "POST",
        ca: fake.caCertificate,
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.on("end", () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
      },
    );
    outgoing.on("error", reject);
    outgoing.end(JSON.stringify(body));
  });
}

const BODY = {
  contents: [{ role: "user", parts: [{ text: "Weather in Paris?" }] }],
  systemInstruction: { role: "system", parts: [{ text: "Be terse." }] },
  generationConfig: { maxOutputTokens: 100 },
};

let fake: VertexFakeServer;
beforeAll(async () => {
  fake = await startVertexFake();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.setContextLimit(undefined);
  fake.requests.length = 0;
});

describe("Vertex fake", () => {
  it("serves generateContent over TLS with its test CA and records the request", async () => {
    fake.enqueue({
      kind: "reply",
      text: "Sunny.",
      toolCalls: [{ id: "ignored", name: "get_weather", input: { city: "Paris" } }],
    });
    const answer = await call(fake, `${BASE}:generateContent`, BODY);
    expect(answer.status).toBe(200);
    const response = JSON.parse(answer.text);
    expect(response.candidates[0].content).toEqual({
      role: "model",
      parts: [{ text: "Sunny." }, { functionCall: { name: "get_weather", args: { city: "Paris" } } }],
    });
    expect(response.candidates[0].finishReason).toBe("STOP");
    expect(response.usageMetadata.promptTokenCount).toBe(fake.countTokens(BODY));
    expect(fake.requests[0]).toMatchObject({ operation: "generateContent", body: BODY });
    expect(fake.requests[0]?.headers.authorization).toBe("Bearer token");
  });

  it("holds a reply until the test releases it, the request recorded meanwhile", async () => {
    await expectHeldReply(fake, async () => {
      const response = await call(fake, `${BASE}:generateContent`, BODY);
      return JSON.parse(response.text).candidates[0].content.parts[0]?.text;
    });
  });

  it("counts only contents, system instruction and tools, the same way for every endpoint", () => {
    expect(fake.countTokens(BODY)).toBe(
      fakeTokenCount({ contents: BODY.contents, systemInstruction: BODY.systemInstruction, tools: [] }),
    );
    expect(fake.countTokens({ ...BODY, generationConfig: { maxOutputTokens: 1 } })).toBe(
      fake.countTokens(BODY),
    );
  });

  it("streams SSE without event lines: one JSON per data line, usage and finish reason on the last chunk", async () => {
    fake.enqueue({
      kind: "reply",
      text: "A longer answer in pieces.",
      usage: { inputTokens: 10, outputTokens: 7 },
    });
    const answer = await call(fake, `${BASE}:streamGenerateContent?alt=sse`, BODY);
    expect(answer.headers["content-type"]).toBe("text/event-stream");
    expect(answer.text).not.toContain("event:");
    const frames = answer.text.split("\r\n\r\n").filter((frame) => frame !== "");
    expect(frames.length).toBeGreaterThan(1);
    const chunks = frames.map((frame) => {
      expect(frame.startsWith("data: ")).toBe(true);
      expect(frame.includes("\n")).toBe(false);
      return JSON.parse(frame.slice("data: ".length));
    });
    const text = chunks.map((chunk) => chunk.candidates[0].content.parts[0].text).join("");
    expect(text).toBe("A longer answer in pieces.");
    expect(chunks.at(-1).candidates[0].finishReason).toBe("STOP");
    expect(chunks.at(-1).usageMetadata).toMatchObject({
      promptTokenCount: 10,
      candidatesTokenCount: 7,
      totalTokenCount: 17,
    });
    expect(chunks[0].candidates[0].finishReason).toBeUndefined();
  });

  it("answers countTokens natively without consuming a scripted reply", async () => {
    fake.enqueue({ kind: "reply", text: "kept" });
    const counted = JSON.parse((await call(fake, `${BASE}:countTokens`, BODY)).text);
    expect(counted.totalTokens).toBe(fake.countTokens(BODY));
    const reply = JSON.parse((await call(fake, `${BASE}:generateContent`, BODY)).text);
    expect(reply.candidates[0].content.parts).toEqual([{ text: "kept" }]);
  });

  it("rejects over the context limit with Vertex's real 400 INVALID_ARGUMENT wording", async () => {
    fake.setContextLimit(3);
    const answer = await call(fake, `${BASE}:generateContent`, BODY);
    expect(answer.status).toBe(400);
    const counted = fake.countTokens(BODY);
    expect(JSON.parse(answer.text).error).toMatchObject({
      code: 400,
      status: "INVALID_ARGUMENT",
      message: `The input token count (${counted}) exceeds the maximum number of tokens allowed (3).`,
    });
  });

  it("sends 429 with retry-after and a RetryInfo detail, and 503 for overload", async () => {
    fake.enqueue(
      { kind: "error", error: "rate_limit", retryAfterSeconds: 7 },
      { kind: "error", error: "overloaded" },
    );
    const limited = await call(fake, `${BASE}:generateContent`, BODY);
    expect(limited.status).toBe(429);
    expect(limited.headers["retry-after"]).toBe("7");
    expect(JSON.parse(limited.text).error.details).toEqual([
      { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "7s" },
    ]);
    const overloaded = await call(fake, `${BASE}:generateContent`, BODY);
    expect(overloaded.status).toBe(503);
    expect(JSON.parse(overloaded.text).error.status).toBe("UNAVAILABLE");
  });

  it("puts a mid-stream error into the stream as an error chunk after the scripted chunks", async () => {
    fake.enqueue({
      kind: "error",
      error: "prompt_too_long",
      actualTokens: 11,
      limitTokens: 10,
      midStreamAfterEvents: 1,
    });
    const answer = await call(fake, `${BASE}:streamGenerateContent?alt=sse`, BODY);
    expect(answer.status).toBe(200);
    const frames = answer.text.split("\r\n\r\n").filter((frame) => frame !== "");
    expect(frames).toHaveLength(2);
    expect(JSON.parse(frames[1]?.slice(6) ?? "").error.message).toContain("input token count (11)");
  });

  it("requires a bearer token and answers unknown routes with JSON 404", async () => {
    const anonymous = await call(fake, `${BASE}:generateContent`, BODY, "");
    expect(anonymous.status).toBe(401);
    expect(JSON.parse(anonymous.text).error.status).toBe("UNAUTHENTICATED");
    const lost = await call(fake, "/v1/elsewhere", BODY);
    expect(lost.status).toBe(404);
    expect(JSON.parse(lost.text).error.code).toBe(404);
  });

  it("writes a CA bundle for NODE_EXTRA_CA_CERTS that keeps the CAs already named there", () => {
    const directory = mkdtempSync(join(tmpdir(), "vertex-ca-"));
    const previous = process.env.NODE_EXTRA_CA_CERTS;
    try {
      const other = join(directory, "corporate.pem");
      writeFileSync(other, "-----BEGIN CERTIFICATE-----\nCORPORATE\n-----END CERTIFICATE-----\n");
      process.env.NODE_EXTRA_CA_CERTS = other;
      const bundle = writeVertexFakeCaCertificate(join(directory, "fake"));
      const text = readFileSync(bundle, "utf8");
      expect(text.startsWith(VERTEX_FAKE_CA_CERTIFICATE)).toBe(true);
      expect(text).toContain("CORPORATE");
      process.env.NODE_EXTRA_CA_CERTS = bundle;
      expect(writeVertexFakeCaCertificate(join(directory, "fake"))).toBe(bundle);
      expect(fake.caCertificate).toBe(VERTEX_FAKE_CA_CERTIFICATE);
    } finally {
      if (previous === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
      else process.env.NODE_EXTRA_CA_CERTS = previous;
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
