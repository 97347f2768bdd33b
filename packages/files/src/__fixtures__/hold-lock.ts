// A separate process that takes a lock and then, holding it: `exit` calls process.exit (the lock must be removed
// on the way out), `crash` is killed by the signal it sends itself (nothing runs: the lock stays, naming a
// process that no longer runs), `wait` prints "held" and holds the lock until its standard input closes.
import { withFileLock } from "../file-lock.ts";

const [lockPath, mode] = process.argv.slice(2);
if (!lockPath) throw new Error("usage: hold-lock <lockPath> <exit|crash|wait>");
await withFileLock(lockPath, async () => {
  if (mode === "exit") process.exit(0);
  if (mode === "crash") process.kill(process.pid, "SIGKILL");
  process.stdout.write("held\n");
  await new Promise((resolve) => process.stdin.on("close", resolve).resume());
});
