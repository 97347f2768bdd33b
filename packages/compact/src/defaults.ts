/**
 * Every tuning number of the ladder, named once. Each says where it came from: the value a public system that
 * does the same job uses, with why it fits (Claude Code; learn-claude-code, a teaching re-implementation of it;
 * BaseAgent, an open-source agent whose pruning follows OpenCode; the Anthropic API's documented defaults), a
 * paper, the replay benchmark (`packages/compact/bench`, results in BENCHMARKS.md), or a judgement call that no
 * benchmark has tuned yet (said as such). Shares are of the auto-compact threshold unless they say otherwise;
 * token sizes written for a 200K window are scaled by `threshold / REFERENCE_THRESHOLD_TOKENS` (never above 1).
 */

// ── Scale ────────────────────────────────────────────────────────────────────────────────────────────────

/**
 * The threshold the 200K-window sizes below were written for: a 200K window less a 20K reserve for the summary's
 * own output and a 13K buffer for the growth of one response between two checks (Claude Code's auto-compact
 * threshold, about 167K at 200K).
 */
export const REFERENCE_THRESHOLD_TOKENS = 167_000;

// ── Scheduling: when the cheap layers and the summaries act (the fixed-level policy) ────────────────────────

/**
 * Share of the threshold at which the cheap layers act, all in one call so the prompt cache breaks once.
 * Benchmark: at 75 % the ladder made 30+ small folds and cost 1.11× BaseAgent; at 95 % it cost 1.00× (BENCHMARKS.md, "What the tuning found").
 */
export const CHEAP_LEVEL = 0.95;
/** The cheap layers fold down to this share of the threshold, so that each cache break buys many calls of growth. Benchmark, as above. */
export const CHEAP_TARGET = 0.3;
/** A cheap layer acts only when it frees at least this share of the threshold (each act breaks the cache). Benchmark, as above. */
export const CHEAP_MINIMUM_SHARE = 0.2;
/**
 * Share of the threshold at which a summary starts in the background, when the cheap layers alone will not
 * keep the context down. BaseAgent compacts at 85 % of its usable window; here it only starts the work.
 */
export const EARLY_MARK = 0.85;

/**
 * A finished background summary is spliced in at the threshold only if it frees at least this share of the
 * threshold (half what a cheap layer must free); short of that the conversation has outgrown it. Background
 * benchmark (BENCHMARKS.md).
 */
export const BACKGROUND_MINIMUM_SHARE = 0.1;

// ── Scheduling: the working-set policy ─────────────────────────────────────────────────────────────────

/**
 * The working set's hard ceiling, as a share of the threshold: past it the cheap layers fall to the floor (every
 * completed round but the last two folded into records) in one break, whatever rent was paid. Benchmark: a
 * ceiling at 12 % of the threshold (20K at 200K, the simple policy's) cost the long single-task sessions 0.29×
 * BaseAgent at 200K with 84 % prefix reuse, against 0.28× and 89 % with none; at 35–50 % it never bound at 200K
 * and cost more at 32K (0.64–0.65× against 0.62×). Ski rental sets the ceiling; this one stays the threshold
 * (BENCHMARKS.md, decision 0032).
 */
export const WORKING_SET_CEILING_SHARE = 1;
/**
 * A fold between climbs frees at least this share of the threshold (11,700 tokens at 200K), as Anthropic's
 * context editing asks `clear_at_least` of a clearing: a break must free enough to pay its rewrite. Benchmark,
 * long single-task sessions at 200K with the 8,000-character cap: 0, 0.05, 0.06, 0.07 and 0.1 (generated sessions
 * alone) gave 0.288×, 0.298×, 0.299×, 0.303× and 0.316× BaseAgent with 89.0 %, 90.6 %, 91.1 %, 91.7 % and 93.7 %
 * prefix reuse and fewer results read again as it grows; with the 6,000-character cap 0.07 gives 0.288× and
 * 92.5 %, keeping both targets (≤ 0.3×, ≥ 90 %) with a margin (BENCHMARKS.md, decision 0032).
 */
export const WORKING_SET_CLEAR_AT_LEAST_SHARE = 0.07;

/** Tokens the one-line record of a folded call takes, for the working-set policy's price of a fold. Judgement call: the records of the corpus replay run 15–40 tokens. */
export const RECORD_TOKENS_PER_CALL = 25;

