// Captures the REPL for the docs: the real CLI in tmux against the Anthropic fake, a few turns that read files
// until a compaction runs and one that edits a file, then `tmux capture-pane` as text (docs/agent-repl.txt) and, through headless
// Chromium, as a PNG (docs/agent-repl.png). Run after a build: `node scripts/capture-repl.mjs` in apps/agent
// (needs tmux and chromium: apt-get install tmux chromium).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SUMMARY_SECTIONS } from "@unforget/compact";
import { startAnthropicFake } from "@unforget/testing/fakes";

const cli = fileURLToPath(new URL("../dist/bundle/cli.js", import.meta.url));
const docs = fileURLToPath(new URL("../../../docs/", import.meta.url));
const root = mkdtempSync(join(tmpdir(), "unforget-capture-"));
const home = join(root, "home");
const project = join(root, "shop");
mkdirSync(join(home, ".unforget"), { recursive: true });
mkdirSync(join(project, "src"), { recursive: true });
writeFileSync(
  join(home, ".unforget", "settings.json"),
  JSON.stringify({ compaction: { threshold: { tokens: 12000 } } }),
);
const modules = ["cart", "checkout", "payments", "inventory", "shipping", "invoices", "coupons", "search"];
for (const name of modules) {
  const body = Array.from(
    { length: 60 },
    (_, line) => `export function ${name}Step${line}(input) { return input; }`,
  );
  writeFileSync(join(project, "src", `${name}.js`), `${body.join("\n")}\n`);
}

const text = (request) => JSON.stringify(request.body);
const fake = await startAnthropicFake({
  respond(request) {
    if (text(request).includes("a tool call would waste it"))
      return {
        kind: "reply",
        text: `<summary>\n${SUMMARY_SECTIONS.map((t, i) => `${i + 1}. ${t}:\nreview of the shop modules`).join("\n\n")}\n</summary>`,
      };
    const messages = request.body.messages;
    const last = messages.at(-1);
    const answered = last.content.some((block) => block.type === "tool_result");
    // The last turn: an edit, drawn as its diff, then a reply with a heading and a list.
    const prompt = messages
      .filter((message) => message.role === "user" && message.content.some((block) => block.type === "text"))
      .at(-1);
    if (JSON.stringify(prompt ?? "").includes("return a copy")) {
      if (answered)
        return {
          kind: "reply",
          text: "## Done\n\n- **searchStep59** returns a copy of its input now\n- the other 59 functions are unchanged",
        };
      return {
        kind: "reply",
        text: "I'll change `searchStep59`.",
        toolCalls: [
          {
            name: "Edit",
            input: {
              file_path: "src/search.js",
              old_string: "export function searchStep59(input) { return input; }",
              new_string: "export function searchStep59(input) {\n  return { ...input };\n}",
            },
          },
        ],
      };
    }
    const asked = [...text(request).matchAll(/review src\/(\w+)\.js/g)].at(-1)?.[1];
    if (!asked) return { kind: "reply", text: "ok" };
    if (answered)
      return {
        kind: "reply",
        text: `**${asked}.js** looks fine:\n\n- 60 small functions, each returns its input\n- no side effects; nothing to change yet`,
      };
    return {
      kind: "reply",
      text: `I'll read \`src/${asked}.js\` first.`,
      toolCalls: [{ name: "Read", input: { file_path: `src/${asked}.js` } }],
    };
  },
});

const tmux = (...args) => execFileSync("tmux", args, { encoding: "utf8" });
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function waitFor(pattern, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (tmux("capture-pane", "-p", "-S", "-200", "-t", "capture").includes(pattern)) return;
    await wait(200);
  }
  throw new Error(`tmux never showed ${pattern}`);
}

