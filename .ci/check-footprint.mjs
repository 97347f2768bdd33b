// The install footprint: what a user who installs one package gets. Each public package's tarball is installed
// ALONE into an empty npm project (with the @unforget tarballs it needs, from the packed folder, never from the
// registry), and the check records the packages installed (every folder npm places, so two versions of one
// package count twice), how many are third-party and how many @unforget, the bytes of their files, and the web
// frameworks among them. It fails when a package exceeds its budget in .ci/footprint-budget.json: at most `all`
// packages in all, `thirdParty` third-party packages and `MB` (10^6 bytes of files); `only` lists the only
// third-party packages allowed; `forbid` names groups (`webFrameworks`) or packages it must not bring. Install
// scripts are not run (what they build is not what is measured) and npm's cache is reused (`--prefer-offline`),
// so a second run needs no network. Three installs run at a time.
// Run after the build: `node .ci/check-footprint.mjs [--packed <folder>] [--only <name>,…] [--write]`. .ci/run
// runs it on the folder .ci/pack-packages.mjs packed (without `--packed` it packs into a scratch folder);
// `--only` measures the packages named and no other; `pnpm bench:footprint` is `--write`, which also rewrites the
// "Install footprint" table of BENCHMARKS.md and docs/footprint.json. Prints one line per package and one more.
import { execFile, execFileSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { packPackages, readPacked } from "./pack-packages.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const BUDGET = join(ROOT, ".ci", "footprint-budget.json");
/** Groups a budget can `forbid` by name. */
export const GROUPS = {
  webFrameworks: ["express", "hono", "@hono/node-server", "fastify", "koa", "cors", "express-rate-limit"],
};
const BUDGET_KEYS = ["all", "thirdParty", "MB", "only", "forbid"];
const CONCURRENCY = 3;
const option = (name) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const write = process.argv.includes("--write");

/** Every file's bytes under `folder` (symbolic links counted as links, not followed). */
function bytesUnder(folder) {
  let total = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    total += entry.isDirectory() ? bytesUnder(path) : lstatSync(path).size;
  }
  return total;
}

function npmInstall(project) {
  return new Promise((resolvePromise, reject) => {
    execFile(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
      { cwd: project, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`npm install failed in ${project}:\n${stdout}${stderr}`)) : resolvePromise(),
    );
  });
}

/** Installs `target` alone into a new project under `scratch` and measures what it brought. */
async function measure(target, packed, scratch) {
  const project = join(scratch, target.name.replace("@", "").replace("/", "-"));
  mkdirSync(project);
  const tarballs = Object.fromEntries(packed.map(({ name, path }) => [name, `file:${path}`]));
  writeFileSync(
    join(project, "package.json"),
    `${JSON.stringify(
      {
        name: "unforget-footprint",
        private: true,
        dependencies: { [target.name]: tarballs[target.name] },
        // The @unforget packages it needs come from their tarballs (npm requires the direct dependency's
        // override to be the same spec).
        overrides: tarballs,
      },
      null,
      2,
    )}\n`,
  );
  await npmInstall(project);
  const lock = JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8"));
  const installed = Object.entries(lock.packages ?? {})
    // The lockfile lists every platform's optional packages (esbuild's binaries); only what npm placed counts.
    .filter(([path, entry]) => path !== "" && entry.link !== true && existsSync(join(project, path)))
    .map(([path, entry]) => ({
      name: entry.name ?? path.slice(path.lastIndexOf("node_modules/") + 13),
      entry,
    }));
  const thirdParty = installed.filter(({ name }) => !name.startsWith("@unforget/"));
  const names = [...new Set(installed.map(({ name }) => name))].sort();
  const result = {
    packages: installed.length,
    thirdParty: thirdParty.length,
    unforget: installed.length - thirdParty.length,
    bytes: bytesUnder(join(project, "node_modules")),
    webFrameworks: GROUPS.webFrameworks.filter((name) => names.includes(name)),
    thirdPartyNames: [...new Set(thirdParty.map(({ name }) => name))].sort(),
  };
  rmSync(project, { recursive: true, force: true });
  return result;
}

