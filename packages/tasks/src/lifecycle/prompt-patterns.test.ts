import { describe, expect, it } from "vitest";
import { matchInteractivePrompt } from "./prompt-patterns.ts";

// Real prompts, as the tools print them (without a trailing line break unless the tool prints one).
const PROMPTS: [string, string][] = [
  ["Continue? [y/N] ", "yes/no question"],
  ["Reading package lists... Done\nDo you want to continue? [Y/n] ", "yes/no question"],
  ["Is this ok [y/N]: ", "yes/no question"],
  ["Proceed (Y/n)? ", "yes/no question"],
  ["Proceed ([y]/n)? ", "yes/no question"],
  [
    "? The modules directory will be removed and reinstalled from scratch. Proceed? (Y/n) ",
    "yes/no question",
  ],
  [
    "WARNING! This will remove all stopped containers.\nAre you sure you want to continue? [y/N] ",
    "yes/no question",
  ],
  ["Delete branch? (yes/no)\n", "yes/no question"],
  ["replace data.csv? [y]es, [n]o, [A]ll, [N]one, [r]ename: ", "yes/no question"],
  ["Overwrite y/n", "yes/no question"],
  [
    "The authenticity of host 'example.com (93.184.216.34)' can't be established.\nED25519 key fingerprint is SHA256:abc.\nAre you sure you want to continue connecting (yes/no/[fingerprint])? ",
    "ssh host key",
  ],
  ["Enter passphrase for key '/home/alice/.ssh/id_ed25519': ", "passphrase"],
  ["Enter passphrase (empty for no passphrase): ", "passphrase"],
  ["[sudo] password for alice: ", "password"],
  ["Password: ", "password"],
  ["Password for 'https://alice@github.com': ", "password"],
  ["Username for 'https://github.com': ", "username"],
  ["Need to install the following packages:\n  create-vite@6.1.0\nOk to proceed? (y) ", "confirmation"],
  ["Is this OK? (yes) ", "confirmation"],
  ["Continue?", "confirmation"],
  ["Proceed?\n", "confirmation"],
  ["cp: overwrite 'b.txt'? ", "overwrite question"],
  ["File exists. Overwrite? (y/N) ", "yes/no question"],
  ["rm: remove write-protected regular file 'a'? ", "confirmation"],
  ["Configuration file '/etc/ssh/sshd_config'\n*** sshd_config (Y/I/N/O/D/Z) [default=N] ? ", "confirmation"],
  [
    "Do you want to perform these actions?\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ",
    "confirmation",
  ],
  ["Press any key to continue . . .", "press a key"],
  ["Press Enter to continue\n", "press a key"],
  [
    "\u001b[?25l\u001b[36m?\u001b[39m \u001b[1mSelect a framework:\u001b[22m › - Use arrow-keys. Return to submit.\n❯   Vanilla\n    Vue\n    React",
    "menu selection",
  ],
  ["\u001b[32m?\u001b[39m \u001b[1mProject name:\u001b[22m › vite-project", "question"],
  ["? What is your name? ", "question"],
  ["question name (my-app): ", "question"],
  ["package name: (my-app) ", "question"],
  ["--More--(42%)", "pager"],
  ["$ ", "shell or REPL prompt"],
  ["alice@box:~/src# ", "shell or REPL prompt"],
  [">>> ", "shell or REPL prompt"],
  ["mysql> ", "shell or REPL prompt"],
  ["(gdb) ", "shell or REPL prompt"],
  ["Name: ", "question"],
  ["Downloading 100%\rWhich environment? ", "question"],
];

// Output that ends quietly without asking anything: a long compile, a server waiting for requests, a test run.
const NOT_PROMPTS = [
  "   Compiling serde v1.0.200\n",
  "Done in 3.21s.\n",
  "<html><body></body></html>\n",
  " PASS  src/a.test.ts\n",
  "npm WARN deprecated glob@7.2.3: Glob versions prior to v9 are no longer supported\n",
  "Listening on http://localhost:3000\n",
  "[INFO] Building jar: target/app.jar\n",
  '{"status":"ok","count":3}\n',
  "test result: ok. 3 passed; 0 failed\n",
  "warning: unused variable: `x`\n",
  "Downloading 45%",
  "Waiting for the database...",
  "Total: 3\n",
  "echo $HOME\n",
  "",
  "\n\n",
];

describe("matchInteractivePrompt", () => {
  it.each(PROMPTS)("recognises %j as %s", (tail, label) => {
    expect(matchInteractivePrompt(tail)).toBe(label);
  });

  it.each(NOT_PROMPTS.map((tail) => [tail]))("leaves %j alone", (tail) => {
    expect(matchInteractivePrompt(tail)).toBeUndefined();
  });
});
