import pty from "@lydell/node-pty";

const [cmd, ...args] = process.argv.slice(2);
const p = pty.spawn(cmd, args, {
  cols: 100,
  rows: 20,
  env: { ...process.env, ...JSON.parse(process.env.XENV || "{}") },
  cwd: process.env.XCWD || process.cwd(),
});
let out = "";
p.onData((d) => {
  out += d;
});
p.onExit((e) => {
  console.log("EXIT", e);
});
setTimeout(() => p.write("hello"), 4000);
setTimeout(() => {
  console.log(JSON.stringify(out.slice(-1500)));
  p.kill();
  process.exit(0);
}, 6000);
