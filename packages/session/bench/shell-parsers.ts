// biome-ignore-all lint/suspicious/noTemplateCurlyInString: shell syntax is what is measured here.
// The Bash gate's parser choice, measured (docs/decisions/0027): unbash (what the gate uses, a bash parser in
// TypeScript) against web-tree-sitter with tree-sitter-bash (WebAssembly, what Codex and Gemini CLI have used) and
// sh-syntax (mvdan/sh, the parser behind shfmt, compiled to WebAssembly). For each: the CPU a fresh Node process
// spends to its first parse (import, set-up, one parse) over bare `node` in the same run, the time per parse once
// loaded, what it loads, and which shell forms it reads: accepted without a syntax error, and — where its tree can
// be walked — with the command the form hides (`rm`) found as a command.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import type { Node as SyntaxNode } from "web-tree-sitter";

const require = createRequire(import.meta.url);
const RUNS = Number(process.env.RUNS ?? 7);

/** Shell forms that hide a command (decision 0027); each runs `rm` somewhere. */
const FORMS = [
  "ls; rm x",
  "ls && rm x",
  "ls || rm x",
  "ls | rm x",
  "ls & rm x",
  "ls\nrm x",
  "ls |& rm x",
  "(rm x)",
  "{ rm x; }",
  "echo $(rm x)",
  "echo `rm x`",
  'echo "$(rm x)"',
  "cat <(rm x)",
  "ls >(rm x)",
  "cat <<EOF\n$(rm x)\nEOF",
  "cat <<< $(rm x)",
  "echo ${v:-$(rm x)}",
  "echo $(( $(rm x) ))",
  "a[$(rm x)]=1",
  "if true; then rm x; fi",
  "for f in a; do rm $f; done",
  "for ((i=0; i<1; i++)); do rm x; done",
  "while true; do rm x; done",
  "until false; do rm x; done",
  "case a in a) rm x;; esac",
  "case a in a) ls;& b) rm x;; esac",
  "select s in a; do rm x; done",
  "! rm x",
  "time rm x",
  "coproc rm x",
  "f() { rm x; }; f",
  "function f { rm x; }",
  "[[ $(rm x) ]]",
  "(( $(rm x) ))",
  "X=1 rm x",
  ">log rm x",
  "r''m x",
  "\\rm x",
  "$'rm' x",
  "ls # don't\nrm x",
  "ls $'\\''; rm x",
  "exec 3<> f; rm x",
  "ls <> f; rm x",
  "echo x >| f; rm x",
  "rm x &>> log",
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * A fresh Node process running `code` (an ES module), median of RUNS: wall milliseconds from process start to the
 * end of `code`, and the CPU milliseconds it used (user + system), which a loaded machine disturbs less.
 */
function coldStart(code: string): { wall: number; cpu: number } {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const out = execFileSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `${code}\nconst used = process.cpuUsage(); console.log(performance.now(), (used.user + used.system) / 1000)`,
      ],
      { cwd: join(import.meta.dirname, ".."), encoding: "utf8" },
    );
    const [ms, cpuMs] = out.trim().split("\n").at(-1)!.split(" ").map(Number);
    wall.push(ms!);
    cpu.push(cpuMs!);
  }
  return { wall: median(wall), cpu: median(cpu) };
}

const TREE_SITTER = `
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { Language, Parser } from "web-tree-sitter";
const require = createRequire(import.meta.url);
await Parser.init({ wasmBinary: await readFile(require.resolve("web-tree-sitter/web-tree-sitter.wasm")) });
const parser = new Parser();
parser.setLanguage(await Language.load(await readFile(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"))));
parser.parse("ls && rm -rf x");`;
const UNBASH = `
import { parse } from "unbash";
parse("ls && rm -rf x");`;
const SH_SYNTAX = `
import { parse } from "sh-syntax";
await parse("ls && rm -rf x");`;

const size = (path: string) => statSync(path).size;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
const folderSize = (folder: string) =>
  Number(execFileSync("du", ["-sb", folder], { encoding: "utf8" }).split("\t")[0]);
/** The folder of an installed package: up from a file it exports to its package.json. */
function packageFolder(name: string, file: string): string {
  let folder = dirname(require.resolve(file === "" ? name : `${name}/${file}`));
  while (!existsSync(join(folder, "package.json"))) folder = dirname(folder);
  return folder;
}

