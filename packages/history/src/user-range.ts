import type { ItemRecord } from "./history-items.ts";

/** Characters of each message a range's listing shows, on one line. */
const LISTED_CHARS = 160;

/**
 * A range of the user's messages, `first..last` (two text item ids): what a summary names for the oldest messages
 * it folded instead of quoting. Item ids never hold `..`, so the first one splits it.
 */
export function parseUserRange(id: string): { first: string; last: string } | undefined {
  const at = id.indexOf("..");
  if (at <= 0 || at + 2 >= id.length) return undefined;
  return { first: id.slice(0, at), last: id.slice(at + 2) };
}

/** What `read` returns for a range: a listing, one line per text the user wrote in it, oldest first. */
export interface UserRangeListing {
  /** The first item of the range (its kind, turn and where it is). */
  record: ItemRecord;
  text: string;
  /** How many messages of the user it holds (a message with two text blocks is one). */
  messages: number;
}

/**
 * The user's texts from `first` to `last` inclusive (both must be texts the user wrote, in one transcript, in
 * that order), each with its id, turn, length and opening; undefined when the range does not resolve.
 */
export async function userRangeListing(
  items: ReadonlyMap<string, ItemRecord>,
  range: { first: string; last: string },
  textOf: (record: ItemRecord) => Promise<string | undefined>,
): Promise<UserRangeListing | undefined> {
  const start = items.get(range.first);
  const end = items.get(range.last);
  if (!start?.authored || !end?.authored || start.at.source !== end.at.source) return undefined;
  const inRange: ItemRecord[] = [];
  for (const record of items.values()) {
    if (inRange.length === 0 && record !== start) continue;
    if (record.authored && record.at.source === start.at.source) inRange.push(record);
    if (record === end) break;
  }
  if (inRange.at(-1) !== end) return undefined;
  const lines: string[] = [];
  const messages = new Set<string>();
  for (const record of inRange) {
    messages.add(record.id.slice(0, record.id.lastIndexOf(":")));
    const text = (await textOf(record)) ?? "";
    const opening = text.slice(0, LISTED_CHARS).replace(/\s+/g, " ").trim();
    lines.push(
      `- id=${record.id} turn ${record.turn}, ${text.length.toLocaleString("en-US")} chars: ${opening}${text.length > LISTED_CHARS ? "…" : ""}`,
    );
  }
  const header = `${messages.size} message${messages.size === 1 ? "" : "s"} of the user from ${range.first} to ${range.last}, oldest first; history_read of an id gives that one back exactly:`;
  return { record: start, text: [header, ...lines].join("\n"), messages: messages.size };
}
