// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the literal text ${VAR} is the shell syntax under test.
import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Tool } from "@unforget/core";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { FAMILIES } from "./__fixtures__/bash-table/families.ts";
import { A, D, type Outcome, Q, type Row } from "./__fixtures__/bash-table/row.ts";
import { createPermissionGate } from "./permission-gate.ts";
import type { PermissionMode, PermissionRuleLists } from "./permission-types.ts";

/**
 * The Bash gate against the shell forms bash runs and the tricks published against coding agents' permission
 * rules. Each row is a command and the decision it must get under two policies that deny `rm` and `git push`:
 * - narrow: a few commands allowed by prefix or exactly, in the default mode (what is not allowed is asked);
 * - bypass: bypassPermissions, where only deny (and ask) rules stand between the model and the shell.
 * `@OUT@` is a folder outside the working directory. The ground-truth test runs every row in bash with `rm` and
 * `git` replaced by recorders, and checks that no row that reaches them is allowed.
 */
const DENY = ["Bash(rm:*)", "Bash(git push:*)", "Edit(.env)"];
const NARROW: PermissionRuleLists = {
  allow: [
    "Bash(ls:*)",
    "Bash(echo:*)",
    "Bash(cat:*)",
    "Bash(grep:*)",
    "Bash(git status)",
    "Bash(git diff:*)",
    "Bash(npm test:*)",
    "Bash(true)",
  ],
  deny: DENY,
};
const BYPASS: PermissionRuleLists = { deny: DENY };