// ── Guards: stall, thrash, breaker ─────────────────────────────────────────────────────────────────────

/** A summary that would leave at least this share of the estimated tokens has stalled: not applied, counted as a failure. Judgement call (decision 0012). */
export const STALL_FRACTION = 0.95;
/** A summary that leaves the context above this share of the threshold did not make enough room (the thrash guard). Judgement call (decision 0012). */
export const THRASH_FRACTION = 0.5;
/** Margin over what no compaction can remove (system, tools, summary, last round) before the thrash guard blames the layer. Judgement call. */
export const IRREDUCIBLE_MARGIN = 1.1;
/**
 * Consecutive failures that open a layer's circuit breaker: 3, as Claude Code's auto-compact and learn-claude-code
 * count them. A transient failure clears within a retry or two; beyond that, retrying only spends calls.
 */
export const BREAKER_THRESHOLD = 3;
/**
 * Calls an open breaker waits before the layer is tried once more (half-open). Judgement call: long enough
 * that a provider outage is not hammered, short enough that a cheap layer is back within a task.
 */
export const BREAKER_COOL_DOWN_CALLS = 20;
/** Compactions within this many user turns of the previous one extend the recompaction chain (status only). Judgement call. */
export const RECOMPACTION_CHAIN_TURNS = 3;
/** Calls whose growth is averaged for "compaction in about N turns". Judgement call. */
export const GROWTH_WINDOW_CALLS = 5;

// ── Tool-result budget (the first layer) ───────────────────────────────────────────────────────────────

/** Characters of tool results one user message may carry: 200,000, Claude Code's per-message limit (about 50K tokens, a quarter of a 200K window). Scaled down for small windows by `MESSAGE_RESULT_SHARE`. */
export const MAX_MESSAGE_RESULT_CHARS = 200_000;
/** Largest single tool result kept as it is: 50,000 characters (about 12K tokens), the cap Claude Code puts on one tool's output. */
export const MAX_RESULT_CHARS = 50_000;
/**
 * A new tool result longer than this is cut in the middle to it (head, tail and its first error line; the
 * transcript keeps it whole): about 1,500 tokens. Every token kept is written to the prompt cache once and read
 * on every later call. Benchmark, long single-task sessions at 200K (the outputs cut and then read again are
 * charged: "cleared then needed"): no cap 0.32× BaseAgent, 8,000 characters (the simple policy's baseline) 0.30×,
 * 7,000 0.29×, 6,000 0.28× with 92 % prefix reuse and no more results read again (BENCHMARKS.md, decision 0032).
 */
export const RESULT_CAP_CHARS = 6_000;
/** Smallest per-result limit, however small the window. Judgement call: a screenful of output. */
export const MIN_RESULT_CHARS = 2_000;
/** Share of the threshold one tool result may take (as characters ÷ 4), so that small windows cap sooner. Judgement call. */
export const RESULT_SHARE = 0.15;
/** Share of the threshold all the results of one message may take together (as characters ÷ 4). Judgement call: two such messages and the rest still fit. */
export const MESSAGE_RESULT_SHARE = 0.4;
/** Share of the threshold the newest user message may take before the budget cuts it in the middle. Judgement call. */
export const USER_MESSAGE_SHARE = 0.5;
/** Characters of a persisted output shown as a preview: 2,000, as Claude Code shows; enough to tell what the output is and where to read on. */
export const PREVIEW_CHARS = 2_000;
/** Characters a middle-cut result keeps (head and tail), about 2,500 tokens. Judgement call. */
export const TRUNCATE_CHARS = 10_000;
/** Characters per token assumed when a token budget is turned into characters: the usual rough rate for English text and code (OpenAI's and Anthropic's token guides both say about 4). */
export const CHARS_PER_TOKEN = 4;

// ── Microcompact ───────────────────────────────────────────────────────────────────────────────────────

/**
 * Idle minutes after which the prompt cache has expired anyway, so clearing costs nothing: 60, the longest
 * lifetime Anthropic's prompt caching offers (the 1-hour cache; the default lives 5 minutes). Claude Code's
 * time-based microcompact waits the same hour.
 */
