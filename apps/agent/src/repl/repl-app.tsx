import { Box, type Key, Text, useInput, useStdout } from "ink";
import { useEffect, useMemo, useReducer, useRef, useState, useSyncExternalStore } from "react";
import { LineEditor, splitTyped } from "./line-editor.ts";
import { renderMarkdown } from "./render-markdown.ts";
import type { ReplController } from "./repl-controller.ts";
import { History, PermissionPrompt, StatusLine, TrustPrompt } from "./repl-view.tsx";
import { SLASH_COMMANDS } from "./slash-commands.ts";

/** The terminal's width, following resizes. */
function useColumns(): number {
  const { stdout } = useStdout();
  // One column is left free: a line that fills the last one makes the terminal wrap, and Ink's redraw drifts.
  const [columns, setColumns] = useState((stdout.columns || 80) - 1);
  useEffect(() => {
    const onResize = () => setColumns((stdout.columns || 80) - 1);
    stdout.on("resize", onResize);
    return () => {
      stdout.off("resize", onResize);
    };
  }, [stdout]);
  return columns;
}

/** The prompt's line with its cursor (inverse), or the placeholder when it is empty. */
function PromptLine({ editor, placeholder }: { editor: LineEditor; placeholder: string }) {
  const { value, cursor } = editor;
  if (value === "")
    return (
      <Text color="gray">
        <Text inverse>{placeholder.slice(0, 1)}</Text>
        {placeholder.slice(1)}
      </Text>
    );
  return (
    <Text>
      {value.slice(0, cursor)}
      <Text inverse>{value.slice(cursor, cursor + 1) || " "}</Text>
      {value.slice(cursor + 1)}
    </Text>
  );
}

/** The REPL's state as the store holds it. */
type ReplState = ReturnType<ReplController["store"]["getState"]>;

/** A key while the trust or permission question is open answers it; true when there was a question. */
function answerQuestion(now: ReplState, input: string, key: Key): boolean {
  if (now.trust) {
    if (input === "1") now.trust.answer(true);
    else if (input === "2" || key.escape) now.trust.answer(false);
    return true;
  }
  if (now.permission) {
    const always = now.permission.alwaysLabel !== undefined;
    if (input === "1" || key.return) now.permission.answer("once");
    else if (always && input === "2") now.permission.answer("always");
    else if (input === (always ? "3" : "2") || key.escape) now.permission.answer("deny");
    return true;
  }
  return false;
}

/**
 * An editing key or typed text applied to the line: "redraw" when the line changed, "submit" when the text
 * ended with Enter, "ignore" for a key the prompt does not use.
 */
function editLine(editor: LineEditor, input: string, key: Key): "redraw" | "submit" | "ignore" {
  if (key.backspace || key.delete) editor.deleteBackward();
  else if (key.leftArrow) editor.move(-1);
  else if (key.rightArrow) editor.move(1);
  else if (key.home || (key.ctrl && input === "a")) editor.jump("start");
  else if (key.end || (key.ctrl && input === "e")) editor.jump("end");
  else if (key.ctrl && input === "u") editor.set("");
  else if (key.ctrl || key.meta || input === "") return "ignore";
  else {
    const typed = splitTyped(input);
    editor.insert(typed.text);
    if (typed.enter) return "submit";
  }
  return "redraw";
}

/** Tab on a slash command's first letters: the line completed to the first command that starts with them. */
function completeSlashCommand(value: string): string | undefined {
  if (!value.startsWith("/") || value.includes(" ")) return undefined;
  const match = SLASH_COMMANDS.find((command) => command.name.startsWith(value.slice(1)));
  return match ? `/${match.name} ` : undefined;
}

/**
 * Up or down through the prompts sent before: the index of the entry to show (the entries' length is the empty
 * line after the last one), or undefined when nothing was sent yet.
 */
function historyStep(
  entries: readonly string[],
  index: number | undefined,
  step: -1 | 1,
): number | undefined {
  if (entries.length === 0) return undefined;
  const current = index ?? entries.length;
  return Math.max(0, Math.min(entries.length, current + step));
}

/** The calls running now, one line each. */
function RunningCalls({ running }: { running: ReplState["running"] }) {
  return running.map((call) => (
    <Box key={call.id} marginTop={1}>
      <Text color="yellow">{"⏺ "}</Text>
      <Text bold>{call.title}</Text>
      <Text color="gray">{" running…"}</Text>
    </Box>
  ));
}

