import { render } from "ink";
import { createElement } from "react";

const { ReplApp } = await import("/work/wt/app/apps/agent/dist/repl/repl-app.js");
const { ReplController } = await import("/work/wt/app/apps/agent/dist/repl/repl-controller.js");
const { ReplStore } = await import("/work/wt/app/apps/agent/dist/repl/repl-state.js");
const store = new ReplStore({ phase: "ready" });
const controller = new ReplController(store, () => process.exit(0));
controller.submit = (t) => store.print({ kind: "user", text: t });
if (process.argv[2]) {
  await import("@unforget/session");
  await import("@unforget/tasks");
}
render(createElement(ReplApp, { controller }), { exitOnCtrlC: false });