const MAIN_TABLE: Row[] = [
  // The issue's reproductions: a comment, an escaped quote in $'…', substitutions and groupings.
  ["ls # don't\nrm important.txt", D, D],
  ["ls $'\\''; rm x", D, D],
  ["ls $(rm x)", D, D],
  ["(rm x)", D, D],
  ["{ rm x; }", D, D],
  // Lists and pipelines.
  ["ls && rm x", D, D],
  ["ls || rm x", D, D],
  ["ls; rm x", D, D],
  ["ls;rm x", D, D],
  ["ls | rm x", D, D],
  ["ls |& rm x", D, D],
  ["ls & rm x", D, D],
  ["ls\nrm x", D, D],
  ["ls&&rm x", D, D],
  ["true && ls || rm x", D, D],
  ["! rm x", D, D],
  ["ls\n\n# comment\nrm x", D, D],
  [`${"true && ".repeat(60)}rm x`, D, D],
  // Subshells, groups, substitutions of every kind.
  ["(ls; rm x)", D, D],
  ["( (rm x) )", D, D],
  ["{ ls; { rm x; }; }", D, D],
  ["echo $(rm x)", D, D],
  ["echo `rm x`", D, D],
  ['echo "$(rm x)"', D, D],
  ['echo "`rm x`"', D, D],
  ["echo $(echo $(rm x))", D, D],
  ["echo `echo \\`rm x\\``", D, D],
  ["$(rm x)", D, D],
  ["cat <(rm x)", D, D],
  ["ls >(rm x)", D, D],
  ["echo ${v:-$(rm x)}", D, D],
  ["echo $(( $(rm x) + 1 ))", D, D],
  ["v=$(rm x)", D, D],
  ["export v=$(rm x)", D, D],
  ["a[$(rm x)]=1", D, D],
  ["echo ${a[$(rm x)]}", D, D],
  ["ls $( (rm x) )", D, D],
  ["cat <<< $(rm x)", D, D],
  ['cat <<< "$(rm x)"', D, D],
  // Here-documents: expanded unless the delimiter is quoted; fed to a shell, their text is a script.
  ["cat <<EOF\n$(rm x)\nEOF", D, D],
  ["cat <<EOF\n`rm x`\nEOF", D, D],
  ["cat <<'EOF'\n$(rm x)\nEOF", A, A],
  ['cat <<"EOF"\n`rm x`\nEOF', A, A],
  ["cat <<EOF\nrm x\nEOF", A, A],
  ["bash <<EOF\nrm x\nEOF", D, D],
  ["bash <<'EOF'\nls\nrm x\nEOF", D, D],
  ["sh <<< 'rm x'", D, D],
  ["cat <<-EOF\n\t$(rm x)\n\tEOF", D, D],
  ["cat <<EOF | sh\nrm x\nEOF", Q, Q],
  ["cat <<EOF && rm x\nhi\nEOF", D, D],
  // eval: literal text is read; text made at run time is not.
  ["eval rm x", D, D],
  ['eval "rm x"', D, D],
  ["eval 'ls; rm x'", D, D],
  ["eval ls", A, A],
  ['eval "$(echo rm x)"', Q, Q],
  ["c='rm x'; eval $c", Q, Q],
  ["eval eval rm x", D, D],
  // Shells given a command string, a script on their input, or a script file.
  ["sh -c 'rm x'", D, D],
  ['bash -c "rm x"', D, D],
  ["bash -lc 'rm x'", D, D],
  ["bash -ec 'ls; rm x'", D, D],
  ["bash -o pipefail -c 'rm x'", D, D],
  ["bash --norc -c 'rm x'", D, D],
  ["bash -c 'rm x' ls", D, D],
  ["dash -c 'rm x'", D, D],
  ["zsh -c 'rm x'", D, D],
  ["bash -c 'bash -c \"rm x\"'", D, D],
  ["bash -c 'ls'", A, A],
  ["bash -c 'ls && echo hi'", A, A],
  ['sh -c "$CMD"', Q, Q],
  ["sh -c '\"$0\" x' rm", Q, Q],
  ["echo 'rm x' | bash", Q, Q],
  ["echo rm x | sh -s", Q, Q],
  ["bash script.sh", Q, A],
  ["bash <(echo rm x)", Q, Q],
  ["source <(echo rm x)", Q, Q],
  [". /dev/stdin <<< 'rm x'", Q, Q],
  // Other names of standard input, and other descriptors.
  [". /dev/./stdin <<< 'rm x'", Q, Q],
  [". //dev/stdin <<< 'rm x'", Q, Q],
  [". /dev/fd/./0 <<< 'rm x'", Q, Q],
  [". /proc/thread-self/fd/0 <<< 'rm x'", Q, Q],
  [". /dev/../dev/stdin <<< 'rm x'", Q, Q],
  ["source /proc/self/fd//0 <<< 'rm x'", Q, Q],
  ["bash /dev/./stdin <<< 'rm x'", Q, Q],
  [". /dev/fd/3 3<<< 'rm x'", Q, Q],
  ["echo 'rm x' > s.sh && bash s.sh", Q, Q],
  ["echo 'rm x' > s.sh; chmod +x s.sh; ./s.sh", Q, Q],
  ["fish -c 'rm x'", Q, Q],
  // Wrappers that run another command.
  ["env rm x", D, D],
  ["env -i rm x", D, D],
  ["env X=1 rm x", D, D],
  ["env -u HOME rm x", D, D],
  ["env -- rm x", D, D],
  ["env - rm x", D, D],
  ["env -S 'rm x'", D, D],
  ["/usr/bin/env rm x", D, D],
  ["command rm x", D, D],
  ["command -p rm x", D, D],
  ["command -v rm", Q, A],
  ["builtin eval rm x", D, D],
  ["exec rm x", D, D],
  ["exec -a name rm x", D, D],
  ["nice rm x", D, D],
  ["nice -n 10 rm x", D, D],
  ["nice -10 rm x", D, D],
  ["nice --adjustment=5 rm x", D, D],
  ["nohup rm x", D, D],
  ["timeout 5 rm x", D, D],
  ["timeout -s KILL 5 rm x", D, D],
  ["timeout --preserve-status 5s rm x", D, D],
  ["timeout -k 1 5 rm x", D, D],
  ["time rm x", D, D],
  ["time -p rm x", D, D],
  ["time ls | rm x", D, D],
  ["xargs rm", D, D],
  ["echo x | xargs rm", D, D],
  ["echo x | xargs -I{} rm {}", D, D],
  ["echo x | xargs -0 rm", D, D],
  ["echo x | xargs -n1 rm", D, D],
  ["echo x | xargs -P4 -n 1 rm", D, D],
  ["echo x | xargs sh -c 'rm \"$@\"' _", D, D],
  ["echo rm x | xargs", A, A],
  ["echo rm x | xargs sh -c", Q, Q],
  ["sudo rm x", D, D],
  ["sudo -u root rm x", D, D],
  ["sudo -E rm x", D, D],
  ["sudo -- rm x", D, D],
  ["doas rm x", D, D],
  ["doas -u root rm x", D, D],
  ["find . -name x -exec rm {} \\;", D, D],
  ["find . -name x -exec rm {} +", D, D],
  ["find . -name x -execdir rm {} \\;", D, D],
  ["find . -name x -ok rm {} \\;", D, D],
  ["stdbuf -oL rm x", D, D],
  ["stdbuf -o L rm x", D, D],
  ["ionice -c3 rm x", D, D],
  ["chrt -o 0 rm x", D, D],
  ["setsid rm x", D, D],
  ["setsid -w rm x", D, D],
  ["flock lockfile rm x", D, D],
  ["flock lockfile -c 'rm x'", D, D],
  ["flock -w 5 lockfile rm x", D, D],
  ["taskset 0x1 rm x", D, D],
  ["taskset -c 0 rm x", D, D],
  ["watch -n1 rm x", D, D],
  ["watch -x rm x", D, D],
  ["su -c 'rm x'", D, D],
  ["su root -c 'rm x'", D, D],
  ["runuser -u root -- rm x", D, D],
  ["busybox rm x", D, D],
  ["script -qc 'rm x' /dev/null", D, D],
  ["strace -o /dev/null rm x", D, D],
  ["unbuffer rm x", D, D],
  ["chroot / rm x", D, D],
  ["noglob rm x", D, D],
  ["sudo env timeout 5 nice rm x", D, D],
  ["timeout 5 bash -c 'rm x'", D, D],
  ["nice nohup stdbuf -oL timeout 5 rm x", D, D],
  ["trap 'rm x' EXIT", D, D],
  ["trap -- 'rm x' EXIT; ls", D, D],
  ["nice --frobnicate rm x", Q, Q],
  // A program the gate does not know as a wrapper, given the denied program.
  ["mywrap rm x", Q, Q],
  ["mywrap /bin/rm x", Q, Q],
  ["grep rm x", A, A],
  // What bash runs is the word after quotes and escapes are removed, a path reduced to its program.
  ["r''m x", D, D],
  ['r""m x', D, D],
  ["\\rm x", D, D],
  ['"rm" x', D, D],
  ["'rm' x", D, D],
  ["r\\m x", D, D],
  ["$'rm' x", D, D],
  ["$'\\x72m' x", D, D],
  ["$'\\162m' x", D, D],
  ["$'\\u0072m' x", D, D],
  ["r$'\\0'm x", D, D],
  ["r$''m x", D, D],
  ["/bin/rm x", D, D],
  ["/usr/bin/rm x", D, D],
  ["./rm x", D, D],
  ["~/rm x", D, D],
  ["X=1 rm x", D, D],
  ["X=1 Y=2 rm x", D, D],
  [">log rm x", D, D],
  ["2>/dev/null rm x", D, D],
  ["<x rm y", D, D],
  ["X=$(ls) rm x", D, D],
  ["if true; then rm x; fi", D, D],
  ["if rm x; then :; fi", D, D],
  ["if false; then :; elif true; then rm x; else ls; fi", D, D],
  ["for f in x; do rm $f; done", D, D],
  ["for ((i=0; i<1; i++)); do rm x; done", D, D],
  ["for ((i=0; i<$(rm x); i++)); do :; done", D, D],
  ["while true; do rm x; break; done", D, D],
  ["until rm x; do :; done", D, D],
  ["case a in a) rm x;; esac", D, D],
  ["case a in b) ls;; *) rm x;; esac", D, D],
  ["select s in a; do rm x; break; done < /dev/null", D, D],
  ["[[ $(rm x) ]]", D, D],
  ["(( $(rm x) ))", D, D],
  ["time { rm x; }", D, D],
  ["f() { rm x; }; f", D, D],
  ["ls() { rm x; }; ls", D, D],
  ["function g { rm x; }; g", D, D],
  ["f() ( rm x ); f", D, D],
  ["command_not_found_handle() { rm x; }; nosuchcommand", D, D],
  ["alias ls='rm x'; ls", D, D],
  ["shopt -s expand_aliases\nalias ls='rm x'\nls", D, D],
  // Command names only known when the command runs.
  ["r${v}m x", Q, Q],
  ["$v rm x", Q, Q],
  ["c=rm; $c x", Q, Q],
  ["rm${IFS}x", Q, Q],
  ["${SHELL%sh}rm x", Q, Q],
  ["$(echo rm) x", Q, Q],
  ["`echo rm` x", Q, Q],
  ["{rm,x}", Q, Q],
  ["rm{,} x", Q, Q],
  ["r?m x", Q, Q],
  ["r*m x", Q, Q],
  ["r\\\nm x", D, D],
  ["=rm x", Q, Q],
  ["coproc rm x", D, D],
  ["hash -p /usr/bin/rm ls; ls x", Q, Q],
  ["IFS=,; c=rm,x; $c", Q, Q],
  ["ls\rrm x", Q, A],
  // Where one parser or another reads differently from bash (tree-sitter-bash reads the first two as one command).
  ["ls\n\\rm x", D, D],
  ["ls\n\\\nrm x", D, D],
  ["coproc NAME { rm x; }", D, D],
  ["case a in a) ls;& b) rm x;; esac", D, D],
  ['echo "$((rm x) )"', D, D],
  // Not a substitution, but arithmetic reading the variables rm and x, which may come from the environment.
  ["echo $(( rm x ))", Q, Q],
  ["ls >&- rm x", A, A],
  ["ls (\nrm x", D, D],
  ["ls (", A, A],
  ["ls ;; rm x", Q, Q],
  ["ls <> x", A, A],
  // Text bash evaluates a second time: arithmetic, subscripts, variable names, prompt expansion.
  ["v='a[$(rm y)]'; echo $((v))", Q, Q],
  ["[[ -v 'a[$(rm x)]' ]]", Q, Q],
  ["declare -i n='a[$(rm x)]'", Q, Q],
  ["printf -v 'a[$(rm x)]' hi", Q, Q],
  ["read 'a[$(rm x)]' <<< hi", Q, Q],
  ["unset 'a[$(rm x)]'", Q, Q],
  ["v='$(rm y)'; echo ${v@P}", Q, Q],
  ["v='a[$(rm y)]'; echo ${!v}", Q, Q],
  ["let 'v=a[$(rm x)]'", Q, Q],
  ["printf -v'a[$(rm x)]' hi", Q, Q],
  ["printf $o 'a[$(rm x)]' hi", Q, Q],
  // The same, with the text built at run time (from parts, or from the environment): unresolved.
  ["d='$'; v=\"x[${d}(rm y)]\"; echo $((v))", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; ((v))", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; let v", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; [[ v -eq 0 ]]", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; [[ 1 -lt v ]]", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; s=abc; echo ${s:v}", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; s=abc; echo ${s:0:v}", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; a[v]=1", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; echo ${a[v]}", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; declare -i n=v", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; f() { local -i n=v; }; f", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; echo $[v]", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; echo ${!v}", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; [[ -v $v ]]", Q, Q],
  ['d=\'$\'; p="${d}(rm y)"; echo "${p@P}"', Q, Q],
  ['d=\'$\'; v="x[${d}(rm y)]"; declare -i n; printf -v n %s "$v"', Q, Q],
  ['d=\'$\'; v="x[${d}(rm y)]"; declare -i n; read n <<< "$v"', Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; echo $(($v))", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; for ((i=v; i<1; i++)); do :; done", Q, Q],
  ["d='$'; v=\"x[${d}(rm y)]\"; echo $((1 + v))", Q, Q],
  ['d=\'$\'; v="x[${d}(rm y)]"; test -v "$v"', Q, Q],
  ['d=\'$\'; v="x[${d}(rm y)]"; [ -v "$v" ]', Q, Q],
  ['d=\'$\'; v="x[${d}(rm y)]"; x[0]=1; unset "$v"', Q, Q],
  ["echo $((n + 1))", Q, Q],
  ["echo ${!name}", Q, Q],
  ["for ((i=i; i<1; i++)); do :; done", Q, Q],
  // Literal arithmetic, and variables the script sets to numbers first, stay allowed.
  ["echo $((1+2))", A, A],
  ["i=0; ((i++)); echo $i", A, A],
  ["for ((i=0; i<3; i++)); do echo $i; done", A, A],
  ["n=3; for ((i=0; i<n; i++)); do echo $i; done", A, A],
  ["x=4; echo $((x + 1))", A, A],
  ["x=1; x=$((x+1)); echo $((x*2))", A, A],
  ["echo $(( $# + 1 ))", A, A],
  ["s=hello; echo ${s:1:2}", A, A],
  ["a[0]=1; echo ${a[1]}", A, A],
  ["p='\\u'; echo \"${p@P}\"", A, A],
  ["[[ 3 -eq 3 ]] && echo ok", A, A],
  ["for i in 1 2 3; do echo $((i * 2)); done", A, A],
  ["f() { i=0; ((i++)); echo $i; }; f", A, A],
  ["f() { local i=0; ((i++)); echo $i; }; f", A, A],
  ["(n=1); echo $((n))", Q, Q],
  ["f() { n=1; }; echo $((n))", Q, Q],
  ["declare -A m; d='$'; v=\"x[${d}(rm y)]\"; m[$v]=1; echo ${m[$v]}", A, A],
  // Benign: printf without -v assigns nothing, a word ending in a slash is no program, `> >(…)` writes no file.
  ["printf '%s\\n' '$(rm x)'", Q, A],
  ["perl -ne 'print if /rm/' rm.txt", Q, A],
  ["echo rm > >(cat)", A, A],
  ["echo rm > >(rm x)", D, D],
  // Variables that make bash or a program run code the command does not show.
  ["PATH=.:$PATH ls", Q, Q],
  ["export PATH=/tmp:$PATH; ls", Q, Q],
  ["BASH_ENV=s.sh bash -c ls", Q, Q],
  ["env BASH_ENV=s.sh bash -c ls", Q, Q],
  ["GIT_EXTERNAL_DIFF='rm x' git diff", Q, Q],
  ["LD_PRELOAD=./x.so ls", Q, Q],
  ["env 'BASH_FUNC_ls%%=() { rm x; }' bash -c ls", Q, Q],
  ["PS4='$(rm x)' bash -xc ls", Q, Q],
  // bash's own tables, assigned by any means: `BASH_CMDS[name]` is `hash -p`, `BASH_ALIASES[name]` is `alias`.
  ["BASH_CMDS[ls]=/bin/rm; ls x", Q, Q],
  ["BASH_CMDS[ls]+=/bin/rm; ls x", Q, Q],
  ["read 'BASH_CMDS[ls]' <<< /bin/rm; ls x", Q, Q],
  ["printf -v 'BASH_CMDS[ls]' /bin/rm; ls x", Q, Q],
  ["declare 'BASH_CMDS[ls]=/bin/rm'; ls x", Q, Q],
  ["shopt -s expand_aliases\nBASH_ALIASES[l]='rm x'\nl", Q, Q],
  ["shopt -s expand_aliases\nBASH_ALIASES+=([l]='rm x')\nl", Q, Q],
  ["shopt -s expand_aliases\nread 'BASH_ALIASES[l]' <<< 'rm x'\nl", Q, Q],
  ["shopt -s expand_aliases\nprintf -v 'BASH_ALIASES[l]' 'rm x'\nl", Q, Q],
  ["shopt -s expand_aliases\ndeclare -A BASH_ALIASES=([l]='rm x')\nl", Q, Q],
  // Variables that run code, set by anything but a plain assignment.
  ["printf -v BASH_ENV %s rm.txt; bash -c ls", Q, Q],
  ["printf -vBASH_ENV %s rm.txt; bash -c ls", Q, Q],
  ["read -r PATH <<< .; ls", Q, Q],
  ['declare -x "BASH_ENV=rm.txt"; bash -c ls', Q, Q],
  ["export 'BASH_ENV'=rm.txt; bash -c ls", Q, Q],
  ['readonly "PATH=.:$PATH"; ls', Q, Q],
  ["f() { local 'PATH=.'; ls; }; f", Q, Q],
  [": ${BASH_ENV:=rm.txt}; export BASH_ENV; bash -c ls", Q, Q],
  [": ${PATH=.}; ls", Q, Q],
  ["for PATH in .; do ls; done", Q, Q],
  ["select PATH in .; do ls; break; done <<< 1", Q, Q],
  ["declare -n r=PATH; r=.; ls", Q, Q],
  ["mapfile -t PATH <<< .; ls", Q, Q],
  ["readarray -d , -t PATH <<< .; ls", Q, Q],
  ["getopts a PS4 -a; set -x; ls", Q, Q],
  ["let PATH=1; ls", Q, Q],
  ["(( PATH = 0 )); ls", Q, Q],
  ["read $v <<< .; ls", Q, Q],
  ["PS0=x bash -c ls", Q, Q],
  ["exec {PATH}> x; ls", Q, Q],
  ["coproc PATH { ls; }; ls", Q, Q],
  ["wait -p PATH; ls", Q, Q],
  ["wait -n -p BASH_ENV; bash -c ls", Q, Q],
  ["PS2=x bash -c ls", Q, Q],
  // The same builtins assigning other variables.
  ["read -r line <<< hi; echo $line", Q, A],
  ["printf -v out %s hi; echo $out", Q, A],
  ["for f in a b; do echo $f; done", A, A],
  ["f() { local x=$1; echo $x; }; f a", A, A],
  ["declare -i n=1; echo $n", A, A],
  ["export FOO=$(ls)", A, A],
  ["mapfile -t lines < x", Q, A],
  // Arguments: a rule's words are matched after quotes are removed.
  ["git push", D, D],
  ["git  'push'", D, D],
  ["\\git push", D, D],
  ['git "push" origin main', D, D],
  ["/usr/bin/git push", D, D],
  ["git push --force", D, D],
  ["git -C . push", Q, Q],
  ["git $sub origin", Q, Q],
  ["cd sub && git push", D, D],
  ["git status", A, A],
  ["git  'status'", A, A],
  ["git status -s", Q, A],
  ["git diff HEAD", A, A],
  ["git log", Q, A],
  ["npm test", A, A],
  ["npm test -- --watch", A, A],
  ["npm tests", Q, A],
  ["timeout 60 npm test", A, A],
  ["npm test; rm x", D, D],
  // Commands that are allowed, with what bash does around them.
  ["ls", A, A],
  ["ls -la", A, A],
  ["ls && echo hi", A, A],
  ["ls | grep x", A, A],
  ["cat x | grep y", A, A],
  ["ls; echo done", A, A],
  ['echo "a && rm x"', A, A],
  ["echo 'rm x'", A, A],
  ["echo '$(rm x)'", A, A],
  ['echo "\\$(rm x)"', A, A],
  ['echo "fix \\`rm x\\`"', A, A],
  ["echo rm", A, A],
  ["ls # && rm x", A, A],
  ["ls \\; rm x", A, A],
  ["ls 'x; rm x'", A, A],
  ['ls "$(echo hi)"', A, A],
  ["echo $HOME", A, A],
  ["ls *.ts", A, A],
  ["\\ls", A, A],
  ["/bin/ls", Q, A],
  ["./ls", Q, A],
  ["nice ls", A, A],
  ["f() { ls; }; f", A, A],
  ["f; f() { ls; }", Q, Q],
  ["x=1; echo $x", A, A],
  ["v=PATH; echo ${!v}", A, A],
  ["rm\\ x", Q, A],
  ["ls; \u00a0rm x", Q, A],
  ['grep -r "rm -rf" .', A, A],
  ["ls -la | grep -v rmdir", A, A],
  ["echo hi > /dev/null", A, A],
  ["ls 2>&1 | cat", A, A],
  ["echo hi >&2", A, A],
  ["ls >&- x", A, A],
  // Writes: redirections and tee go through the same path rules as Write.
  ["echo hi > out.txt", A, A],
  ["echo hi >> out.txt", A, A],
  ["echo hi > sub/out.txt", A, A],
  ["echo hi > @OUT@/x", Q, A],
  ["echo hi >> @OUT@/x", Q, A],
  ["echo hi &> @OUT@/x", Q, A],
  ["echo hi >| @OUT@/x", Q, A],
  ["echo hi >& @OUT@/x", Q, A],
  ["echo hi 2> @OUT@/x", Q, A],
  ["echo hi >> ~/.bashrc", Q, A],
  ["echo hi | tee @OUT@/x", Q, A],
  ["echo hi | tee out.txt", Q, A],
  ["echo hi > .env", D, D],
  ["echo hi >> ./.env", D, D],
  ["echo hi | tee -a .env", D, D],
  ["echo hi > sub/.env", D, D],
  ["echo hi > $F", Q, Q],
  ['echo hi > "$HOME/.env"', Q, Q],
  ["echo hi > sub/../.env", Q, Q],
  ["cd sub && echo hi > .env", Q, Q],
  ["exec 3> .env", D, D],
  ["ls > .env", D, D],
];

/** The main table, then each family's rows (see `__fixtures__/bash-table/`). */
const TABLE: Row[] = [...MAIN_TABLE, ...FAMILIES.flatMap((family) => family.rows)];
/** Rows that bash must be seen to reach rm or git push with, whatever their answer (each family's control). */
const MUST_REACH = new Map(
  FAMILIES.flatMap((family) => family.reaches.map((command) => [command, family.name])),
);

let cwd: string;
let home: string;
let outside: string;

beforeAll(async () => {
  const base = await realpath(await mkdtemp(join(tmpdir(), "bash-gate-")));
  cwd = join(base, "project");
  home = join(base, "home");
  outside = join(base, "outside");
  for (const dir of [join(cwd, "sub"), home, outside]) await mkdir(dir, { recursive: true });
});

const bash: Tool = {
  name: "Bash",
  description: "Bash",
  inputSchema: { type: "object" },
  permissionSubject: (input) => ({ kind: "command", command: String(input.command) }),
  execute: async () => ({ content: "ran", isError: false }),
};

async function decided(
  command: string,
  rules: PermissionRuleLists,
  mode: PermissionMode,
): Promise<{ outcome: Outcome; reason: string }> {
  let reason: string | undefined;
  const gate = createPermissionGate({
    cwd,
    homeDir: home,
    mode,
    rules,
    canUseTool: async (_tool, _input, options) => {
      reason = options.reason;
      return { behavior: "deny", message: "asked" };
    },
  });
  const decision = await gate.authorize({
    tool: bash,
    input: { command },
    toolUseId: "t1",
    sessionId: "s",
    cwd,
    signal: new AbortController().signal,
  });
  return reason !== undefined
    ? { outcome: Q, reason }
    : { outcome: decision.behavior, reason: decision.behavior === "deny" ? decision.message : "" };
}

const decide = async (command: string, rules: PermissionRuleLists, mode: PermissionMode) =>
  (await decided(command, rules, mode)).outcome;

const placed = (command: string, out: string) => command.replaceAll("@OUT@", out);

describe("the Bash gate's table", () => {
  it(`has at least 200 rows, each once (${TABLE.length})`, () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(200);
    expect(new Set(TABLE.map(([command]) => command)).size).toBe(TABLE.length);
    const rows = new Set(TABLE.map(([command]) => command));
    expect(FAMILIES.flatMap((family) => family.reaches.filter((command) => !rows.has(command)))).toEqual([]);
  });

  it.each(TABLE)("%j: narrow %s, bypass %s", async (command, narrow, bypass) => {
    const text = placed(command, outside);
    expect({
      narrow: await decide(text, NARROW, "default"),
      bypass: await decide(text, BYPASS, "bypassPermissions"),
    }).toEqual({
      narrow,
      bypass,
    });
  });
});

