import { shellAnalyzer } from "../dist/permissions/shell/shell-analyzer.js";
const PIECES = ["ls -la | grep x","read -r line <<< hi; echo $line","printf -v out %s hi","for f in a b; do echo $f; done","declare -i n=1; export FOO=$(ls)","f() { local x=$1; echo $x; }; f a","bash -c 'ls && echo hi'","cat <<'EOF'\n$(rm x)\nEOF","timeout 5 nice env X=1 npm test",": ${PATH:=.}; (( n = 1 )); echo $((n + 1))"];
const analyze = await shellAnalyzer();
let text = ""; for (let i = 0; text.length < 10000; i++) text += `${PIECES[i % PIECES.length]}\n`;
for (let w = 0; w < 50; w++) analyze(text, { homeDir: "/home/u" });
const t = performance.now();
for (let r = 0; r < 600; r++) analyze(text, { homeDir: "/home/u" });
console.log("per call", ((performance.now() - t) / 300).toFixed(2), "ms");
