import type { IncomingHttpHeaders } from "node:http";
import http2 from "node:http2";
import type { AddressInfo, Server } from "node:net";
import { FAKE_GATEWAY_PAGE, type RecordedRequest } from "./fake-script.ts";

/**
 * The HTTP plumbing the fake servers share, for HTTP/1.1 (`node:http`, `node:https`) and HTTP/2
 * (`node:http2` compatibility API) alike. Wire-specific headers and bodies stay in each fake.
 */

/** A request as the fakes read it: method, raw URL, lower-cased headers and the body. */
export interface FakeHttpRequest {
  method: string;
  /** Path and query as sent (`request.url`). */
  url: string;
  /** Lower-cased names; repeated headers joined with ", "; HTTP/2 pseudo-headers (`:path`, …) left out. */
  headers: Record<string, string>;
  /** Parsed JSON when the body is JSON, the raw text otherwise, undefined when empty. */
  body: unknown;
}

/** The part of `IncomingMessage` / `Http2ServerRequest` the fakes read. */
interface ReadableRequest extends AsyncIterable<unknown> {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
}

/** The part of `ServerResponse` / `Http2ServerResponse` the fakes write to. */
interface WritableResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body: string): unknown;
  once(event: "close", listener: () => void): unknown;
  destroy(): unknown;
}

/** Reads the whole request: called once per request, before the fake decides how to answer. */
async function readFakeRequest(request: ReadableRequest): Promise<FakeHttpRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(Buffer.from(chunk as Uint8Array));
  const text = Buffer.concat(chunks).toString("utf8");
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (name.startsWith(":") || value === undefined) continue;
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : String(value);
  }
  return { method: request.method ?? "GET", url: request.url ?? "/", headers, body: parseBody(text) };
}

function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A request listener for `createServer` / `server.on("request")`: reads each request whole and hands it to
 * `handle`. When `handle` itself fails (a bug in the fake), the client gets `failed`'s answer, or a reset
 * stream once the head was sent, never a hang.
 */
export function fakeRequestListener<Request extends ReadableRequest, Response extends WritableResponse>(
  handle: (received: FakeHttpRequest, response: Response) => Promise<void>,
  failed: (response: Response, error: unknown) => void,
): (request: Request, response: Response) => void {
  return (request, response) => {
    readFakeRequest(request)
      .then((received) => handle(received, response))
      .catch((error: unknown) => {
        if (response.headersSent) response.destroy();
        else failed(response, error);
      });
  };
}

/** Answers with a JSON body; `headers` may replace the `content-type` and add the provider's own headers. */
export function sendJson(
  response: WritableResponse,
  status: number,
  payload: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(payload));
}

/**
 * A scripted hang: never answers, and resolves when the connection (HTTP/1.1) or stream (HTTP/2) closes,
 * because the client cancelled the request or the fake is closing. Then marks `recorded.closedDuringHang`,
 * which is how a test sees that an abort really reached the network.
 */
export function hangUntilClosed(
  response: WritableResponse,
  recorded?: Pick<RecordedRequest, "closedDuringHang">,
): Promise<void> {
  return new Promise((resolve) => {
    response.once("close", () => {
      if (recorded) recorded.closedDuringHang = true;
      resolve();
    });
  });
}

/** Closes an HTTP/1.1 server, dropping open (and hanging) connections first. */
export function closeHttpServer(server: Server & { closeAllConnections(): void }): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** Waits `ms` milliseconds: scripted delays before an answer or between stream frames. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Starts a cleartext HTTP/2 (h2c) server on 127.0.0.1 with `listener`, and returns its port and a close
 * that first destroys open sessions (a hanging stream would otherwise keep `close` waiting).
 */
export async function listenHttp2(
  listener: (request: http2.Http2ServerRequest, response: http2.Http2ServerResponse) => void,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  server.on("request", listener);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A 200 with a gateway's HTML sign-in page, where the API's answer should have been. */
export function sendGatewayPage(response: WritableResponse): void {
  response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  response.end(FAKE_GATEWAY_PAGE);
}