try {
  tmux(
    "new-session",
    "-d",
    "-s",
    "capture",
    "-x",
    "110",
    "-y",
    "34",
    "-c",
    project,
    `env HOME=${home} ANTHROPIC_BASE_URL=${fake.url} TERM=xterm-256color node ${cli} --permission-mode acceptEdits; sleep 600`,
  );
  await waitFor("ask, or /help");
  for (const name of modules) {
    tmux("send-keys", "-t", "capture", "-l", `review src/${name}.js`);
    await wait(300);
    tmux("send-keys", "-t", "capture", "Enter");
    await waitFor(`${name}.js** looks fine`.replace("**", ""));
    await wait(500);
    if (
      tmux("capture-pane", "-p", "-S", "-400", "-t", "capture").includes("Compacted:") &&
      name !== modules[0]
    ) {
      // One more turn after the compaction: the session goes on.
      const next = modules[modules.indexOf(name) + 1];
      if (next) {
        tmux("send-keys", "-t", "capture", "-l", `review src/${next}.js`);
        await wait(300);
        tmux("send-keys", "-t", "capture", "Enter");
        await waitFor(`${next}.js looks fine`);
        await wait(500);
      }
      break;
    }
  }
  tmux("send-keys", "-t", "capture", "-l", "make searchStep59 in src/search.js return a copy");
  await wait(300);
  tmux("send-keys", "-t", "capture", "Enter");
  await waitFor("the other 59 functions are unchanged");
  await wait(500);
  const plain = tmux("capture-pane", "-p", "-t", "capture").replace(/\s+$/, "\n");
  const colored = tmux("capture-pane", "-p", "-e", "-t", "capture");
  writeFileSync(join(docs, "agent-repl.txt"), plain);
  const html = `<!doctype html><meta charset="utf-8"><style>body{margin:0;background:#0f172a}pre{margin:0;padding:16px;font:14px/1.35 "DejaVu Sans Mono",monospace;color:#e2e8f0;white-space:pre}</style><pre>${ansiToHtml(colored)}</pre>`;
  const page = join(root, "capture.html");
  writeFileSync(page, html);
  execFileSync(
    "chromium",
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--hide-scrollbars",
      `--screenshot=${join(docs, "agent-repl.png")}`,
      "--window-size=1000,640",
      `file://${page}`,
    ],
    { stdio: "ignore" },
  );
  console.log(`wrote ${join(docs, "agent-repl.txt")} and agent-repl.png`);
} finally {
  try {
    tmux("kill-session", "-t", "capture");
  } catch {}
  await fake.close();
  rmSync(root, { recursive: true, force: true });
}

/** SGR colours of tmux's `capture-pane -e` as HTML spans (the 16 colours, 256-colour grey, bold). */
function ansiToHtml(input) {
  const palette = ["#1e293b", "#f87171", "#4ade80", "#facc15", "#60a5fa", "#c084fc", "#22d3ee", "#e2e8f0"];
  // The screenshot's fonts (DejaVu) have no ⏺ or ⎿: the nearest shapes they have stand in (the .txt keeps them).
  const escapeHtml = (value) =>
    value
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/⏺/g, "●")
      .replace(/⎿/g, "└");
  let html = "";
  let open = false;
  const sgr = new RegExp(`(${String.fromCharCode(27)}\\[[0-9;]*m)`);
  for (const part of input.split(sgr)) {
    const match = part.startsWith(String.fromCharCode(27)) ? /\[([0-9;]*)m$/.exec(part) : null;
    if (!match) {
      html += escapeHtml(part);
      continue;
    }
    if (open) html += "</span>";
    open = false;
    const codes = match[1].split(";").map(Number);
    const styles = [];
    for (let index = 0; index < codes.length; index++) {
      const code = codes[index];
      if (code === 1) styles.push("font-weight:bold");
      else if (code === 7) styles.push("background:#e2e8f0;color:#0f172a");
      else if (code >= 30 && code <= 37) styles.push(`color:${palette[code - 30]}`);
      else if (code >= 90 && code <= 97) styles.push(`color:${code === 90 ? "#64748b" : palette[code - 90]}`);
      else if (code === 38 && codes[index + 1] === 5) {
        styles.push(
          `color:${codes[index + 2] === 8 || codes[index + 2] === 244 ? "#64748b" : palette[(codes[index + 2] ?? 7) % 8]}`,
        );
        index += 2;
      }
    }
    if (styles.length > 0) {
      html += `<span style="${styles.join(";")}">`;
      open = true;
    }
  }
  return html + (open ? "</span>" : "");
}
