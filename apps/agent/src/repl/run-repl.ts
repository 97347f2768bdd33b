import { render } from "ink";
import { createElement } from "react";
import type { AgentIO } from "../agent/agent-command.ts";
import { type AgentFlags, createAgentEnvironment } from "../agent/agent-environment.ts";
import { ReplApp } from "./repl-app.tsx";
import { ReplController } from "./repl-controller.ts";
import { ReplStore } from "./repl-state.ts";

/**
 * The interactive agent: renders the UI, asks about trust when the project's files would run something, opens
 * the session and runs until the user leaves. Resolves to the exit code; a setup failure (no provider, bad
 * settings) is thrown after the UI is gone, for the command line to report.
 */
export async function runRepl(options: { flags: AgentFlags; prompt?: string; io: AgentIO }): Promise<number> {
  const store = new ReplStore({ verbose: options.flags.verbose === true });
  let resolveExit: () => void = () => {};
  const exited = new Promise<void>((resolve) => {
    resolveExit = resolve;
  });
  const controller = new ReplController(store, () => resolveExit());
  const instance = render(createElement(ReplApp, { controller }), {
    exitOnCtrlC: false,
    patchConsole: true,
    ...(options.io.stdin ? { stdin: options.io.stdin as NodeJS.ReadStream } : {}),
    stdout: options.io.stdout as NodeJS.WriteStream,
  });
  try {
    const environment = await createAgentEnvironment({
      flags: options.flags,
      env: options.io.env,
      interactive: true,
      onNotice: (text) => store.print({ kind: "notice", tone: "warning", text }),
      askTrust: (question) =>
        new Promise<boolean>((resolve) => {
          store.update({
            trust: {
              changed: question.state === "changed",
              items: question.items,
              added: question.added,
              answer: (trust) => {
                store.update({ trust: undefined });
                resolve(trust);
              },
            },
          });
        }),
      canUseTool: controller.canUseTool,
    });
    for (const notice of environment.notices) store.print({ kind: "notice", tone: "warning", text: notice });
    for (const plugin of environment.pluginFiles)
      store.print({ kind: "notice", tone: "info", text: `Plugin ${plugin.name} loaded (${plugin.path}).` });
    const session = await environment.openSession(
      environment.resumeId ? { resume: environment.resumeId } : {},
    );
    store.print({
      kind: "notice",
      tone: "info",
      text: `${environment.resumeId ? "Resumed" : "Session"} ${session.sessionId} · ${environment.providerName}${
        environment.providerEndpoint ? ` at ${environment.providerEndpoint}` : ""
      } (${environment.providerReason}) · /help for commands`,
    });
    controller.attach(environment, session);
    if (environment.resumeId) controller.drawConversation();
    const waiting = (
      await environment
        .memory()
        .then((memory) => memory.proposals.list())
        .catch(() => [])
    ).length;
    if (waiting > 0)
      store.print({
        kind: "notice",
        tone: "info",
        text: `${waiting} memory proposal${waiting === 1 ? " waits" : "s wait"} for your review: /memory lists ${waiting === 1 ? "it" : "them"}.`,
      });
    if (options.prompt) controller.submit(options.prompt);
    await exited;
    return 0;
  } catch (error) {
    await controller.exit().catch(() => {});
    throw error;
  } finally {
    instance.unmount();
    await instance.waitUntilExit().catch(() => {});
  }
}