/** What breaks `name`'s budget, as sentences; empty when it holds. */
export function overBudget(name, measured, budget) {
  if (budget === undefined) {
    return [
      `${name} has no budget: add it to .ci/footprint-budget.json (its measured numbers, plus about 10 %).`,
    ];
  }
  const problems = [];
  const unknown = Object.keys(budget).filter((key) => !BUDGET_KEYS.includes(key));
  if (unknown.length > 0) {
    problems.push(
      `${name}'s budget has ${unknown.join(", ")}, which the check does not read: use ${BUDGET_KEYS.join(", ")}.`,
    );
  }
  const limits = [
    ["all", measured.packages, "packages in all"],
    ["thirdParty", measured.thirdParty, "third-party packages"],
    ["MB", measured.bytes / 1e6, "MB"],
  ];
  for (const [key, value, unit] of limits) {
    if (budget[key] !== undefined && value > budget[key]) {
      problems.push(
        `${name} brings ${key === "MB" ? value.toFixed(1) : value} ${unit}, over its budget of ${budget[key]}.`,
      );
    }
  }
  if (budget.only !== undefined) {
    const extra = measured.thirdPartyNames.filter((dependency) => !budget.only.includes(dependency));
    if (extra.length > 0) {
      problems.push(
        `${name} brings ${extra.join(", ")}; its budget allows ${budget.only.length === 0 ? "no third-party package" : `only ${budget.only.join(", ")}`}.`,
      );
    }
  }
  for (const forbidden of budget.forbid ?? []) {
    const group = GROUPS[forbidden] ?? [forbidden];
    const found = group.filter((dependency) => measured.thirdPartyNames.includes(dependency));
    if (found.length > 0)
      problems.push(`${name} brings ${found.join(", ")}, which its budget forbids (${forbidden}).`);
  }
  return problems;
}

const megabytes = (bytes) => (bytes / 1e6).toFixed(1);

/** The "Install footprint" section of BENCHMARKS.md for `results` measured in `context`. */
export function tableOf(results, context) {
  const rows = results.map(
    ({ name, measured }) =>
      `| \`${name}\` | ${measured.packages} | ${measured.thirdParty} | ${measured.unforget} | ${megabytes(measured.bytes)} MB | ${measured.webFrameworks.join(", ") || "none"} |`,
  );
  return [
    "## Install footprint",
    "",
    "What a user who installs one package gets: each public package packed (`pnpm pack`) and installed alone into an",
    "empty npm project (`npm install --prefer-offline --no-audit --no-fund --ignore-scripts`), with the @unforget",
    "tarballs it needs from the same pack. Packages are the folders npm places (two versions of one package count",
    "twice), the size is the bytes of their files. Run: `npx pnpm@10.34.9 bench:footprint` (after the build), which",
    "rewrites this table and `docs/footprint.json` (every package's third-party names); `.ci/run` runs the same",
    "measure as a check against `.ci/footprint-budget.json`, a budget per package (packages in all, third-party",
    'packages, MB, the only third-party packages allowed, `forbid: ["webFrameworks"]`), each set to its measured',
    "numbers plus about 10 % until the goals hold: core and compact bring no third-party package beyond tapable;",
    "tools no web framework and at most three third-party packages; session at most 25 packages in all. Web",
    `frameworks looked for: ${GROUPS.webFrameworks.join(", ")}.`,
    "",
    `Machine: ${context.machine}; Node ${context.node}, npm ${context.npm}; ${context.date}, commit \`${context.commit}\`.`,
    "",
    "| package | packages in all | third-party | @unforget | size | web framework |",
    "| --- | ---: | ---: | ---: | ---: | --- |",
    ...rows,
    "",
  ].join("\n");
}

