import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A Google Compute metadata server on 127.0.0.1 that hands out one access token: google-auth-library finds it
 * through `GCE_METADATA_HOST` (with `METADATA_SERVER_DETECTION=assume-present`), as on a Google Cloud VM. It
 * lets the real CLI authenticate to the Vertex fake with nothing but environment variables.
 */
export async function startMetadataServer(token: string): Promise<{ host: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    response.setHeader("Metadata-Flavor", "Google");
    if (request.headers["metadata-flavor"] !== "Google") {
      response.writeHead(403).end("Missing Metadata-Flavor: Google");
      return;
    }
    const path = request.url ?? "";
    if (path.includes("/service-accounts/default/token")) {
      response.setHeader("Content-Type", "application/json");
      response.end(JSON.stringify({ access_token: token, expires_in: 3600, token_type: "Bearer" }));
    } else if (path.includes("/project/project-id")) {
      response.end("unforget-test");
    } else if (path.includes("/service-accounts/default/email")) {
      response.end("agent@unforget-test.iam.gserviceaccount.com");
    } else {
      response.setHeader("Content-Type", "application/json");
      response.end("{}");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