/**
 * Rows marked deny that contain `rm x` yet do not reach `rm` when bash runs them, each for a reason of bash's own
 * (the positive control below checks that every other one does, so that the run proves bash ran them).
 */
const NOT_REACHED = new Set<string>([
  "ls || rm x", // ls succeeds
  "true && ls || rm x",
  "select s in a; do rm x; break; done < /dev/null", // select reads end of input and stops
  "ls (\nrm x", // a syntax error: bash runs nothing
  "./rm x", // no such file
  "~/rm x",
  "watch -n1 rm x", // watch needs a terminal
  "watch -x rm x",
  "noglob rm x", // zsh's, not a program
  "alias ls='rm x'; ls", // bash -c expands no aliases
  "runuser -u root -- rm x", // needs a login session the test machine may refuse, and resets PATH
  "chroot / rm x", // needs a privilege a container may lack
]);
/**
 * Rows of the main table asked about that contain `rm x` or `rm y` yet do not reach `rm` in this run, each for a
 * reason; every other such row must reach it (the positive control for asked rows: each stands for a real way to
 * run the denied program, or the reason it does not here is written down).
 */
const ASKED_NOT_REACHED = new Map<string, string>([
  ["nice --frobnicate rm x", "nice refuses an unknown option"],
  ["${SHELL%sh}rm x", "SHELL is not set under env -i"],
  ["=rm x", "zsh's =command expansion; bash looks for a program named =rm"],
  ["ls\rrm x", "a carriage return is part of the word: bash runs `ls\\rrm`"],
  ["echo $(( rm x ))", "rm and x are unset here; the environment could set them"],
  ["ls ;; rm x", "a syntax error outside case"],
  ["unset 'a[$(rm x)]'", "a is unset: nothing to expand"],
  ["printf $o 'a[$(rm x)]' hi", "o is unset: printf prints, assigning nothing"],
  [
    "declare -A m; d='$'; v=\"x[${d}(rm y)]\"; m[$v]=1; echo ${m[$v]}",
    "an associative subscript is a string, not arithmetic",
  ],
  ["printf '%s\\n' '$(rm x)'", "printf without -v only prints"],
  ["GIT_EXTERNAL_DIFF='rm x' git diff", "git is a recorder here"],
  ["PS4='$(rm x)' bash -xc ls", "bash run as root does not take PS4 from the environment"],
  ["ls; \u00a0rm x", "the space before rm is a no-break space: bash looks for a program named ` rm`"],
]);
/** sudo's long options (1.9.13), for its shim: `:` after a name that takes a value, `::` an optional one. */
const SUDO_LONG = [
  ...[
    "askpass",
    "auth-type:",
    "background",
    "bell",
    "close-from:",
    "login-class:",
    "chdir:",
    "preserve-env::",
  ],
  ...["edit", "group:", "set-home", "help", "host:", "login", "remove-timestamp", "reset-timestamp", "list"],
  ...["no-update", "non-interactive", "preserve-groups", "prompt:", "chroot:", "role:", "stdin", "shell"],
  ...["command-timeout:", "type:", "other-user:", "user:", "version", "validate"],
].join(",");
/** Rows that run a program the machine may lack: the control lists them by name instead of passing them silently. */
const NEEDS: Record<string, string> = {
  "zsh -c 'rm x'": "zsh",
  "fish -c 'rm x'": "fish",
  "busybox rm x": "busybox",
  "unbuffer rm x": "unbuffer",
  "strace -o /dev/null rm x": "strace",
  "chrt -o 0 rm x": "chrt",
  "ionice -c3 rm x": "ionice",
  "script -qc 'rm x' /dev/null": "script",
  "su -c 'rm x'": "su",
  "su root -c 'rm x'": "su",
  "flock lockfile rm x": "flock",
  "flock lockfile -c 'rm x'": "flock",
  "flock -w 5 lockfile rm x": "flock",
  "taskset 0x1 rm x": "taskset",
  "taskset -c 0 rm x": "taskset",
  "setsid rm x": "setsid",
  "setsid -w rm x": "setsid",
  "stdbuf -oL rm x": "stdbuf",
  "stdbuf -o L rm x": "stdbuf",
  "nice nohup stdbuf -oL timeout 5 rm x": "stdbuf",
  // The wrapper-arity family.
  "stdbuf --output=L rm x": "stdbuf",
  "stdbuf --out L rm x": "stdbuf",
  "stdbuf -i0 -eL rm x": "stdbuf",
  "setsid -fw rm x": "setsid",
  "setsid --wa rm x": "setsid",
  "flock --nonblock lockfile rm x": "flock",
  "flock -nw 1 lockfile rm x": "flock",
  "flock --timeout=1 lockfile rm x": "flock",
  "flock --conf 1 lockfile rm x": "flock",
  "flock lockfile --command 'rm x'": "flock",
  "flock -c 'rm x' lockfile": "flock",
  "script -q /dev/null -c 'rm x'": "script",
  "script --command='rm x' -q /dev/null": "script",
  "script --comm 'rm x' /dev/null": "script",
  "script -qec 'rm x' /dev/null": "script",
  "script -t -qc 'rm x' /dev/null": "script",
  "script --timing -qc 'rm x' /dev/null": "script",
  "taskset -ac 0 rm x": "taskset",
  "taskset --cpu 0 rm x": "taskset",
  "taskset -p 1": "taskset",
  "chrt --other 0 rm x": "chrt",
  "chrt --oth 0 rm x": "chrt",
  "chrt -oR 0 rm x": "chrt",
  "chrt -e 0 rm x": "chrt",
  "ionice -tc3 rm x": "ionice",
  "ionice --class=3 rm x": "ionice",
  "ionice --cl 3 rm x": "ionice",
  "ionice --classd=4 -c2 rm x": "ionice",
  "flock -o --verbose lockfile rm x": "flock",
  "flock -s -E 3 lockfile rm x": "flock",
  "command time -o /dev/null rm x": "time",
  "/usr/bin/time -qv rm x": "time",
  "/usr/bin/time --verb rm x": "time",
  "ionice -n7 -c2 rm x": "ionice",
};

