// The public API of every published package, as API Extractor reports it: one `docs/api/<name>.api.md` per
// entry point of each package's `exports` map, read from the built declarations (run after the build). The
// report names every export with its full type, whatever file it lives in, so moving code between files or
// folders leaves it unchanged while any change to what users import shows as a diff.
//
//   node .ci/api-report.mjs            rewrite the reports (commit them with the change that made them)
//   node .ci/api-report.mjs --check    fail, printing the difference, when the API differs from the reports
//   --only @unforget/compact           one package (repeatable)
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Extractor, ExtractorConfig } from "@microsoft/api-extractor";
import { workspacePackages } from "./workspace.mjs";

const root = resolve(import.meta.dirname, "..");
const reportsDir = join(root, "docs", "api");
const { values } = parseArgs({
  options: { check: { type: "boolean", default: false }, only: { type: "string", multiple: true } },
});

/** Each published package's entry points: the report's file name and the built declaration file. */
function entries() {
  return workspacePackages(root)
    .filter(({ manifest }) => manifest.private !== true)
    .filter(({ manifest }) => !values.only || values.only.includes(manifest.name))
    .flatMap(({ folder, manifest }) =>
      Object.entries(manifest.exports ?? {}).map(([subpath, target]) => {
        const types = typeof target === "object" && target !== null ? target.types : undefined;
        if (typeof types !== "string") {
          throw new Error(`${manifest.name}: the export "${subpath}" names no "types" file to report on`);
        }
        const suffix = subpath === "." ? "" : `--${subpath.replace(/^\.\//, "").replaceAll("/", "-")}`;
        return {
          name: `${manifest.name}${subpath === "." ? "" : subpath.slice(1)}`,
          file: `${manifest.name.replace(/^@unforget\//, "")}${suffix}.api.md`,
          folder: join(root, folder),
          types: join(root, folder, types),
        };
      }),
    );
}

/**
 * The report as committed: API Extractor's text without the lines that say only whether a declaration has a
 * doc comment (`// @public`, `// (undocumented)`): documenting code does not change the API; and each import of
 * a dependency's type written the one way.
 */
function normalise(text) {
  return (
    text
      .split("\n")
      .filter((line) => !/^\s*\/\/ (@public|@beta|@alpha|@internal)?\s*(\(undocumented\))?\s*$/.test(line))
      // Whether the declarations import a dependency's type with `import type` or a plain `import` follows how
      // the source files happen to be split; a user imports the same names either way.
      .map((line) => line.replace(/^import type \{ /, "import { "))
      .join("\n")
  );
}

function report(entry, scratch) {
  if (!existsSync(entry.types)) {
    throw new Error(`${entry.name}: ${entry.types} is missing; build the packages first (pnpm build)`);
  }
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: entry.folder,
      mainEntryPointFilePath: entry.types,
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            strict: true,
            module: "nodenext",
            moduleResolution: "nodenext",
            target: "es2023",
            lib: ["es2023", "dom"],
            types: ["node"],
            skipLibCheck: true,
          },
        },
      },
      apiReport: {
        enabled: true,
        reportFolder: scratch,
        reportTempFolder: scratch,
        reportFileName: entry.file.replace(/\.api\.md$/, ""),
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        extractorMessageReporting: { default: { logLevel: "none" } },
        tsdocMessageReporting: { default: { logLevel: "none" } },
        compilerMessageReporting: { default: { logLevel: "error" } },
      },
    },
    configObjectFullPath: undefined,
    packageJsonFullPath: join(entry.folder, "package.json"),
  });
  const result = Extractor.invoke(config, {
    localBuild: true,
    messageCallback: (message) => {
      // Only errors are printed (not "Analysis will use the bundled TypeScript version …" for every entry).
      if (message.logLevel === "error") console.error(`${entry.name}: ${message.text}`);
      message.handled = true;
    },
  });
  if (result.errorCount > 0) throw new Error(`${entry.name}: API Extractor could not read the declarations`);
  return normalise(readFileSync(join(scratch, entry.file), "utf8"));
}

const scratch = mkdtempSync(join(tmpdir(), "unforget-api-"));
let differ = 0;
try {
  const wanted = entries();
  mkdirSync(reportsDir, { recursive: true });
  for (const entry of wanted) {
    const text = report(entry, scratch);
    const committed = join(reportsDir, entry.file);
    const before = existsSync(committed) ? readFileSync(committed, "utf8") : undefined;
    if (before === text) continue;
    if (!values.check) {
      writeFileSync(committed, text);
      console.log(`${entry.file}: ${before === undefined ? "written" : "updated"}`);
      continue;
    }
    differ++;
    const fresh = join(scratch, `fresh-${entry.file}`);
    writeFileSync(fresh, text);
    console.error(`\n${entry.name}: the public API differs from docs/api/${entry.file}`);
    if (before === undefined) console.error("  (no report is committed for it)");
    else spawnSync("diff", ["-u", committed, fresh], { stdio: ["ignore", "inherit", "inherit"] });
  }
  if (!values.check && !values.only) {
    const known = new Set(wanted.map((entry) => entry.file));
    for (const stale of readdirSync(reportsDir).filter(
      (file) => file.endsWith(".api.md") && !known.has(file),
    )) {
      rmSync(join(reportsDir, stale));
      console.log(`${stale}: removed (no package exports it)`);
    }
  }
  if (differ > 0) {
    console.error(
      `\n${differ} public API ${differ === 1 ? "report differs" : "reports differ"}. If the change is meant, run \`node .ci/api-report.mjs\` and commit docs/api with a changeset that says what users see.`,
    );
    process.exitCode = 1;
  } else if (values.check) {
    console.log(`public API: ${wanted.length} entry points as in docs/api`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