async function main() {
  console.log(
    `Machine: ${cpus().length} × ${cpus()[0]?.model}, Node ${process.version}, load ${loadavg()[0]!.toFixed(1)}`,
  );

  const baseline = coldStart("");
  const unbashCold = coldStart(UNBASH);
  const treeSitterCold = coldStart(TREE_SITTER);
  const shSyntaxCold = coldStart(SH_SYNTAX);

  // Warm: parse every form 20 times.
  const { Language, Parser } = await import("web-tree-sitter");
  const { readFile } = await import("node:fs/promises");
  await Parser.init({ wasmBinary: await readFile(require.resolve("web-tree-sitter/web-tree-sitter.wasm")) });
  const parser = new Parser();
  parser.setLanguage(
    await Language.load(await readFile(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"))),
  );
  const unbash = await import("unbash");
  const { parse, getProcessor } = await import("sh-syntax");
  // sh-syntax compiles its WebAssembly again for every call; given a factory it instantiates a module compiled once.
  const { WebAssembly: wasm } = globalThis as unknown as {
    WebAssembly: {
      compile(bytes: Uint8Array): Promise<object>;
      instantiate(module: object, imports: object): Promise<never>;
    };
  };
  const compiled = await wasm.compile(
    await readFile(join(packageFolder("sh-syntax", "main.wasm"), "main.wasm")),
  );
  const cachedParse = getProcessor((imports) => wasm.instantiate(compiled, imports ?? {}));
  const repeat = 20;
  let started = performance.now();
  for (let round = 0; round < repeat; round++) for (const form of FORMS) unbash.parse(form);
  const unbashWarm = (performance.now() - started) / (repeat * FORMS.length);
  started = performance.now();
  for (let round = 0; round < repeat; round++) for (const form of FORMS) parser.parse(form)?.delete();
  const treeSitterWarm = (performance.now() - started) / (repeat * FORMS.length);
  started = performance.now();
  for (let round = 0; round < repeat; round++)
    for (const form of FORMS) await parse(form).catch(() => undefined);
  const shSyntaxWarm = (performance.now() - started) / (repeat * FORMS.length);
  started = performance.now();
  for (let round = 0; round < repeat; round++)
    for (const form of FORMS) await cachedParse(form).catch(() => undefined);
  const shSyntaxCachedWarm = (performance.now() - started) / (repeat * FORMS.length);

  // The gate's whole reading of a command (parse, walk, wrappers), as authorize pays it per Bash call.
  const analyzeShellCommand = await (
    await import("../src/permissions/shell/shell-analyzer.ts")
  ).shellAnalyzer();
  started = performance.now();
  for (let round = 0; round < repeat; round++)
    for (const form of FORMS) analyzeShellCommand(form, { homeDir: "/home/u" });
  const gateWarm = (performance.now() - started) / (repeat * FORMS.length);

  // Coverage.
  const found = (node: SyntaxNode): boolean =>
    (node.type === "command" && node.childForFieldName("name")?.text.replace(/['"\\$]/g, "") === "rm") ||
    node.namedChildren.some((child) => child !== null && found(child));
  const unbashFound = (node: import("unbash").SyntaxNode): boolean => {
    if (node.type === "Command" && node.name?.value === "rm") return true;
    let hit = false;
    unbash.forEachChild(node, (child) => {
      hit ||= unbashFound(child);
    });
    return hit;
  };
  const unbashErrors = (node: import("unbash").SyntaxNode): boolean => {
    if ("errors" in node && (node.errors?.length ?? 0) > 0) return true;
    if (
      (node.type === "CommandExpansion" || node.type === "ProcessSubstitution") &&
      node.script?.errors?.length
    )
      return true;
    let hit = false;
    unbash.forEachChild(node, (child) => {
      hit ||= unbashErrors(child);
    });
    return hit;
  };
  let unbashAccepts = 0;
  let unbashFinds = 0;
  let treeSitterAccepts = 0;
  let treeSitterFinds = 0;
  let shSyntaxAccepts = 0;
  const misses: string[] = [];
  for (const form of FORMS) {
    const script = unbash.parse(form);
    if (!unbashErrors(script)) unbashAccepts++;
    if (!unbashErrors(script) && unbashFound(script)) unbashFinds++;
    else misses.push(`unbash: ${JSON.stringify(form)}`);
    const tree = parser.parse(form)!;
    if (!tree.rootNode.hasError) treeSitterAccepts++;
    if (!tree.rootNode.hasError && found(tree.rootNode)) treeSitterFinds++;
    else misses.push(`tree-sitter: ${JSON.stringify(form)}`);
    tree.delete();
    try {
      await parse(form);
      shSyntaxAccepts++;
    } catch {
      misses.push(`sh-syntax: ${JSON.stringify(form)}`);
    }
  }
  const shSyntaxTree = (await parse("rm x")).Stmts[0]?.Cmd;

  const treeSitterLoads =
    size(require.resolve("web-tree-sitter")) +
    size(require.resolve("web-tree-sitter/web-tree-sitter.wasm")) +
    size(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
  const shSyntaxLib = join(packageFolder("sh-syntax", "main.wasm"), "lib");
  const shSyntaxLoads =
    size(join(packageFolder("sh-syntax", "main.wasm"), "main.wasm")) +
    size(join(packageFolder("sh-syntax", "main.wasm"), "vendors/wasm_exec.cjs")) +
    ["index.js", "processor.js", "shim.js", "types.js"].reduce(
      (sum, file) => sum + size(join(shSyntaxLib, file)),
      0,
    );

  const unbashFolder = packageFolder("unbash", "");
  const unbashLoads = readdirSync(join(unbashFolder, "dist"))
    .filter((file) => file.endsWith(".js"))
    .reduce((sum, file) => sum + size(join(unbashFolder, "dist", file)), 0);
  const cold = (run: { wall: number; cpu: number }) =>
    `+${(run.cpu - baseline.cpu).toFixed(0)} ms CPU (+${(run.wall - baseline.wall).toFixed(0)} ms wall)`;
  const micros = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
  const row = (cells: string[]) => console.log(`| ${cells.join(" | ")} |`);
  console.log("\n| | unbash | web-tree-sitter + tree-sitter-bash | sh-syntax (mvdan/sh) |");
  console.log("| --- | ---: | ---: | ---: |");
  row([
    `fresh process to first parse, over bare node (${baseline.cpu.toFixed(0)} ms CPU, ${baseline.wall.toFixed(0)} ms wall; medians of ${RUNS})`,
    cold(unbashCold),
    cold(treeSitterCold),
    cold(shSyntaxCold),
  ]);
  row([
    `per parse once loaded (${FORMS.length} forms × ${repeat})`,
    micros(unbashWarm),
    micros(treeSitterWarm),
    `${micros(shSyntaxWarm)} (${micros(shSyntaxCachedWarm)} with its module compiled once)`,
  ]);
  row(["the gate's whole reading of a command (parse, walk, wrappers)", micros(gateWarm), "", ""]);
  row([
    "read at the first parse (JavaScript + WebAssembly)",
    kb(unbashLoads),
    kb(treeSitterLoads),
    kb(shSyntaxLoads),
  ]);
  row([
    "installed (node_modules)",
    kb(folderSize(unbashFolder)),
    kb(
      folderSize(packageFolder("web-tree-sitter", "web-tree-sitter.wasm")) +
        folderSize(packageFolder("tree-sitter-bash", "tree-sitter-bash.wasm")),
    ),
    kb(folderSize(packageFolder("sh-syntax", "main.wasm"))),
  ]);
  row([
    "forms accepted without a syntax error",
    `${unbashAccepts}/${FORMS.length}`,
    `${treeSitterAccepts}/${FORMS.length}`,
    `${shSyntaxAccepts}/${FORMS.length}`,
  ]);
  row([
    "forms whose hidden `rm` is a command in the tree",
    `${unbashFinds}/${FORMS.length}`,
    `${treeSitterFinds}/${FORMS.length}`,
    `0/${FORMS.length}: a command's node is ${JSON.stringify(Object.keys(shSyntaxTree ?? {}))}`,
  ]);
  console.log(`\nNot read:\n${misses.map((miss) => `- ${miss}`).join("\n")}`);
}

await main();