/**
 * Runs every row in bash, a few bash drivers each running its share of rows one `bash -c` at a time (one process
 * per row from node is what made this test slow under load). A row runs in a fresh folder with recorders for
 * `rm` and `git`; its output goes through a pipe that is drained until every process holding it is gone, so that
 * background jobs and process substitutions are waited for. Answers, per row, whether rm or git push was reached
 * (or a file went), and which programs of `NEEDS` the machine lacks.
 */
async function runInBash(commands: string[]): Promise<{ reached: boolean[]; missing: Set<string> }> {
  const base = await realpath(await mkdtemp(join(tmpdir(), "bash-gate-run-")));
  const shims = join(base, "shims");
  const texts = join(base, "rows");
  await mkdir(shims);
  await mkdir(texts);
  const shim = async (name: string, body: string) => {
    await writeFile(join(shims, name), `#!/bin/bash\n${body}\n`);
    await chmod(join(shims, name), 0o755);
  };
  await shim("rm", 'echo "rm $*" >> "$GATE_LOG"');
  await shim("git", 'echo "git $*" >> "$GATE_LOG"');
  await shim("mywrap", 'exec "$@"');
  await shim("npm", "exit 0");
  // sudo and doas read their options with getopt as the programs do (sudo 1.9's and OpenBSD doas's option
  // strings); what runs nothing exits, a shell alone reads its input.
  await shim(
    "sudo",
    `o=$(getopt -q -o +Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv -l ${SUDO_LONG} -- "$@") || exit 1
eval "set -- $o"; shell=0
while (( $# )) && [[ $1 != -- ]]; do case $1 in
  -[lveKV]|--list|--validate|--edit|--remove-timestamp|--version|--help) exit 0;;
  -[si]|--shell|--login) shell=1;;
  -h) [[ -z $2 ]] && exit 0; shift;;
  -[aCcDgpRrTtUu]) shift;;
  --*) [[ ,${SUDO_LONG}, == *",\${1#--}:"* ]] && shift;;
esac; shift; done; shift
while [[ $1 == [A-Za-z_]*=* ]]; do export "$1"; shift; done
(( $# == 0 && shell )) && exec bash
(( $# == 0 )) && exit 0
exec "$@"`,
  );
  await shim(
    "doas",
    'o=$(getopt -q -o +C:Lnsu: -- "$@") || exit 1; eval "set -- $o"\nwhile (( $# )) && [[ $1 != -- ]]; do case $1 in -[CL]) exit 0;; -u) shift;; esac; shift; done; shift; exec "$@"',
  );
  await Promise.all(
    commands.map((command, row) =>
      writeFile(join(texts, String(row)), placed(command, join(base, String(row), "outside"))),
    ),
  );
  const driver = `
    shims=$1 texts=$2 base=$3; shift 3
    for row in "$@"; do
      IFS= read -r -d '' text < "$texts/$row"
      root=$base/$row
      mkdir -p "$root/project/sub" "$root/home" "$root/outside"
      for file in x y important.txt; do printf keep > "$root/project/$file"; done
      (cd "$root/project" && exec env -i PATH="$shims:/usr/local/bin:/usr/bin:/bin" HOME="$root/home" \\
        GATE_LOG="$root/log" timeout -s KILL 5 bash -c "$text") < /dev/null 2>&1 | timeout -s KILL 5 cat > /dev/null
      reached=0
      push='^git( .*)? push( |$)'
      [[ -f $root/log ]] && while IFS= read -r line; do
        [[ $line == rm* || $line =~ $push ]] && reached=1
      done < "$root/log"
      for file in x y important.txt; do [[ -e $root/project/$file ]] || reached=1; done
      echo "row $row $reached"
    done
    for program in ${[...new Set(Object.values(NEEDS))].join(" ")}; do
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin command -v "$program" > /dev/null || echo "missing $program"
    done`;
  const drivers = 3;
  const outputs = await Promise.all(
    Array.from({ length: drivers }, (_, driverIndex) => {
      const rows = commands.map((_, row) => row).filter((row) => row % drivers === driverIndex);
      return new Promise<string>((done, fail) => {
        const child = spawn("bash", ["-c", driver, "driver", shims, texts, base, ...rows.map(String)], {
          stdio: ["ignore", "pipe", "inherit"],
        });
        let output = "";
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString();
        });
        child.on("error", fail);
        child.on("close", (code) =>
          code === 0 ? done(output) : fail(new Error(`bash driver exited ${code}`)),
        );
      });
    }),
  );
  await rm(base, { recursive: true, force: true, maxRetries: 5 }).catch(() => undefined);
  const reached = commands.map(() => false);
  const seen = new Set<number>();
  const missing = new Set<string>();
  for (const line of outputs.join("").split("\n")) {
    const row = /^row (\d+) ([01])$/.exec(line);
    if (row) {
      seen.add(Number(row[1]));
      reached[Number(row[1])] = row[2] === "1";
    }
    const lacks = /^missing (\S+)$/.exec(line);
    if (lacks?.[1]) missing.add(lacks[1]);
  }
  expect(seen.size).toBe(commands.length);
  return { reached, missing };
}