export const IDLE_GAP_MINUTES = 60;
/** Results kept verbatim by the time-based path: 5, as Claude Code keeps; the newest results are what the model is working from. */
export const KEEP_RECENT_RESULTS = 5;
/** Prune: recent tool output never cleared, 40,000 tokens at 200K: BaseAgent's PRUNE_PROTECT (about the output of the current task). */
export const PRUNE_PROTECT_TOKENS = 40_000;
/** Prune: act only when this many tokens go, 20,000 at 200K: BaseAgent's PRUNE_MINIMUM (a smaller gain does not pay for the cache break). */
export const PRUNE_MINIMUM_TOKENS = 20_000;
/** Prune: user turns at the end whose outputs are never cleared. BaseAgent protects the last two turns (the one in progress and the one it builds on). */
export const PRUNE_PROTECT_TURNS = 2;

// ── Collapse, masking, snip ────────────────────────────────────────────────────────────────────────────

/** Rounds of tool calls at the end never folded when collapse is used on its own. Judgement call. */
export const COLLAPSE_PROTECT_ROUNDS = 4;
/** Rounds the manager's collapse never folds. Benchmark: two keep the thread of work at 16K–200K (BENCHMARKS.md). */
export const LADDER_COLLAPSE_PROTECT_ROUNDS = 2;
/**
 * Recent tool output collapse never folds beyond its protected rounds, as a share of the threshold. Benchmark:
 * with the working-set policy the long sessions cost 0.45× BaseAgent's input at 200K with 0.05 and 0.34× with
 * none (the demo 0.47× and 0.35×); with fixed levels it changed nothing (BENCHMARKS.md).
 */
export const COLLAPSE_PROTECT_SHARE = 0;
/** Records one collapse message shows at most (the middle ones are counted). Judgement call. */
export const COLLAPSE_MAX_RECORDS = 60;
/**
 * A finished turn's records condense into a digest only from this many calls (fewer are already short).
 * The digest keeps up to DIGEST_MAX_FAILED failed calls (each call cut to DIGEST_FAILED_CHARS, its outcome
 * kept up to its first error line, whole as FIRST_ERROR_LINE_CHARS allows; the last call too),
 * DIGEST_MAX_ACTIONS other actions (DIGEST_ACTION_CHARS each) and the paths of the last DIGEST_MAX_SAVED
 * outputs saved before they were cleared. Judgement calls, checked on the replay benchmark (error codes kept, cost).
 */
export const DIGEST_MIN_RECORDS = 2;
export const DIGEST_MAX_FAILED = 8;
export const DIGEST_FAILED_CHARS = 200;
export const DIGEST_MAX_ACTIONS = 6;
export const DIGEST_ACTION_CHARS = 48;
export const DIGEST_MAX_SAVED = 8;
/**
 * Tool outputs kept verbatim by observation masking: 10, the window with which masking matched LLM summaries on
 * SWE-bench Verified at about half the cost (Lindenbauer et al., "The Complexity Trap", DL4C workshop at NeurIPS 2025).
 */
export const MASK_KEEP_LAST = 10;
/** Snip when there are more messages than this: 50, learn-claude-code's snip (the current work fits in the last 47). */
export const SNIP_MAX_MESSAGES = 50;
/** Messages snip keeps at the head: 3, as learn-claude-code (the task as first stated and the first answer to it). */
export const SNIP_KEEP_HEAD = 3;
/** Characters of each user message a placeholder quotes. Judgement call (the extractive summary quotes as much). */
export const QUOTE_CHARS = 2_000;

// ── Summaries ──────────────────────────────────────────────────────────────────────────────────────────

