import type { LayerReport } from "@unforget/compact";

/**
 * Who wrote a summary, for the end of a line: ", by the model", ", by the offline summariser", and, when the
 * offline one stood in, why and when the model summariser is tried again. Empty for a layer that writes none.
 */
export function describeSummaryWriter(report: Pick<LayerReport, "summarizer" | "fallback">): string {
  const name = report.summarizer;
  if (name === undefined) return "";
  const writer =
    name === "extractive"
      ? "the offline summariser (no model)"
      : name === "model"
        ? "the model"
        : name === "session-memory"
          ? "the session notes"
          : `the ${name} summariser`;
  const fallback = report.fallback;
  if (fallback?.reason === "paused") {
    const retry =
      fallback.retryInCalls !== undefined && fallback.retryInCalls > 0
        ? `, tried again in ${fallback.retryInCalls} model call${fallback.retryInCalls === 1 ? "" : "s"}`
        : ", tried again at the next summary";
    return `, by ${writer}: the model summariser is paused after failing${retry}`;
  }
  if (fallback?.reason === "blocking-limit") {
    return `, by ${writer}: the context was at its limit, so no model was waited for`;
  }
  return `, by ${writer}`;
}
