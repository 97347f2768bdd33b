/**
 * Reads `ANTHROPIC_CUSTOM_HEADERS` the way Claude Code does: one `Name: value` header per line (`\n` or
 * `\r\n`). The name is what precedes the first colon, the value what follows it, both trimmed. Blank lines,
 * lines without a colon and lines with an empty or invalid header name are skipped; a later line with the
 * same name (in any case) replaces an earlier one.
 */
export function parseCustomHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (text === undefined) return headers;
  const names = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    if (!HEADER_NAME.test(name)) continue;
    const previous = names.get(name.toLowerCase());
    if (previous !== undefined) delete headers[previous];
    names.set(name.toLowerCase(), name);
    headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** An HTTP token (RFC 9110 §5.6.2): what a header name may contain. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
