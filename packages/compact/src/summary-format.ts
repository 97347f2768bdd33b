/** The nine sections every compaction summary has, in order. */
export const SUMMARY_SECTIONS: readonly string[] = Object.freeze([
  "Primary Request and Intent",
  "Key Technical Concepts",
  "Files and Code Sections",
  "Errors and Fixes",
  "Problem Solving",
  "All User Messages",
  "Pending Tasks",
  "Current Work",
  "Optional Next Step",
]);

const headingPattern = (title: string) =>
  new RegExp(
    `^\\s*(?:#{1,6}\\s*)?(?:\\*\\*)?\\s*(?:\\d+[.)]\\s*)?${title.replace(/ /g, "\\s+")}\\s*(?:\\*\\*)?\\s*:?\\s*(?:\\*\\*)?\\s*$`,
    "im",
  );

/** The sections a summary lacks (a heading may be `## 3. Title`, `3. Title:`, `**Title**`, …). */
export function missingSections(summary: string): string[] {
  return SUMMARY_SECTIONS.filter((title) => !headingPattern(title).test(summary));
}

/**
 * A model's compaction reply as it is kept: the `<analysis>` scratchpad removed, the content of `<summary>`
 * when there is one (else the whole reply), trimmed.
 */
export function formatSummaryReply(reply: string): string {
  const withoutAnalysis = reply.replace(/<analysis>[\s\S]*?(?:<\/analysis>|$)/gi, "");
  const match = /<summary>([\s\S]*?)(?:<\/summary>|$)/i.exec(withoutAnalysis);
  return (match ? match[1]! : withoutAnalysis).trim();
}

/** Splits a summary into its sections by the nine headings; text before the first heading is dropped. */
export function parseSummarySections(summary: string): Map<string, string> {
  const positions: { title: string; start: number; bodyStart: number }[] = [];
  for (const title of SUMMARY_SECTIONS) {
    const match = headingPattern(title).exec(summary);
    if (match) positions.push({ title, start: match.index, bodyStart: match.index + match[0].length });
  }
  positions.sort((a, b) => a.start - b.start);
  const sections = new Map<string, string>();
  positions.forEach((position, index) => {
    const end = positions[index + 1]?.start ?? summary.length;
    sections.set(position.title, summary.slice(position.bodyStart, end).trim());
  });
  return sections;
}

/** Renders the nine sections as markdown headings `## N. Title`, empty ones saying so. */
export function renderSummarySections(sections: ReadonlyMap<string, string>): string {
  return SUMMARY_SECTIONS.map((title, index) => {
    const body = sections.get(title)?.trim();
    return `## ${index + 1}. ${title}\n${body && body.length > 0 ? body : "- (nothing recorded)"}`;
  }).join("\n\n");
}