/** Most tokens a summary may take: 20,000, Claude Code's summary output budget: its longest observed summaries (17,387 tokens at the 99.99th percentile) plus a margin. */
export const SUMMARY_MAX_TOKENS = 20_000;
/** Smallest summary budget, however small the window. Judgement call: the nine headings and a line each. */
export const SUMMARY_MIN_TOKENS = 500;
/** Share of the threshold a summary may take. Judgement call, as the tokens package's reserve (an eighth of the window, decision 0009). */
export const SUMMARY_SHARE = 0.15;
/** Tokens the compaction prompt adds to a model summary's input. Measured on `buildCompactPrompt` with every option. */
export const COMPACT_PROMPT_TOKENS = 4_000;
/** Smallest input a model summary is given. Judgement call. */
export const SUMMARY_MIN_INPUT_TOKENS = 1_000;
/** The summary's verbatim tail at 200K, in tokens. Benchmark: a one-round tail cost least (BENCHMARKS.md, "What the tuning found"). */
export const SUMMARY_KEEP_TOKENS = 8_000;
/** Smallest verbatim tail of a summary. Judgement call: one tool round. */
export const SUMMARY_MIN_KEEP_TOKENS = 600;
/** Prompt-too-long retries of one summary, each splitting what is left into smaller pieces: 3, as Claude Code retries. */
export const MAX_PTL_RETRIES = 3;
/** Files the extractive summary lists at most (the most recent). Judgement call, as Claude Code's 5 restored files × 6 mentioned. */
export const SUMMARY_MAX_FILES = 30;
/** Errors the extractive summary lists at most (the most recent). Judgement call. */
export const SUMMARY_MAX_ERRORS = 12;
/** Tokens the extractive summariser reports a model would have added to its input (the prompt). Measured on `buildCompactPrompt`. */
export const EXTRACTIVE_PROMPT_TOKENS = 1_200;
/**
 * A model's summary is used when it has at least this many of the nine sections; the others are filled in by the
 * offline extractor, marked as such. Judgement call: a majority, so that a reply in another agent's layout
 * (OpenCode's five headings, a Codex handoff) is used instead of costing a reminder and a second call.
 */
export const SUMMARY_MIN_SECTIONS = 5;
/**
 * Pieces a summary's input is split into at most when it does not fit the summariser's window: each piece is
 * summarised with the summary of the ones before it, so the oldest rounds reach the summary instead of being
 * left out. Beyond this many, the oldest pieces are summarised together by the offline extractor (no model
 * call). Judgement call: it bounds the model calls of one summary at eight (a piece may need a reminder).
 */
export const SUMMARY_MAX_PIECES = 4;
/**
 * Characters of each request the offline summary lists when the whole message is carried beside the summary.
 * Benchmark: at 300 the list of a long SWE-agent chain crowded the errors out of the 32K summaries (error codes
 * kept 6 of 10 instead of 8); 160 is the opening line or two (BENCHMARKS.md, decision 0030).
 */
export const SUMMARY_BRIEF_REQUEST_CHARS = 160;
/** A piece refused as too long is split again to this share of what the refusal says would have fitted (the prompt and the previous summary come on top). Judgement call. */
export const PTL_SPLIT_MARGIN = 0.9;
/** Characters of the first error line a summary keeps of a failed call. Judgement call: generous for one line (compiler and test lines run to 300). */
export const SUMMARY_ERROR_LINE_CHARS = 500;

// ── The user's messages carried by every summary ──────────────────────────────────────────────────────

/**
 * Share of a summary's budget the user's messages carried beside it may take before the older long ones are
 * shortened; the summariser gets the rest, so the summary message is no larger than before they were carried.
 * Background benchmark: carrying them on top of the summary's budget (10 % of the threshold more) left 9 of 12
 * background summaries applied instead of 13 of 15 (BENCHMARKS.md, decision 0030). Judgement call for the share.
 */
export const USER_MESSAGES_SHARE = 0.4;
/**
 * Share of the part a summary stands for that the carried messages may take at most, whatever the summary's
 * budget: a part that is mostly the user's own words must still shrink (the session's prompt-too-long recovery
 * once freed too little when six long questions were carried whole). Judgement call.
 */
export const USER_MESSAGES_SHARE_OF_SUMMARIZED = 0.25;
/**
 * The same share in a summary written to recover from a prompt-too-long refusal, which must get under a hard
 * limit (the cut messages stay whole on disk or in the transcript). Judgement call: the session's recovery test
 * after six long questions needs about a tenth.
 */
export const USER_MESSAGES_SHARE_OF_SUMMARIZED_REACTIVE = 0.1;
/** Smallest such budget, however small the window. Judgement call: a few requests of a paragraph each. */
export const USER_MESSAGES_MIN_TOKENS = 600;
/**
 * Characters an older long message is shortened to, level by level, until the carried messages fit their budget
 * (three quarters from its head, a quarter from its tail, the head never under the floor). Judgement call: a
 * paragraph, a few lines, then its opening and last words.
 */
