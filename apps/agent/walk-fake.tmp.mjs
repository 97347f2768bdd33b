import { writeFileSync } from "node:fs";
import { SUMMARY_SECTIONS } from "@unforget/compact";
import { startAnthropicFake } from "@unforget/testing/fakes";

const text = (request) => JSON.stringify(request.body);
const fake = await startAnthropicFake({
  respond(request) {
    const body = text(request);
    if (body.includes("a tool call would waste it"))
      return {
        kind: "reply",
        text: `<summary>\n${SUMMARY_SECTIONS.map((t, i) => `${i + 1}. ${t}:\nwork`).join("\n\n")}\n</summary>`,
      };
    if (body.includes("[unforget memory extraction]")) {
      if (body.includes("tool_result")) return { kind: "reply", text: "Done." };
      return {
        kind: "reply",
        toolCalls: [
          {
            name: "memory_write",
            input: {
              name: "user_reviews.md",
              content:
                "---\nname: reviews\ndescription: The user reviews PRs on Mondays\ntype: user\n---\nReviews PRs on Mondays.\n",
            },
          },
        ],
      };
    }
    if (body.includes("You choose which stored memories"))
      return { kind: "reply", toolCalls: [{ name: "select_memories", input: { names: [] } }] };
    const messages = request.body.messages;
    const last = messages.at(-1);
    const lastText = JSON.stringify(last);
    if (last.content.some?.((b) => b.type === "tool_result"))
      return { kind: "reply", text: "Done with that." };
    if (lastText.includes("start a build"))
      return {
        kind: "reply",
        text: "Starting it in the background.",
        toolCalls: [
          {
            name: "Bash",
            input: { command: "sleep 4; echo built", run_in_background: true, description: "slow build" },
          },
        ],
      };
    if (lastText.includes("run ls"))
      return { kind: "reply", toolCalls: [{ name: "Bash", input: { command: "ls && git status" } }] };
    return { kind: "reply", text: `You said: ${lastText.slice(0, 60)}` };
  },
});
writeFileSync(process.argv[2], fake.url);
console.log(fake.url);
setInterval(() => {}, 1 << 30);
