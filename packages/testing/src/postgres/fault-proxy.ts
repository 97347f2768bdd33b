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

/** What one proxy holds: its open connection pairs, the stall in force and the armed commit cut. */
interface ProxyState {
  readonly target: { host: string; port: number };
  readonly pairs: Set<Pair>;
  stalledUntil: Promise<void> | undefined;
  armed: { resolve: () => void; statement: RegExp | undefined } | undefined;
}

/** Starts a proxy on 127.0.0.1 (a free port) to `target`. */
export async function createFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  const state: ProxyState = { target, pairs: new Set(), stalledUntil: undefined, armed: undefined };
  const { pairs } = state;
  const listener = createServer((client) => acceptClient(state, client));

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
    blackhole: (ms) => stall(state, ms),
    cutAfterCommit(options = {}) {
      return new Promise<void>((resolve) => {
        state.armed = { resolve, statement: options.statement };
      });
    },
    async close() {
      for (const pair of [...pairs]) destroyPair(state, pair);
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}

function destroyPair(state: ProxyState, pair: Pair): void {
  pair.client.destroy();
  pair.server?.destroy();
  state.pairs.delete(pair);
}

/** Takes a new client connection; it is joined to the server once no stall is in force. */
function acceptClient(state: ProxyState, client: Socket): void {
  const pair: Pair = { client, server: undefined, tail: Buffer.alloc(0) };
  state.pairs.add(pair);
  client.pause();
  client.on("error", () => destroyPair(state, pair));
  client.on("close", () => destroyPair(state, pair));
  if (state.stalledUntil) void state.stalledUntil.then(() => openPair(state, pair));
  else openPair(state, pair);
}

/** Connects a pair's server side and starts moving bytes both ways. */
function openPair(state: ProxyState, pair: Pair): void {
  if (!state.pairs.has(pair)) return;
  const { client } = pair;
  const server = connectTcp(state.target.port, state.target.host);
  pair.server = server;
  server.on("error", () => destroyPair(state, pair));
  server.on("close", () => destroyPair(state, pair));
  server.on("data", (chunk) => {
    if (pair.commitSent) {
      // The server answered the COMMIT: it is done there; the client never hears.
      pair.commitSent();
      return;
    }
    forward(state, server, client, chunk);
  });
  client.on("data", (chunk) => {
    watchForCommit(state, pair, chunk);
    forward(state, client, server, chunk);
  });
  client.resume();
}

/** Marks the pair for a cut when an armed COMMIT (or matching statement) is in what the client sent. */
function watchForCommit(state: ProxyState, pair: Pair, chunk: Buffer): void {
  const seen = Buffer.concat([pair.tail, chunk]);
  // Only a COMMIT that ends in this chunk counts: the tail may hold the last transaction's.
  const at = seen.lastIndexOf(COMMIT_MESSAGE);
  const inThisChunk = at !== -1 && at + COMMIT_MESSAGE.length > pair.tail.length;
  pair.tail = seen.subarray(Math.max(0, seen.length - COMMIT_MESSAGE.length));
  // A statement's text is in its Query ('Q') or Parse ('P') message, whole within one client write.
  const armed = state.armed;
  const statement = armed?.statement?.test(chunk.toString("utf8")) === true;
  if (armed && (inThisChunk || statement)) {
    const done = armed.resolve;
    state.armed = undefined;
    pair.commitSent = () => {
      pair.commitSent = undefined;
      destroyPair(state, pair);
      done();
    };
  }
}

// While stalled, a side's data waits in the proxy: reading pauses until the stall ends.
function forward(state: ProxyState, from: Socket, to: Socket, chunk: Buffer): void {
  const stalledUntil = state.stalledUntil;
  if (!stalledUntil) {
    to.write(chunk);
    return;
  }
  from.pause();
  void stalledUntil.then(() => {
    to.write(chunk);
    from.resume();
  });
}

/** Stops every byte (and new connections) for `ms` milliseconds, then lets everything through. */
function stall(state: ProxyState, ms: number): Promise<void> {
  let end: () => void = () => undefined;
  const until = new Promise<void>((resolve) => {
    end = resolve;
  });
  state.stalledUntil = until;
  for (const pair of state.pairs) {
    pair.client.pause();
    pair.server?.pause();
  }
  return new Promise<void>((resolve) => {
    setTimeout(() => {
      if (state.stalledUntil === until) state.stalledUntil = undefined;
      end();
      for (const pair of state.pairs) {
        pair.client.resume();
        pair.server?.resume();
      }
      resolve();
    }, ms);
  });
}