describe("the table against bash", () => {
  // Over 500 rows: under a loaded machine (load 15 on 2 cores) the run took more than two minutes.
  it("no row that reaches rm or git push is allowed, every denied or asked row with `rm x` reaches rm, and every allowed row is harmless", {
    timeout: 300_000,
  }, async () => {
    const commands = TABLE.map(([command]) => command);
    const { reached, missing } = await runInBash(commands);
    const wrong: string[] = [];
    const lacking: string[] = [];
    TABLE.forEach(([command, narrow, bypass], row) => {
      if (reached[row] && (narrow === A || bypass === A))
        wrong.push(`allowed, yet reaches rm or git push: ${JSON.stringify(command)}`);
      const asked = (narrow === Q || bypass === Q) && /rm [xy]/.test(command) && row < MAIN_TABLE.length;
      if (asked && !reached[row] && !ASKED_NOT_REACHED.has(command)) {
        const program = NEEDS[command];
        if (program !== undefined && missing.has(program))
          lacking.push(`${JSON.stringify(command)} (no ${program})`);
        else
          wrong.push(
            `asked, yet bash did not reach rm (the row proves no bypass): ${JSON.stringify(command)}`,
          );
      }
      if (reached[row] && ASKED_NOT_REACHED.has(command))
        wrong.push(
          `listed as not reaching rm, yet it does (remove it from the list): ${JSON.stringify(command)}`,
        );
      const family = MUST_REACH.get(command);
      if (family !== undefined && !reached[row])
        wrong.push(
          `${family}: bash did not reach rm, so the row proves no bypass: ${JSON.stringify(command)}`,
        );
      const control = (narrow === D || bypass === D) && command.includes("rm x") && !NOT_REACHED.has(command);
      if (!control || reached[row]) return;
      const program = NEEDS[command];
      if (program !== undefined && missing.has(program))
        lacking.push(`${JSON.stringify(command)} (no ${program})`);
      else
        wrong.push(`denied, yet bash did not reach rm (the run proves nothing): ${JSON.stringify(command)}`);
    });
    if (lacking.length > 0) console.warn(`not run, the program is missing here:\n${lacking.join("\n")}`);
    expect(wrong).toEqual([]);
    // Whatever the machine lacks, most of the table ran.
    expect(reached.filter(Boolean).length).toBeGreaterThan(150);
  });
});

