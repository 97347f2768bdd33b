import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  closeHttpServer,
  type FakeHttpRequest,
  fakeRequestListener,
  hangUntilClosed,
  sendJson,
} from "./fake-http.ts";

describe("fake-http", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  const start = async (
    handle: Parameters<typeof fakeRequestListener>[0],
  ): Promise<{ url: string; events: string[] }> => {
    const events: string[] = [];
    const server = createServer(
      fakeRequestListener(handle, (response, error) => {
        events.push(`failed: ${String(error)}`);
        sendJson(response, 500, { error: "fake failure" });
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    close = () => closeHttpServer(server);
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, events };
  };

  it("reads the request whole: lower-cased headers, JSON or raw body, undefined when empty", async () => {
    const seen: FakeHttpRequest[] = [];
    const { url } = await start(async (received, response) => {
      seen.push(received);
      sendJson(response, 200, { ok: true }, { "x-extra": "1" });
    });
    const json = await fetch(`${url}/a?b=1`, {
      method: "POST",
      body: '{"n":1}',
      headers: { "X-Tenant": "t" },
    });
    expect(json.headers.get("content-type")).toBe("application/json");
    expect(json.headers.get("x-extra")).toBe("1");
    expect(await json.json()).toEqual({ ok: true });
    await fetch(url, { method: "POST", body: "not json" });
    await fetch(url);
    expect(seen.map((request) => [request.method, request.url, request.body])).toEqual([
      ["POST", "/a?b=1", { n: 1 }],
      ["POST", "/", "not json"],
      ["GET", "/", undefined],
    ]);
    expect(seen[0]?.headers["x-tenant"]).toBe("t");
  });

  it("a failing handler answers through `failed` instead of leaving the client hanging", async () => {
    const { url, events } = await start(async () => {
      throw new Error("bug in the fake");
    });
    const response = await fetch(url);
    expect(response.status).toBe(500);
    expect(events).toEqual(["failed: Error: bug in the fake"]);
  });

  it("hangUntilClosed resolves when the client aborts, and marks the recorded request", async () => {
    const recorded: { closedDuringHang?: boolean } = {};
    let closed!: () => void;
    const sawClose = new Promise<void>((resolve) => {
      closed = resolve;
    });
    let hanging!: () => void;
    const reached = new Promise<void>((resolve) => {
      hanging = resolve;
    });
    const { url } = await start(async (_received, response) => {
      hanging();
      await hangUntilClosed(response, recorded);
      closed();
    });
    const controller = new AbortController();
    const pending = fetch(url, { signal: controller.signal }).catch((error: unknown) => error);
    // Abort once the server holds the request (a timer could fire before it arrives on a loaded machine).
    await reached;
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    await sawClose;
    expect(recorded.closedDuringHang).toBe(true);
  });
});
