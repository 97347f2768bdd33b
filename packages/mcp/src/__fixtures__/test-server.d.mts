import type { Server } from "@modelcontextprotocol/sdk/server/index.js";

/** The test server's tools on a fresh SDK `Server`; `writeRaw` writes bytes past the SDK (stdio only). */
export function createTestServer(options?: { writeRaw?: (text: string) => void }): Server;