export const CARRIED_USER_MESSAGE_LEVELS: readonly number[] = [2_000, 600, 160];
/**
 * The shortest a carried message is cut to: its first 100 characters, what the replay benchmark checks to count a
 * message as kept (its whole text stays on disk or in the transcript, and the cut says where). Past it, the oldest
 * are folded into one range of history ids instead (decision 0044).
 */
export const CARRIED_USER_MESSAGE_FLOOR_CHARS = 100;

// ── Session memory ─────────────────────────────────────────────────────────────────────────────────────

/** Session-memory compaction keeps at least 10,000 tokens verbatim at 200K, as Claude Code's (the notes stand for the rest; the tail carries the work in hand). */
export const NOTES_KEEP_MIN_TOKENS = 10_000;
/** … and at most 40,000 (as Claude Code's), so the compaction always frees most of the window. */
export const NOTES_KEEP_MAX_TOKENS = 40_000;
/** … and at least 5 messages with text (as Claude Code's), so the last exchange is never cut to tool output alone. */
export const NOTES_KEEP_MIN_TEXT_MESSAGES = 5;
/** Smallest maximum of that tail in small windows. Judgement call. */
export const NOTES_KEEP_FLOOR_TOKENS = 2_000;
/** How long a session-memory compaction waits for an extraction in flight. Judgement call (Claude Code also waits for one rather than use stale notes). */
export const EXTRACTION_WAIT_MS = 15_000;

// ── Reactive compaction ────────────────────────────────────────────────────────────────────────────────

/** Messages a reactive summary keeps at the end: 5, as learn-claude-code's reactive compact (the last exchange and its tool round). */
export const REACTIVE_KEEP_MESSAGES = 5;
/** The drain alone is enough when it removed the provider's excess plus this share of the context. Judgement call. */
export const REACTIVE_DRAIN_MARGIN = 0.1;
/**
 * Recoveries of one request (counted again once a response comes back): each must shrink the request, and the
 * last one leaves only the newest turn. Judgement call.
 */
export const MAX_RECOVERIES_PER_TURN = 3;

// ── Pins ───────────────────────────────────────────────────────────────────────────────────────────────

/**
 * Share of the context window pinned messages may take. Judgement call: a quarter leaves the summary, the recent
 * messages and the reply the rest, as the re-injected attachments' share does (`REHYDRATION_SHARE`).
 */
export const PIN_MAX_SHARE = 0.25;

// ── Rehydration ────────────────────────────────────────────────────────────────────────────────────────

/** Share of the threshold re-injected attachments may take after a compaction. Judgement call (a quarter of 167K is about Claude Code's 50K). */
export const REHYDRATION_SHARE = 0.25;
/**
 * Share of what a summary freed that its attachments may take back. Judgement call: at the threshold of a
 * 200K window a summary frees far more than twice the 50K budget, so this only binds on small contexts (a
 * manual compaction of a few files read), where restoring every file would undo the summary.
 */
export const ATTACHMENT_SHARE_OF_FREED = 0.5;
/** Files restored after a compaction: 5, as Claude Code restores (the files being edited, not every file read) … */
export const POST_COMPACT_MAX_FILES = 5;
/** … 5,000 tokens each (as Claude Code) … */
export const POST_COMPACT_MAX_TOKENS_PER_FILE = 5_000;
/** … 50,000 tokens in all (as Claude Code: a quarter of a 200K window, so the compaction keeps most of what it freed). */
export const POST_COMPACT_TOTAL_TOKENS = 50_000;
/** Invoked skills: 5,000 tokens each (as Claude Code) … */
export const POST_COMPACT_SKILL_TOKENS = 5_000;
/** … 25,000 in all (as Claude Code). */
export const POST_COMPACT_SKILLS_TOTAL_TOKENS = 25_000;

// ── Cache-break detection ──────────────────────────────────────────────────────────────────────────────

/** A drop in cache reads larger than this share of the previous reads is a cache break (smaller drops are the cache's own noise; Claude Code's detector uses the same bounds) … */
export const CACHE_BREAK_MIN_FRACTION = 0.05;
/** … if it is also more than this many tokens (a drop this small costs little whatever caused it). */
export const CACHE_BREAK_MIN_TOKENS = 2_000;

