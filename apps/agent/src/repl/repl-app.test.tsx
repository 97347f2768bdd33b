import { render } from "ink-testing-library";
import { describe, expect, it } from "vitest";
import { ReplApp } from "./repl-app.tsx";
import { ReplController } from "./repl-controller.ts";
import { ReplStore } from "./repl-state.ts";

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("ReplApp", () => {
  it("shows what is typed and submits it", async () => {
    const store = new ReplStore({ phase: "ready" });
    const submitted: string[] = [];
    const controller = new ReplController(store, () => {});
    controller.submit = (text) => submitted.push(text);
    const { stdin, lastFrame } = render(<ReplApp controller={controller} />);
    await tick();
    stdin.write("hello");
    await tick();
    expect(lastFrame()).toContain("hello");
    stdin.write("\r");
    await tick();
    expect(submitted).toEqual(["hello"]);
  });
});
