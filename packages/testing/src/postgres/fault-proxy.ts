import { connect as connectTcp, createServer, type Socket } from "node:net";

/** A TCP proxy between a client and a server, with switches that break the connection in chosen ways. */
export interface FaultProxy {
  readonly host: string;
  readonly port: number;
  /** Connections open through the proxy now. */
  readonly connections: number;
  /** Closes every open connection at once (both sides reset), as a dropped network does. */
  cut(): void;
  /**
   * For `ms` milliseconds nothing moves in either direction, and new connections stall; then everything
   * sent meanwhile is delivered. A half-open network: the client sees no error, only silence.
   */
  blackhole(ms: number): Promise<void>;
  /**
   * Arms a cut for the next COMMIT: it reaches the server and commits, and the connection is cut before the
   * reply comes back, so the client cannot know whether it committed. Resolves once it happened. `statement`
   * also arms it for a statement that commits on its own (sent outside BEGIN … COMMIT) whose SQL matches.
   */
  cutAfterCommit(options?: { statement?: RegExp }): Promise<void>;
  close(): Promise<void>;
}

// A simple-protocol Query message carrying exactly "COMMIT": 'Q', length 11, the text and its NUL.
const COMMIT_MESSAGE = Buffer.concat([Buffer.from([0x51, 0, 0, 0, 11]), Buffer.from("COMMIT\0", "latin1")]);

interface Pair {
  client: Socket;
  server: Socket | undefined;
  /** The last bytes the client sent, to find a COMMIT split across chunks. */
  tail: Buffer;
  /** Set once an armed COMMIT went to the server: its reply is dropped and the connection cut. */
  commitSent?: (() => void) | undefined;
}

/** Starts a proxy on 127.0.0.1 (a free port) to `target`. */
export async function createFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const pairs = new Set<Pair>();
  let stalledUntil: Promise<void> | undefined;
  let armed: { resolve: () => void; statement: RegExp | undefined } | undefined;

  const destroy = (pair: Pair) => {
    pair.client.destroy();
    pair.server?.destroy();
    pairs.delete(pair);
  };

  const listener = createServer((client) => {
    const pair: Pair = { client, server: undefined, tail: Buffer.alloc(0) };
    pairs.add(pair);
    client.pause();
    client.on("error", () => destroy(pair));
    client.on("close", () => destroy(pair));
    const open = () => {
      if (!pairs.has(pair)) return;
      const server = connectTcp(target.port, target.host);
      pair.server = server;
      server.on("error", () => destroy(pair));
      server.on("close", () => destroy(pair));
      server.on("data", (chunk) => {
        if (pair.commitSent) {
          // The server answered the COMMIT: it is done there; the client never hears.
          pair.commitSent();
          return;
        }
        forward(server, client, chunk);
      });
      client.on("data", (chunk) => {
        const seen = Buffer.concat([pair.tail, chunk]);
        // Only a COMMIT that ends in this chunk counts: the tail may hold the last transaction's.
        const at = seen.lastIndexOf(COMMIT_MESSAGE);
        const inThisChunk = at !== -1 && at + COMMIT_MESSAGE.length > pair.tail.length;
        pair.tail = seen.subarray(Math.max(0, seen.length - COMMIT_MESSAGE.length));
        // A statement's text is in its Query ('Q') or Parse ('P') message, whole within one client write.
        const statement = armed?.statement?.test(chunk.toString("utf8")) === true;
        if (armed && (inThisChunk || statement)) {
          const done = armed.resolve;
          armed = undefined;
          pair.commitSent = () => {
            pair.commitSent = undefined;
            destroy(pair);
            done();
          };
        }
        forward(client, server, chunk);
      });
      client.resume();
    };
    if (stalledUntil) void stalledUntil.then(open);
    else open();
  });

  // While stalled, a side's data waits in the proxy: reading pauses until the stall ends.
  const forward = (from: Socket, to: Socket, chunk: Buffer) => {
    if (!stalledUntil) {
      to.write(chunk);
      return;
    }
    from.pause();
    void stalledUntil.then(() => {
      to.write(chunk);
      from.resume();
    });
  };

  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const address = listener.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no TCP address");

  return {
    host: "127.0.0.1",
    port: address.port,
    get connections() {
      return pairs.size;
    },
    cut() {
      for (const pair of [...pairs]) {
        pair.client.resetAndDestroy();
        pair.server?.resetAndDestroy();
        pairs.delete(pair);
      }
    },
    blackhole(ms) {
      let end: () => void = () => undefined;
      const until = new Promise<void>((resolve) => {
        end = resolve;
      });
      stalledUntil = until;
      for (const pair of pairs) {
        pair.client.pause();
        pair.server?.pause();
      }
      return new Promise<void>((resolve) => {
        setTimeout(() => {
          if (stalledUntil === until) stalledUntil = undefined;
          end();
          for (const pair of pairs) {
            pair.client.resume();
            pair.server?.resume();
          }
          resolve();
        }, ms);
      });
    },
    cutAfterCommit(options = {}) {
      return new Promise<void>((resolve) => {
        armed = { resolve, statement: options.statement };
      });
    },
    async close() {
      for (const pair of [...pairs]) destroy(pair);
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
