import { ProviderRequestError } from "@unforget/core";
import { describe, expect, it } from "vitest";
import { truncatedStreamError, unexpectedResponseError } from "./unexpected-response.ts";

const answerer = { providerId: "local", displayName: "The local API" };

describe("unexpectedResponseError", () => {
  it("names the content type and quotes the first bytes, never retryable", () => {
    const error = unexpectedResponseError(answerer, {
      contentType: "text/html",
      body: `<!DOCTYPE html>\n<html>${"x".repeat(400)}</html>`,
      expected: "a message",
    });
    expect(error).toBeInstanceOf(ProviderRequestError);
    expect(error.message).toContain(
      'answered 200 with text/html instead of a message: "<!DOCTYPE html> <html>xxx',
    );
    expect(error.message).toContain('…"');
    expect(error.message.length).toBeLessThan(400);
    expect([error.status, error.retryable, error.providerErrorType]).toEqual([
      200,
      false,
      "unexpected_response",
    ]);
  });

  it("tells the kind of body by its first bytes when the SDK hides the content type", () => {
    const said = (body: string) =>
      unexpectedResponseError(answerer, { contentType: undefined, body, expected: "JSON" }).message;
    expect(said("  <html><body>Sign in</body></html>")).toContain("what looks like text/html");
    expect(said('data: {"a":1}\n\n')).toContain("an event stream (text/event-stream)");
    expect(said('{"candidates":[]}')).toContain("JSON (application/json)");
  });

  it("quotes binary bodies with their control bytes as dots", () => {
    const message = unexpectedResponseError(answerer, {
      contentType: "application/vnd.amazon.eventstream",
      body: "\u0000\u0000\u0000v:event-type\u0007messageStart",
      expected: "JSON",
    }).message;
    expect(message).toContain('"···v:event-type·messageStart"');
  });
});

describe("truncatedStreamError", () => {
  it("is retryable, and says whether anything arrived", () => {
    expect(truncatedStreamError(answerer, 0).message).toContain("before its first event");
    expect(truncatedStreamError(answerer, 4).message).toContain("after 4 events");
    expect(truncatedStreamError(answerer, 4).retryable).toBe(true);
  });
});
