export type { FaultProxy } from "./fault-proxy.ts";
export { createFaultProxy } from "./fault-proxy.ts";
export type { PgTestServer, PrivatePgServer } from "./pg-server.ts";
export { createPrivatePgServer, pgServerFromEnvironment } from "./pg-server.ts";