/** Replaces (or inserts, before the providers' install size section or at the end) the footprint section. */
function writeBenchmarks(section) {
  const path = join(ROOT, "BENCHMARKS.md");
  const text = readFileSync(path, "utf8");
  const start = text.indexOf("\n## Install footprint\n");
  let next;
  if (start !== -1) {
    const end = text.indexOf("\n## ", start + 1);
    next = `${text.slice(0, start + 1)}${section}${end === -1 ? "" : text.slice(end)}`;
  } else {
    const before = text.indexOf("\n## @unforget/providers: install size\n");
    next =
      before === -1
        ? `${text.trimEnd()}\n\n${section}`
        : `${text.slice(0, before + 1)}${section}\n${text.slice(before + 1)}`;
  }
  writeFileSync(path, next.endsWith("\n") ? next : `${next}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  const scratch = mkdtempSync(join(tmpdir(), "unforget-footprint-"));
  try {
    const packedFolder = option("--packed");
    const packed =
      packedFolder === undefined
        ? packPackages(join(scratch, "tarballs"))
        : readPacked(resolve(packedFolder));
    const budgets = JSON.parse(readFileSync(BUDGET, "utf8")).packages;
    const only = option("--only")?.split(",");
    const unknown = (only ?? []).filter((name) => !packed.some((entry) => entry.name === name));
    if (unknown.length > 0) throw new Error(`--only names ${unknown.join(", ")}, not public packages`);
    if (only !== undefined && write) throw new Error("--write records every package: leave out --only");
    const queue = packed.filter(({ name }) => only === undefined || only.includes(name));
    const results = [];
    const workers = Array.from({ length: Math.min(CONCURRENCY, Math.max(1, cpus().length)) }, async () => {
      for (let target = queue.shift(); target !== undefined; target = queue.shift()) {
        const measured = await measure(target, packed, scratch);
        results.push({ name: target.name, measured });
        process.stdout.write(
          `footprint ${target.name}: ${measured.packages} packages (${measured.thirdParty} third-party, ${measured.unforget} @unforget), ${megabytes(measured.bytes)} MB${measured.webFrameworks.length > 0 ? `, web frameworks: ${measured.webFrameworks.join(", ")}` : ""}\n`,
        );
      }
    });
    await Promise.all(workers);
    results.sort((a, b) => a.name.localeCompare(b.name));

    if (write) {
      const git = (...args) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();
      const cpu =
        /model name\s*:\s*(.+)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? "unknown CPU";
      const context = {
        machine: `${cpus().length} cores, ${cpu}`,
        node: process.version,
        npm: execFileSync("npm", ["--version"], { encoding: "utf8" }).trim(),
        date: new Date().toISOString().slice(0, 10),
        commit: `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain", "--", "packages", "apps") === "" ? "" : " + uncommitted changes to the packages"}`,
      };
      writeBenchmarks(tableOf(results, context));
      const json = {
        ...context,
        packages: Object.fromEntries(results.map(({ name, measured }) => [name, measured])),
      };
      writeFileSync(join(ROOT, "docs", "footprint.json"), `${JSON.stringify(json, null, 2)}\n`);
      execFileSync(
        join(ROOT, "node_modules", ".bin", "biome"),
        ["format", "--write", "docs/footprint.json"],
        {
          cwd: ROOT,
          stdio: "ignore",
        },
      );
    }

    const problems = [
      ...results.flatMap(({ name, measured }) => overBudget(name, measured, budgets[name])),
      ...Object.keys(budgets)
        .filter((name) => !packed.some((entry) => entry.name === name))
        .map(
          (name) =>
            `.ci/footprint-budget.json has a budget for ${name}, which is not a public package: remove it.`,
        ),
    ];
    if (problems.length > 0) {
      process.stderr.write(
        `The install footprint is over budget (.ci/footprint-budget.json; the diet is undone, or the budget needs a decision):\n${problems.join("\n")}\n`,
      );
      process.exitCode = 1;
    } else {
      process.stdout.write(
        `footprint: ${results.length} packages installed alone, each within its budget, in ${Math.round((Date.now() - started) / 1000)} s\n`,
      );
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
