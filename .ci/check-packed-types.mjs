// Checks the packages as a user gets them: packs every public package, installs the tarballs into fresh
// projects (from the package store, offline once it is filled) and type-checks them under --strict with the
// declaration files checked too (skipLibCheck off):
//  - without @types/node: every entry point of every package that does not declare @types/node (a peer or
//    dependency, as the test kit's Node fakes do), and every README example that imports nothing from Node or
//    from such a package, so that no published typings silently need Node's types;
//  - with @types/node: every README example (most import node:fs or the like for their own sake).
// Run after the build: `node .ci/check-packed-types.mjs [--packed <folder>]` (.ci/run does, on the folder
// .ci/pack-packages.mjs packed; without it, the packages are packed into a scratch folder). Prints one line per
// project.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { packPackages, readPacked } from "./pack-packages.mjs";
import { catalogVersion } from "./workspace.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const PNPM = ["-y", "pnpm@10.34.9"];
const FENCE = /```ts run\n([\s\S]*?)```/g;
const pinned = (name) => catalogVersion(ROOT, name);
const packedOption = process.argv.indexOf("--packed");
const packedFolder = packedOption === -1 ? undefined : process.argv[packedOption + 1];

/** The ```ts run examples of a README, as files to check. */
function examplesOf(readme, prefix) {
  if (!existsSync(readme)) return [];
  return [...readFileSync(readme, "utf8").matchAll(FENCE)].map((match, index) => ({
    name: `${prefix}-${index}.ts`,
    code: match[1] ?? "",
    from: `${relative(ROOT, readme)} #${index}`,
  }));
}

function run(command, args, cwd) {
  try {
    return execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    process.stderr.write(
      `${command} ${args.join(" ")} failed in ${cwd}:\n${error.stdout ?? ""}${error.stderr ?? ""}\n`,
    );
    process.exit(1);
  }
}

const started = Date.now();
const scratch = mkdtempSync(join(tmpdir(), "unforget-packed-"));
try {
  const packed =
    packedFolder === undefined ? packPackages(join(scratch, "tarballs")) : readPacked(resolve(packedFolder));
  const packages = packed.map(({ folder, manifest }) => ({ folder, manifest }));
  const dependencies = Object.fromEntries(packed.map(({ name, path }) => [name, `file:${path}`]));
  // Examples that import a host library the user brings (the adapters' `ai`, `langchain`, `zod`) are type-checked
  // where those are installed: the workspace's README test runs them; here they are named and left out.
  const hostLibraries = (code) =>
    [...code.matchAll(/from "([^"]+)"/g)]
      .map((match) => match[1])
      .filter((source) => !/^(@unforget\/|node:|vitest$|fast-check$)/.test(source));
  const examples = [
    ...examplesOf(join(ROOT, "README.md"), "root"),
    ...packages.flatMap(({ folder, manifest }) =>
      examplesOf(join(ROOT, folder, "README.md"), manifest.name.replace("@unforget/", "")),
    ),
  ].filter((example) => {
    const host = hostLibraries(example.code);
    if (host.length > 0) console.log(`${example.from}: left out here (imports ${host.join(", ")})`);
    return host.length === 0;
  });
  // A package that declares @types/node may name Node's types; one that does not, must not.
  const nodeTyped = packages
    .filter(
      ({ manifest }) => manifest.dependencies?.["@types/node"] ?? manifest.peerDependencies?.["@types/node"],
    )
    .map(({ manifest }) => manifest.name);
  // Every entry point of every other package with typings, loaded for its types alone.
  const entries = packages
    .filter(({ manifest }) => manifest.exports !== undefined && !nodeTyped.includes(manifest.name))
    .flatMap(({ manifest }) =>
      Object.keys(manifest.exports).map((subpath) => `${manifest.name}${subpath.slice(1)}`),
    )
    .map(
      (specifier, index) =>
        `import type * as entry${index} from "${specifier}";\nexport type { entry${index} };`,
    );
  const usesNode = (code) =>
    /from\s+"node:|import\(\s*"node:/.test(code) || nodeTyped.some((name) => code.includes(`"${name}`));

  // One install; two programs. Without "node" in `types`, Node's typings enter a program only if a
  // declaration file asks for them, which is what the first program checks.
  const programs = [
    {
      name: "without @types/node",
      types: [],
      files: [
        {
          name: "entries.ts",
          code: `${entries.join("\n")}\n`,
          from: "every entry point of the other packages",
        },
        ...examples.filter((example) => !usesNode(example.code)),
      ],
    },
    { name: "with @types/node", types: ["node"], files: examples },
  ];
  const project = join(scratch, "project");
  mkdirSync(project);
  writeFileSync(
    join(project, "package.json"),
    `${JSON.stringify(
      {
        name: "unforget-packed-check",
        private: true,
        type: "module",
        dependencies,
        // The README examples of the test kit use its optional peers.
        devDependencies: {
          typescript: pinned("typescript"),
          "@types/node": pinned("@types/node"),
          vitest: pinned("vitest"),
          "fast-check": pinned("fast-check"),
        },
        // Packages depend on each other by version; these versions are the tarballs, not the registry.
        pnpm: { overrides: dependencies },
      },
      null,
      2,
    )}\n`,
  );
  run("npx", [...PNPM, "install", "--prefer-offline", "--ignore-scripts", "--reporter=silent"], project);
  const checks = programs.map((program) => {
    const folder = join(project, program.name.replace(/\W+/g, "-"));
    mkdirSync(folder);
    for (const file of program.files) writeFileSync(join(folder, file.name), file.code);
    const config = join(project, `tsconfig.${program.types.length === 0 ? "without" : "with"}-node.json`);
    writeFileSync(
      config,
      `${JSON.stringify(
        {
          compilerOptions: {
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            module: "nodenext",
            moduleResolution: "nodenext",
            target: "es2023",
            types: program.types,
          },
          include: [relative(project, folder)],
        },
        null,
        2,
      )}\n`,
    );
    return new Promise((resolve) => {
      execFile(
        join(project, "node_modules", ".bin", "tsc"),
        ["-p", config],
        { cwd: project },
        (error, stdout, stderr) => resolve({ program, folder, output: error ? `${stdout}${stderr}` : "" }),
      );
    });
  });
  let failed = false;
  for (const { program, folder, output } of await Promise.all(checks)) {
    if (output !== "") {
      failed = true;
      const named = program.files
        .map((file) => `  ${relative(project, join(folder, file.name))}: ${file.from}`)
        .join("\n");
      process.stderr.write(
        `The packed packages do not type-check ${program.name} (tsc --strict, declarations included):\n${output}\nFiles:\n${named}\n`,
      );
    } else {
      process.stdout.write(
        `packed types ${program.name}: ${program.files.length} files type-check against ${packages.length} tarballs\n`,
      );
    }
  }
  if (failed) process.exit(1);
  process.stdout.write(`packed types checked in ${Math.round((Date.now() - started) / 1000)} s\n`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
