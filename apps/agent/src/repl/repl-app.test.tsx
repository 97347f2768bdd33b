import { render } from "ink-testing-library";
import { describe, expect, it } from "vitest";
import { ReplApp } from "./repl-app.tsx";
import { ReplController } from "./repl-controller.ts";
import { ReplStore } from "./repl-state.ts";

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

/** The app on a controller whose prompts are recorded instead of sent (no session behind it). */
function app() {
  const store = new ReplStore({ phase: "ready" });
  const submitted: string[] = [];
  const controller = new ReplController(store, () => {});
  controller.submit = (text) => submitted.push(text);
  const rendered = render(<ReplApp controller={controller} />);
  return { store, submitted, ...rendered };
}

describe("ReplApp", () => {
  it("shows what is typed and submits it", async () => {
    const { stdin, lastFrame, submitted } = app();
    await tick();
    stdin.write("hello");
    await tick();
    expect(lastFrame()).toContain("hello");
    stdin.write("\r");
    await tick();
    expect(submitted).toEqual(["hello"]);
  });

  // Keys arrive faster than React redraws (a paste, a loaded machine, a reply streaming): each key must act on
  // what was typed before it, not on the line as the last render saw it.
  it("an Enter that comes before the screen has caught up submits the whole line", async () => {
    const { stdin, submitted } = app();
    await tick();
    stdin.write("read file 0");
    stdin.write("\r");
    await tick();
    expect(submitted).toEqual(["read file 0"]);
  });

  it("a line and its Enter read from the terminal at once submit the line", async () => {
    const { stdin, submitted } = app();
    await tick();
    stdin.write("read file 1\r");
    await tick();
    expect(submitted).toEqual(["read file 1"]);
  });

  it("keys typed between two redraws all land, in order", async () => {
    const { stdin, lastFrame, submitted } = app();
    await tick();
    for (const key of ["/", "c", "o", "n", "t", "e", "x", "t"]) stdin.write(key);
    await tick();
    expect(lastFrame()).toContain("/context");
    stdin.write("\u007f");
    stdin.write("t\r");
    await tick();
    expect(submitted).toEqual(["/context"]);
    expect(lastFrame()).toContain("ask, or /help");
  });

  it("edits at the cursor", async () => {
    const { stdin, submitted } = app();
    await tick();
    stdin.write("rad file");
    stdin.write("\u001b[D".repeat(7));
    stdin.write("e");
    stdin.write("\u001b[F");
    stdin.write(" 2");
    stdin.write("\r");
    await tick();
    expect(submitted).toEqual(["read file 2"]);
  });

  it("answers a permission question with the key pressed right after it appeared", async () => {
    const { stdin, store, submitted } = app();
    await tick();
    const answers: string[] = [];
    store.update({
      permission: {
        toolName: "Bash",
        title: "Bash(npm test)",
        reason: "not allowed by a rule",
        suggestions: [],
        alwaysLabel: undefined,
        answer: (choice) => {
          answers.push(choice);
          store.update({ permission: undefined });
        },
      },
    });
    stdin.write("1");
    await tick();
    expect(answers).toEqual(["once"]);
    stdin.write("go on\r");
    await tick();
    // The "1" answered the question: it was not typed into the prompt.
    expect(submitted).toEqual(["go on"]);
  });
});