// ── Provider-native strategies ─────────────────────────────────────────────────────────────────────────

/**
 * Server-side tool-result clearing starts at 180,000 input tokens. Judgement call: later than the API's
 * documented default (100,000 input tokens, Anthropic's context-editing docs), so that at 200K the ladder's own
 * layers act first and the server clears only what they left …
 */
export const NATIVE_CLEAR_TRIGGER_TOKENS = 180_000;
/** … keeps the 3 most recent tool uses (the API's default) … */
export const NATIVE_CLEAR_KEEP_TOOL_USES = 3;
/** … and clears only when 20,000 tokens go, as prune (a smaller gain does not pay for the cache break). */
export const NATIVE_CLEAR_AT_LEAST_TOKENS = 20_000;
/** Idle time after which only the last thinking turn is kept: the prompt cache's hour, as `IDLE_GAP_MINUTES`. */
export const NATIVE_THINKING_IDLE_MS = IDLE_GAP_MINUTES * 60_000;
/** Threshold server compaction starts at 150,000 input tokens: the default Anthropic documents for server-side compaction. */
export const NATIVE_COMPACTION_TRIGGER_TOKENS = 150_000;

// ── Model summariser ───────────────────────────────────────────────────────────────────────────────────

/** Retries of a summary stream that broke after it started: 2, as Claude Code (a broken stream usually succeeds on the next try; a third failure is an outage). */
export const SUMMARY_STREAM_RETRIES = 2;
/** Keep-alive period while a summary is written: 30 s, as Claude Code (well inside the idle timeouts of common proxies). */
export const KEEP_ALIVE_INTERVAL_MS = 30_000;

// ── Records of cleared and folded outputs ──────────────────────────────────────────────────────────────

/** Error lines a record of a cleared or folded output keeps at most. Judgement call: the first error, its frame, one more. */
export const MAX_ERROR_LINES = 3;
/** Characters of each later error line a record keeps. Judgement call: an error message and its code, not the whole line. */
export const ERROR_LINE_CHARS = 160;
/**
 * Characters of the first error line a record keeps: whole, for any line a compiler or test runner prints
 * (a long TypeScript diagnostic with its paths runs 200–400), yet bounded against minified output. Judgement call.
 */
export const FIRST_ERROR_LINE_CHARS = 500;

/**
 * How many tool_use ids a summary names at each end of the span it replaced before it only counts the rest
 * (so the model can go to history_read). Judgement call: ten ids cost about 100 tokens, a fixed cost per summary.
 */
export const REPLACED_IDS_SHOWN_AT_EACH_END = 5;

// ── The continuation a removing layer carries (decision 0040, "The continuation contract") ────────────

/**
 * Share of a summary's budget the continuation (last user message, execution point, done actions, pending work,
 * open errors) may take; it comes out of the summary's budget, as the carried user messages do. Judgement call:
 * nine open errors with five lines each and a dozen done actions fit in about 1,500 tokens.
 */
export const CONTINUATION_SHARE = 0.25;
/** Smallest continuation budget, however small the window. Judgement call: a dozen errors named by call and id. */
export const CONTINUATION_MIN_TOKENS = 400;
/** Share of the replaced part the continuation may take at most, so a short span still shrinks. Judgement call, as the user messages' share. */
export const CONTINUATION_SHARE_OF_REPLACED = 0.25;
/** Done actions shown one a line (the most recent); older ones are counted with their history ids. Judgement call. */
export const CONTINUATION_DONE_SHOWN = 12;
/** Open errors shown with their lines; past that, named by call and id. Judgement call: a failing build rarely has more distinct failing calls. */
export const CONTINUATION_OPEN_ERRORS_SHOWN = 12;
/**
 * Open errors named one a line (the newest; those shown with their lines among them); older ones are counted
 * with the history ids of the first and last few, so the list is bounded however many calls failed. Judgement call.
 */
export const CONTINUATION_OPEN_ERRORS_LISTED = 24;
/** Error lines an open error keeps. Judgement call: the message, its frame and a few assertion lines. */
export const CONTINUATION_ERROR_LINES = 5;
/** Characters of the latest call's input the continuation shows. Judgement call: a command or a small JSON object. */
export const CONTINUATION_INPUT_CHARS = 300;