interface Built {
  text: string;
  denied: boolean;
  /** Some part changes bash's state that decides what later commands run (its tables, a code-running variable). */
  changes: boolean;
}

/** Commands the narrow policy allows, and ones it denies, each also behind a wrapper. */
const ALLOWED_LEAVES = [
  "ls",
  "ls -la",
  "echo hi",
  "cat x",
  "git status",
  "npm test",
  "timeout 5 npm test",
  "nice ls",
  "env ls",
];
const DENIED_LEAVES = [
  "rm x",
  "rm -rf y",
  "\\rm x",
  "/bin/rm x",
  "r''m x",
  '"rm" x',
  "git push",
  "git 'push' origin",
  "timeout 5 rm x",
  "sudo rm x",
  "env X=1 rm x",
  "xargs rm",
  "command rm x",
];

/** Commands that change bash's tables or a code-running variable by means other than a plain assignment. */
const CHANGING_LEAVES = [
  "read -r PATH <<< .",
  "printf -v BASH_ENV %s x",
  "BASH_CMDS[ls]=/bin/rm",
  "BASH_ALIASES[ls]='rm x'",
  "declare -n r=PS4",
  "mapfile -t PATH < x",
  ": ${PATH:=.}",
  "let PATH=1",
  "export 'BASH_ENV'=x",
  "getopts a PS4",
  "for PATH in .; do ls; done",
  ...FAMILIES.flatMap((family) => family.changing),
];

const singleQuoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
const heredocs = (text: string) =>
  Math.max(0, ...[...text.matchAll(/<<'E(\d+)'/g)].map((match) => Number(match[1])));

/** Ways to run a command: each keeps it a command bash runs (a space after `$(`: `$((` starts arithmetic). */
const WRAPS: ((inner: string) => string)[] = [
  (inner) => `( ${inner} )`,
  (inner) => `{ ${inner}; }`,
  (inner) => `echo $( ${inner} )`,
  (inner) => `echo "$( ${inner} )"`,
  (inner) => `echo \`${inner.replaceAll("\\", "\\\\").replaceAll("`", "\\`")}\``,
  (inner) => `cat <( ${inner} )`,
  (inner) => `ls >( ${inner} )`,
  (inner) => `! ${inner}`,
  (inner) => `if ${inner}; then ls; fi`,
  (inner) => `if ls; then ${inner}; else echo; fi`,
  (inner) => `for i in 1; do ${inner}; done`,
  (inner) => `while ${inner}; do ls; done`,
  (inner) => `case x in x) ${inner};; esac`,
  (inner) => `eval ${singleQuoted(inner)}`,
  (inner) => `bash -c ${singleQuoted(inner)}`,
  (inner) => `sh -c ${singleQuoted(inner)}`,
  // In a group, so that what follows the closing line is not on it (bash would read it as part of the text).
  (inner) => {
    const delimiter = `E${heredocs(inner) + 1}`;
    return `{ bash <<'${delimiter}'\n${inner}\n${delimiter}\n}`;
  },
  (inner) => `f() { ${inner}; }; f`,
];
const OPERATORS = [" && ", " || ", "; ", " | ", " |& ", " & ", "\n"];

