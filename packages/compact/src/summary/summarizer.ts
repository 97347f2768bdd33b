import type { Message, TextBlock, ToolDefinition } from "@unforget/core";

/** Which part of the conversation a summary stands for. */
export type SummaryScope =
  /** Everything given; nothing before it stays. */
  | "all"
  /** The older part: the messages after it stay verbatim after the summary. */
  | "up_to"
  /** The recent part: the messages before it stay verbatim before the summary. */
  | "from";

/** The request parameters of the live loop, reused so that a model summary shares its prompt-cache prefix. */
export interface CacheSafeParameters {
  system?: string | TextBlock[];
  tools?: ToolDefinition[];
  /** The main loop's output limit; reused unchanged (changing it would change the cache key). */
  maxTokens?: number;
}

export interface SummarizeRequest {
  /** The messages to summarise, prepared: media as `[image]` / `[document]`, re-injected attachments removed. */
  messages: Message[];
  scope: SummaryScope;
  /** The summary these messages continue from: a later compaction updates it instead of summarising a summary. */
  previousSummary?: string;
  /** Extra instructions: the user's first, then each PreCompact plugin's. */
  instructions?: string;
  /** Most tokens the summary should take. */
  maxTokens: number;
  /**
   * True when the caller keeps every user message verbatim beside the summary (the ladder does): the summary
   * need not quote them whole.
   */
  userMessagesCarried?: boolean;
  /** The live loop's system, tools and output limit (model summarizers reuse them). */
  cacheSafe?: CacheSafeParameters;
  signal?: AbortSignal;
  /** Called every 30 s while a model call is running, so IDE connections are kept alive. */
  onKeepAlive?: () => void;
}

export interface SummaryResult {
  /** The summary with its nine sections (the analysis scratchpad already removed). */
  text: string;
  /** Input tokens the summariser spent (0 for the extractive one). */
  inputTokens: number;
  /** Output tokens it spent. */
  outputTokens: number;
  /** Model calls it made (0 for the extractive one). */
  calls: number;
}

/** Writes a compaction summary. Two ship with the package: `createModelSummarizer` and `createExtractiveSummarizer`. */
export interface Summarizer {
  /** "model", "extractive", or a custom name; shown in reports. */
  readonly name: string;
  /**
   * True when a model reads the input, so its window bounds it: callers then trim the input to fit before
   * the call. Summarisers that call no model leave it unset and get everything.
   */
  readonly boundedByModelWindow?: boolean;
  /**
   * Called by a compaction with the messages to summarise. Resolves to a summary that has all nine
   * sections. Rejects with `PromptTooLongError` when the input did not fit (the caller truncates and retries)
   * or with `CompactionFailedError` for anything else.
   */
  summarize(request: SummarizeRequest): Promise<SummaryResult>;
}
