import { A, Q, type Row, type RowFamily } from "./row.ts";

// A file that a program writes, copies or links and the same command then runs (as a script, a sourced file or a
// program), or that it runs by a path spelled otherwise than the one it wrote; and the names of standard input.
// The working directory is `<root>/project`, so `../project/s` is `s`.

/** Rows that run `rm` through a file the command writes first (each must reach rm in bash). */
const BYPASSES: Row[] = [
  // Programs that write a file, then a run of it.
  ["echo 'rm x' > rm.txt; cp rm.txt s; bash s", Q, Q],
  ["echo 'rm x' > rm.txt; sed -n 'w s' rm.txt; . ./s", Q, Q],
  ["echo 'rm x' > rm.txt; mv rm.txt s; source s", Q, Q],
  ["echo 'rm x' > rm.txt; install -m 755 rm.txt s; ./s", Q, Q],
  ["echo 'rm x' > rm.txt; ln rm.txt s; sh s", Q, Q],
  ["echo 'rm x' > rm.txt; ln -s rm.txt s; bash s", Q, Q],
  ["echo 'rm x' > rm.txt; dd if=rm.txt of=s status=none; bash s", Q, Q],
  ["sed -i 's/keep/rm x/' y; bash y", Q, Q],
  ["echo 'rm x' > t; tar -cf a.tar t; mkdir d; tar -xf a.tar -C d; bash d/t", Q, Q],
  ['awk \'BEGIN { print "rm x" > "s" }\'; bash s', Q, Q],
  ['perl -e \'open my $f, ">", "s"; print $f "rm x\\n"\'; bash s', Q, Q],
  ['python3 -c \'open("s", "w").write("rm x\\n")\'; bash s', Q, Q],
  ["echo 'rm x' > rm.txt; curl -s -o s \"file://$PWD/rm.txt\"; bash s", Q, Q],
  ["echo 'rm x' > rm.txt; cat rm.txt | tee ../project/s > /dev/null; bash s", Q, Q],
  ["f=s; echo 'rm x' > $f; bash s", Q, Q],
  ["echo 'rm x' > rm.txt; sort -o s rm.txt; bash s", Q, Q],
  // A program copied or linked under another name, then run.
  ["cp /bin/rm l; ./l x", Q, Q],
  ["ln -s /bin/rm l; ./l x", Q, Q],
  ["cp /bin/rm sub/ls; sub/ls x", Q, Q],
  ["cp /bin/rm l; env ./l x", Q, Q],
  ["/bin/cp /bin/rm l; ./l x", Q, Q],
  // A file written, then run by another spelling of its path.
  ["echo 'rm x' > s; bash ../project/s", Q, Q],
  ["echo 'rm x' > s; chmod +x s; ../project/s", Q, Q],
  ["echo 'rm x' > s; source ..//project/./s", Q, Q],
  ["echo 'rm x' > s; sh ./sub/../../project/s", Q, Q],
  ["echo 'rm x' > s; bash /proc/self/cwd/s", Q, Q],
  ["echo 'rm x' > sub/s; cd sub; bash s", Q, Q],
  ["echo 'rm x' > s; ln -s . d; bash d/s", Q, Q],
  ["ln -s .. up; echo 'rm x' > s; bash up/project/s", Q, Q],
  // The writer is after the run in the text, yet runs before it (a loop, a function called later).
  ["echo 'rm x' > rm.txt; for i in 1 2; do bash s 2> /dev/null; cp rm.txt s; done", Q, Q],
  ["f() { bash s; }; echo 'rm x' > rm.txt; cp rm.txt s; f", Q, Q],
  // Other names of standard input, and a here-string on another descriptor.
  ["bash /dev/fd/3 3<<< 'rm x'", Q, Q],
  [". /proc/self/fd/0 <<< 'rm x'", Q, Q],
  [". /dev/fd//0 <<< 'rm x'", Q, Q],
  ["sh //dev/stdin <<< 'rm x'", Q, Q],
  ["bash /proc/thread-self/fd/0 <<< 'rm x'", Q, Q],
  ["source /dev/../dev/fd/0 <<< 'rm x'", Q, Q],
  [". /proc/self/root/dev/stdin <<< 'rm x'", Q, Q],
  // A start-up file written, copied in or edited, then read by an interactive shell.
  ["echo 'rm x' > r; cp r ~/.bashrc; bash -ic ls", Q, Q],
  ["echo 'rm x' >> ~/.bashrc; bash -ic ls", Q, Q],
];

/** Rows the gate must keep answering as before: nothing written is run, or nothing is run. */
const BENIGN: Row[] = [
  ["echo hi > out.txt; cat out.txt", A, A],
  ["echo 'rm x' > s; cat s", A, A],
  ["ls; ./build.sh", Q, A],
  ["echo hi > out.txt; ./build.sh", Q, A],
  ["ls && bash build.sh", Q, A],
  ["grep -r x . > found.txt; bash build.sh", Q, A],
  ["cat x | sort | wc -l; ./build.sh", Q, A],
  ["cp x y; ls", Q, A],
  ["echo hi | tee out.txt; ls", Q, A],
  ["cd sub && ./build.sh", Q, A],
  ["sort x; ./build.sh", Q, A],
  ["timeout 5 ./build.sh", Q, A],
  ["bash -c 'ls'; ./build.sh", Q, A],
  ["/bin/ls; /usr/bin/cat x", Q, A],
  ["exec > log.txt; ./build.sh", Q, A],
  ["./build.sh clean && ./build.sh all", Q, A],
  // A shell's start-up files are changed only by a command that names them: a program that may write elsewhere
  // leaves `bash -c` alone.
  ["npm test; bash -c ls", A, A],
];

/**
 * A program that may write files makes every run of a file in the same command unresolvable, wherever it stands:
 * loops, functions and traps make "earlier" a fact of the run. These ask, though they may be harmless.
 */
const CONSERVATIVE: Row[] = [
  ["npm install && ./node_modules/.bin/tsc", Q, Q],
  ["./build.sh && cp out.txt sub/", Q, Q],
  ["./configure && ./build.sh", Q, Q],
  ['node -e \'require("fs").writeFileSync("s", "rm x\\n")\'; bash s', Q, Q],
];

export const WRITTEN_THEN_RUN: RowFamily = {
  name: "Files written by a program, or reached by another path, then run",
  rows: [...BYPASSES, ...BENIGN, ...CONSERVATIVE],
  reaches: BYPASSES.map(([command]) => command),
  changing: [
    "cp /bin/rm l; ./l x",
    "echo 'rm x' > s; bash ../project/s",
    "echo 'rm x' > rm.txt; sed -n 'w s' rm.txt; . ./s",
  ],
};