const built = fc.letrec<{ node: Built; wrap: Built; join: Built }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(
      fc.constantFrom(...ALLOWED_LEAVES).map((text) => ({ text, denied: false, changes: false })),
      fc.constantFrom(...DENIED_LEAVES).map((text) => ({ text, denied: true, changes: false })),
      fc.constantFrom(...CHANGING_LEAVES).map((text) => ({ text, denied: false, changes: true })),
    ),
    tie("wrap"),
    tie("join"),
  ),
  wrap: fc
    .tuple(fc.constantFrom(...WRAPS), tie("node"))
    .map(([wrap, inner]) => ({ text: wrap(inner.text), denied: inner.denied, changes: inner.changes })),
  join: fc.tuple(tie("node"), fc.constantFrom(...OPERATORS), tie("node")).map(([left, operator, right]) => ({
    text: left.text + operator + right.text,
    denied: left.denied || right.denied,
    changes: left.changes || right.changes,
  })),
}));

describe("a property of the gate", () => {
  it("denies any mix of commands joined and nested in every way that contains a denied one, asks about one that changes bash's state, and allows the rest, unless it says it cannot read the command", {
    timeout: 120_000,
  }, async () => {
    const unread = /cannot be checked before it runs|may run what/;
    await fc.assert(
      fc.asyncProperty(built.node, async ({ text, denied, changes }) => {
        for (const [rules, mode] of [
          [NARROW, "default"],
          [BYPASS, "bypassPermissions"],
        ] as const) {
          const { outcome, reason } = await decided(text, rules, mode);
          if (outcome === Q) expect(reason).toMatch(unread);
          // A change to bash's state leaves what the rest runs unknown: never allowed by a rule.
          else expect(outcome).toBe(denied ? D : changes ? Q : A);
        }
      }),
      { numRuns: 300 },
    );
  });
});
