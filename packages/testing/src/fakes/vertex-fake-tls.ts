import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, sep } from "node:path";

/**
 * Test-only TLS identity of the Vertex fake: a self-signed P-256 certificate for 127.0.0.1 and localhost,
 * valid until 2126, which is also its own CA. It exists because `@google-cloud/vertexai` hard-codes
 * `https://`; the private key protects nothing and must never be trusted outside tests.
 */
export const VERTEX_FAKE_CA_CERTIFICATE = `-----BEGIN CERTIFICATE-----
MIIB2jCCAX+gAwIBAgIUKhTJv1qsBhfuzTu1jmO/sxUYI7wwCgYIKoZIzj0EAwIw
KzEpMCcGA1UEAwwgVW5mb3JnZXQgVmVydGV4IGZha2UgKHRlc3Qgb25seSkwIBcN
MjYxMTI2MDIzOTExWhgPMjEyNjExMDIwMjM5MTFaMCsxKTAnBgNVBAMMIFVuZm9y
Z2V0IFZlcnRleCBmYWtlICh0ZXN0IG9ubHkpMFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAExndD6uOxeG6muyXOFaLnhounqjywMR3hWj6qBqw9AnNzqXJwkySUoi2a
127UbdhYUt6dpZQwNEcnwu9UJo+jg6N/MH0wHQYDVR0OBBYEFIRpeMq61PikFVVF
cV5Zm359GybjMB8GA1UdIwQYMBaAFIRpeMq61PikFVVFcV5Zm359GybjMBoGA1Ud
EQQTMBGHBH8AAAGCCWxvY2FsaG9zdDAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB
/wQEAwIChDAKBggqhkjOPQQDAgNJADBGAiEA+g2e1qPPT/DoafrlH0vwSHqqdmnS
072JPepII7GEazsCIQDF13K9091JY3BJLf+vEV3g8jyDRlKcWNUE5HdZqAZfMg==
-----END CERTIFICATE-----
`;

export const VERTEX_FAKE_PRIVATE_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgqSstXywIxQeZjAea
r2FLzLuyEimE4+uiMpJzJLWrRoahRANCAATGd0Pq47F4bqa7Jc4VoueGi6eqPLAx
HeFaPqoGrD0Cc3OpcnCTJJSiLZrXbtRt2FhS3p2llDA0RyfC71Qmj6OD
-----END PRIVATE KEY-----
`;

/**
 * Writes a CA bundle that trusts the fake (its certificate, plus the bundle `NODE_EXTRA_CA_CERTS` already
 * names, so other extra CAs stay trusted) and returns its path. Set `NODE_EXTRA_CA_CERTS` to that path in the
 * environment of the process that runs the SDK before it starts (e.g. vitest's `test.env` with
 * `pool: "forks"`): Node reads it only at start-up. Idempotent: when `NODE_EXTRA_CA_CERTS` already names a
 * bundle written here, that path is returned unchanged. The file is written atomically.
 */
export function writeVertexFakeCaCertificate(
  directory: string = join(tmpdir(), "unforget-vertex-fake"),
): string {
  const base = resolve(directory);
  const existing = process.env.NODE_EXTRA_CA_CERTS;
  if (existing && resolve(existing).startsWith(`${base}${sep}`) && existsSync(existing)) return existing;
  let bundle = VERTEX_FAKE_CA_CERTIFICATE;
  if (existing && existsSync(existing)) bundle += `\n${readFileSync(existing, "utf8")}`;
  const digest = createHash("sha256").update(bundle).digest("hex").slice(0, 16);
  const path = join(base, `vertex-fake-ca-${digest}.pem`);
  if (!existsSync(path)) {
    mkdirSync(base, { recursive: true });
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, bundle);
    renameSync(temporary, path);
  }
  return path;
}