/** The prompt's box, with the prompts queued while a turn runs above it. */
function PromptBox({
  editor,
  queued,
  busy,
  width,
}: {
  editor: LineEditor;
  queued: readonly string[];
  busy: boolean;
  width: number;
}) {
  return (
    <Box flexDirection="column" marginTop={1}>
      {queued.length > 0 ? <Text color="gray">{`queued: ${queued.join(" · ")}`}</Text> : null}
      <Box borderStyle="round" borderColor="gray" paddingX={1} width={width}>
        <Text color={busy ? "gray" : "cyan"}>{"> "}</Text>
        <PromptLine
          editor={editor}
          placeholder={busy ? "working… (Esc to stop; type to queue)" : "ask, or /help"}
        />
      </Box>
    </Box>
  );
}

/** The whole screen: the history, the reply streaming now, any question, the prompt and the status line. */
export function ReplApp({ controller }: { controller: ReplController }) {
  const state = useSyncExternalStore(controller.store.subscribe, controller.store.getState);
  const width = useColumns();
  // The line lives outside React's state: each key reads and changes it as it is now (see LineEditor).
  const editor = useRef(new LineEditor()).current;
  const [, redraw] = useReducer((count: number) => count + 1, 0);
  const history = useRef<string[]>([]);
  const historyIndex = useRef<number | undefined>(undefined);

  const setLine = (value: string) => {
    editor.set(value);
    redraw();
  };

  const submit = () => {
    const text = editor.value;
    if (text.trim() !== "") history.current.push(text);
    historyIndex.current = undefined;
    setLine("");
    controller.submit(text);
  };

  // The handler of the last render may run for keys that arrived before the next one: everything it decides on
  // is read when the key comes (the store, the editor), never from this render's variables.
  useInput((input, key) => {
    const now = controller.store.getState();
    if (key.ctrl && input === "c") {
      if (now.permission) now.permission.answer("deny");
      if (now.trust) {
        now.trust.answer(false);
        return;
      }
      if (!now.busy && editor.value !== "") {
        setLine("");
        return;
      }
      controller.interruptOrExit();
      return;
    }
    controller.disarm();
    if (answerQuestion(now, input, key)) return;
    if (key.ctrl && input === "d") {
      if (editor.value === "") void controller.exit();
      return;
    }
    if (key.escape) {
      if (now.busy) controller.interrupt();
      return;
    }
    // Keys typed before the prompt is drawn (while starting or exiting) have no line to go to.
    if (now.phase !== "ready") return;
    if (key.tab) {
      const completed = completeSlashCommand(editor.value);
      if (completed !== undefined) setLine(completed);
      return;
    }
    if (key.upArrow || key.downArrow) {
      const next = historyStep(history.current, historyIndex.current, key.upArrow ? -1 : 1);
      if (next === undefined) return;
      historyIndex.current = next;
      setLine(history.current[next] ?? "");
      return;
    }
    if (key.return) {
      submit();
      return;
    }
    const edit = editLine(editor, input, key);
    if (edit === "submit") submit();
    else if (edit === "redraw") redraw();
  });

  // A key press redraws too: the streaming reply is parsed again only when it grew (or the screen was resized).
  const live = useMemo(
    () => (state.liveText === "" ? "" : renderMarkdown(state.liveText, width - 2)),
    [state.liveText, width],
  );

  if (state.phase === "exiting") return null;
  return (
    <Box flexDirection="column">
      <History items={state.history} width={width} verbose={state.verbose} />
      {state.trust ? <TrustPrompt question={state.trust} /> : null}
      {live !== "" ? (
        <Box marginTop={1}>
          <Text>{live}</Text>
        </Box>
      ) : null}
      <RunningCalls running={state.running} />
      {state.permission ? <PermissionPrompt question={state.permission} /> : null}
      {state.phase === "ready" && !state.permission ? (
        <PromptBox editor={editor} queued={state.queued} busy={state.busy} width={width} />
      ) : null}
      {state.status ? <StatusLine status={state.status} width={width} /> : null}
      {state.exitArmed ? <Text color="gray">Press Ctrl-C again to exit.</Text> : null}
      {state.phase === "starting" && !state.trust ? <Text color="gray">Starting…</Text> : null}
    </Box>
  );
}
