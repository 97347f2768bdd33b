import { Box, Static, Text } from "ink";
import { foldOutput } from "./describe-call.ts";
import { describeDiff, type EditDiff, foldDiff } from "./edit-diff.ts";
import { renderMarkdown } from "./render-markdown.ts";
import {
  bar,
  describeNextCompaction,
  formatTokens,
  type HistoryItem,
  type PermissionQuestion,
  type StatusView,
  type TrustQuestion,
} from "./repl-state.ts";

/** One printed item of the conversation. */
export function HistoryEntry({
  item,
  width,
  verbose,
}: {
  item: HistoryItem;
  width: number;
  verbose: boolean;
}) {
  switch (item.kind) {
    case "user":
      return (
        <Box marginTop={1}>
          <Text color="gray">{"> "}</Text>
          <Text>{item.text}</Text>
        </Box>
      );
    case "assistant":
      return (
        <Box marginTop={1} flexDirection="column">
          <Text>{renderMarkdown(item.markdown, width - 2)}</Text>
        </Box>
      );
    case "tool": {
      if (item.diff) return <EditEntry item={item} diff={item.diff} verbose={verbose} />;
      const { shown, more } = verbose ? { shown: item.output.trimEnd(), more: 0 } : foldOutput(item.output);
      return (
        // As wide as the app draws, one column short of the terminal (a full last column makes it wrap).
        <Box marginTop={1} flexDirection="column" width={width}>
          <Text>
            <Text color={item.ok ? "green" : "red"}>{"⏺ "}</Text>
            <Text bold>{item.title}</Text>
            {item.status === "completed" ? "" : <Text color="red">{` ${item.status}`}</Text>}
          </Text>
          {shown === "" ? null : (
            // The result in a column of its own: a line the terminal wraps goes on under the text, not under ⎿.
            <Box paddingLeft={2} flexDirection="row">
              <Text color="gray">{"⎿ "}</Text>
              <Box flexDirection="column" flexShrink={1}>
                <Text color="gray">{`${shown}${more > 0 ? `\n… +${more} lines` : ""}`}</Text>
              </Box>
            </Box>
          )}
        </Box>
      );
    }
    case "compaction":
      return (
        <Box marginTop={1}>
          <Text color="magenta">{`✻ ${item.text}`}</Text>
        </Box>
      );
    case "notice":
      return (
        <Box marginTop={1}>
          <Text color={item.tone === "error" ? "red" : item.tone === "warning" ? "yellow" : "gray"}>
            {item.text}
          </Text>
        </Box>
      );
    case "output":
      return (
        <Box marginTop={1}>
          <Text>{item.text}</Text>
        </Box>
      );
  }
}

/** Lines of a diff shown at most, folded (`--verbose`: all). */
const DIFF_LINES = 10;

/** A successful edit: what it changed first (removed and added lines, numbered), not the lines around it. */
function EditEntry({
  item,
  diff,
  verbose,
}: {
  item: Extract<HistoryItem, { kind: "tool" }>;
  diff: EditDiff;
  verbose: boolean;
}) {
  const { shown, more } = verbose ? { shown: diff.lines, more: 0 } : foldDiff(diff, DIFF_LINES);
  const numberWidth = Math.max(...shown.map((line) => String(line.line ?? "").length));
  return (
    <Box marginTop={1} flexDirection="column">
      <Text>
        <Text color="green">{"⏺ "}</Text>
        <Text bold>{item.title}</Text>
      </Text>
      <Box paddingLeft={2} flexDirection="column">
        <Text color="gray">{`⎿ ${describeDiff(diff)}`}</Text>
        {shown.map((line, index) => {
          const mark = line.kind === "removed" ? "-" : line.kind === "added" ? "+" : " ";
          const number = numberWidth > 0 ? `${String(line.line ?? "").padStart(numberWidth)} ` : "";
          return (
            <Text
              // biome-ignore lint/suspicious/noArrayIndexKey: the lines of a printed diff never change.
              key={index}
              color={line.kind === "removed" ? "red" : line.kind === "added" ? "green" : "gray"}
            >{`  ${number}${mark} ${line.text}`}</Text>
          );
        })}
        {more > 0 ? <Text color="gray">{`  … +${more} lines`}</Text> : null}
      </Box>
    </Box>
  );
}

/** Everything printed so far, written once (Ink's `<Static>`: it scrolls up as the terminal's own text). */
export function History({
  items,
  width,
  verbose,
}: {
  items: HistoryItem[];
  width: number;
  verbose: boolean;
}) {
  return (
    <Static items={items}>
      {(item) => <HistoryEntry key={item.id} item={item} width={width} verbose={verbose} />}
    </Static>
  );
}

/** Model and provider · tokens against the threshold · when the next compaction comes · running tasks. */
export function StatusLine({ status, width }: { status: StatusView; width: number }) {
  const share = status.threshold > 0 ? status.tokens / status.threshold : 0;
  const gaugeWidth = width >= 100 ? 20 : 10;
  const next = describeNextCompaction(status.turnsUntilCompaction);
  const color = share >= 0.9 ? "red" : share >= 0.7 ? "yellow" : "green";
  return (
    <Box width={width}>
      <Text wrap="truncate-end">
        <Text color="cyan">{status.model}</Text>
        <Text color="gray">{` · ${status.provider} │ `}</Text>
        <Text color={color}>{bar(share, gaugeWidth)}</Text>
        <Text>{` ${formatTokens(status.tokens)}/${formatTokens(status.threshold)} (${Math.round(share * 100)}%)`}</Text>
        {next ? <Text color="gray">{` │ ${next}`}</Text> : null}
        <Text color="gray">{` │ ${status.runningTasks} task${status.runningTasks === 1 ? "" : "s"} running`}</Text>
        {status.mode === "default" ? null : <Text color="yellow">{` │ ${status.mode}`}</Text>}
      </Text>
    </Box>
  );
}

/** The question about a tool call: allow once, always for this session, or deny. */
export function PermissionPrompt({ question }: { question: PermissionQuestion }) {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="yellow" paddingX={1} marginTop={1}>
      <Text bold>{`Allow ${question.title}?`}</Text>
      <Text color="gray">{question.reason}</Text>
      <Text>{"1. Yes"}</Text>
      {question.alwaysLabel ? (
        <Text>{`2. Yes, and allow ${question.alwaysLabel} for this session`}</Text>
      ) : null}
      <Text>{`${question.alwaysLabel ? 3 : 2}. No, and tell the model (Esc)`}</Text>
    </Box>
  );
}

/** The question asked before a project's hooks, plugins, MCP servers and allow-rules are loaded. */
export function TrustPrompt({ question }: { question: TrustQuestion }) {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="yellow" paddingX={1}>
      <Text bold>
        {question.changed
          ? "What this folder's files run has changed since you trusted it. Trust it again?"
          : "Do you trust the files in this folder?"}
      </Text>
      <Text color="gray">Trusting it lets unforget run what the project's files name:</Text>
      {question.items.map((item) =>
        question.added.includes(item) ? (
          <Text key={item} color="green">{`+ ${item} (new)`}</Text>
        ) : (
          <Text key={item}>{`  ${item}`}</Text>
        ),
      )}
      <Text>{"1. Yes, trust this folder"}</Text>
      <Text>{"2. No, go on without them (Esc)"}</Text>
    </Box>
  );
}
