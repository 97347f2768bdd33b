import { UnforgetError } from "@unforget/core";

/** `read` of an id the session's history does not hold (a typo, or an id from another session). */
export class HistoryItemNotFoundError extends UnforgetError {
  /** The id as it was given. */
  readonly itemId: string;

  constructor(itemId: string) {
    super(
      "history_item_not_found",
      `No history item has the id "${itemId}". Use an id exactly as a search hit, a clearing marker or a summary names it (a tool call's id such as "toolu_…", a message part "<message id>:<part>", or a summary's id); search the history to find it.`,
    );
    this.itemId = itemId;
  }
}

/** `read` with an offset or limit outside the item (or not a whole number). */
export class HistoryRangeError extends UnforgetError {
  readonly itemId: string;
  /** The item's length in characters: valid offsets are 0 to this. */
  readonly totalChars: number;

  constructor(message: string, details: { itemId: string; totalChars: number }) {
    super("history_range", message);
    this.itemId = details.itemId;
    this.totalChars = details.totalChars;
  }
}

/** `openHistory` of a session whose transcript does not exist. */
export class HistorySessionNotFoundError extends UnforgetError {
  /** The transcript path that was looked for. */
  readonly transcriptPath: string;

  constructor(transcriptPath: string, options?: { cause?: unknown }) {
    super(
      "history_session_not_found",
      `No session transcript at ${transcriptPath}: check the session id (list the sessions to see them) and the sessions folder.`,
      options,
    );
    this.transcriptPath = transcriptPath;
  }
}
