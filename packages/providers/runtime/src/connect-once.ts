/**
 * Makes `connect` run on first use and remembers what it returned, so a provider reads its settings and
 * environment on the first request, never at import or construction. A failed connection is not
 * remembered: the next request tries again (after the caller fixed the environment, say).
 */
export function connectOnce<Client>(connect: () => Client | Promise<Client>): () => Promise<Client> {
  let connected: Promise<Client> | undefined;
  return () => {
    connected ??= Promise.resolve()
      .then(connect)
      .catch((error: unknown) => {
        connected = undefined;
        throw error;
      });
    return connected;
  };
}
