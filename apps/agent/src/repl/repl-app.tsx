import { Box, Text, useInput, useStdout } from "ink";
import TextInput from "ink-text-input";
import { useEffect, useRef, useState, useSyncExternalStore } from "react";
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

/** The whole screen: the history, the reply streaming now, any question, the prompt and the status line. */
export function ReplApp({ controller }: { controller: ReplController }) {
  const state = useSyncExternalStore(controller.store.subscribe, controller.store.getState);
  const width = useColumns();
  const [value, setValue] = useState("");
  const valueRef = useRef(value);
  valueRef.current = value;
  const history = useRef<string[]>([]);
  const historyIndex = useRef<number | undefined>(undefined);

  useInput((input, key) => {
    if (key.ctrl && input === "c") {
      if (state.permission) state.permission.answer("deny");
      if (state.trust) {
        state.trust.answer(false);
        return;
      }
      if (!state.busy && valueRef.current !== "") {
        setValue("");
        return;
      }
      controller.interruptOrExit();
      return;
    }
    controller.disarm();
    if (state.trust) {
      if (input === "1") state.trust.answer(true);
      else if (input === "2" || key.escape) state.trust.answer(false);
      return;
    }
    if (state.permission) {
      const always = state.permission.alwaysLabel !== undefined;
      if (input === "1" || key.return) state.permission.answer("once");
      else if (always && input === "2") state.permission.answer("always");
      else if (input === (always ? "3" : "2") || key.escape) state.permission.answer("deny");
      return;
    }
    if (key.ctrl && input === "d") {
      if (valueRef.current === "") void controller.exit();
      // The line editor took the "d" as text; the line stays as it was.
      else setValue(valueRef.current);
      return;
    }
    if (key.escape && state.busy) {
      controller.interrupt();
      return;
    }
    if (key.tab && value.startsWith("/") && !value.includes(" ")) {
      const match = SLASH_COMMANDS.find((command) => command.name.startsWith(value.slice(1)));
      if (match) setValue(`/${match.name} `);
      return;
    }
    if (key.upArrow || key.downArrow) {
      const entries = history.current;
      if (entries.length === 0) return;
      const current = historyIndex.current ?? entries.length;
      const next = Math.max(0, Math.min(entries.length, current + (key.upArrow ? -1 : 1)));
      historyIndex.current = next;
      setValue(entries[next] ?? "");
    }
  });

  const submit = (text: string) => {
    if (state.permission || state.trust) return;
    if (text.trim() !== "") history.current.push(text);
    historyIndex.current = undefined;
    setValue("");
    controller.submit(text);
  };

  if (state.phase === "exiting") return null;
  return (
    <Box flexDirection="column">
      <History items={state.history} width={width} verbose={state.verbose} />
      {state.trust ? <TrustPrompt question={state.trust} /> : null}
      {state.liveText !== "" ? (
        <Box marginTop={1}>
          <Text>{renderMarkdown(state.liveText, width - 2)}</Text>
        </Box>
      ) : null}
      {state.running.map((call) => (
        <Box key={call.id} marginTop={1}>
          <Text color="yellow">{"⏺ "}</Text>
          <Text bold>{call.title}</Text>
          <Text color="gray">{" running…"}</Text>
        </Box>
      ))}
      {state.permission ? <PermissionPrompt question={state.permission} /> : null}
      {state.phase === "ready" && !state.permission ? (
        <Box flexDirection="column" marginTop={1}>
          {state.queued.length > 0 ? <Text color="gray">{`queued: ${state.queued.join(" · ")}`}</Text> : null}
          <Box borderStyle="round" borderColor="gray" paddingX={1} width={width}>
            <Text color={state.busy ? "gray" : "cyan"}>{"> "}</Text>
            <TextInput
              value={value}
              onChange={setValue}
              onSubmit={submit}
              placeholder={state.busy ? "working… (Esc to stop; type to queue)" : "ask, or /help"}
            />
          </Box>
        </Box>
      ) : null}
      {state.status ? <StatusLine status={state.status} width={width} /> : null}
      {state.exitArmed ? <Text color="gray">Press Ctrl-C again to exit.</Text> : null}
      {state.phase === "starting" && !state.trust ? <Text color="gray">Starting…</Text> : null}
    </Box>
  );
}
