import { A, Q, type RowFamily } from "./row.ts";

/**
 * Variables that hand a program code, or a configuration file that can hold commands: git's configuration files
 * (`core.fsmonitor`, `core.pager`, aliases run commands), make's flags (`--eval` defines a rule and its recipe), the shell a program starts for
 * a command (`flock -c`, `script`, `sudo -s` start `$SHELL`), npm's script shell, editors' and pagers' start-up
 * commands, the Java and .NET agents, glibc's converter modules. Set for one command or exported, each is a change
 * to what runs: asked, never allowed by a rule for the program.
 */
export const CONFIG_VARIABLES: RowFamily = {
  name: "Variables that hand a program code or a configuration with commands",
  rows: [
    ["GIT_CONFIG_GLOBAL=g git status", Q, Q],
    ["GIT_CONFIG_SYSTEM=g git diff", Q, Q],
    ["GIT_CONFIG=g git diff", Q, Q],
    ["XDG_CONFIG_HOME=. git status", Q, Q],
    ["export XDG_CONFIG_HOME=$PWD; git diff", Q, Q],
    ["GIT_DIR=o/.git git status", Q, Q],
    ["GIT_TEMPLATE_DIR=t git init", Q, Q],
    ["SHELL=rm flock l -c x", Q, Q],
    ["export SHELL=rm; flock l -c x", Q, Q],
    ["MAKEFLAGS='--eval=all:;rm\\ x' make", Q, Q],
    ["GNUMAKEFLAGS='--eval=all:;rm\\ x' make", Q, Q],
    ["MFLAGS=-f/dev/null make", Q, Q],
    ["npm_config_script_shell=rm npm test", Q, Q],
    ["NPM_CONFIG_SCRIPT_SHELL=rm npm test", Q, Q],
    ["npm_config_node_options='--require ./r.js' npm test", Q, Q],
    ["npm_config_userconfig=r npm test", Q, Q],
    ["VIMINIT='!rm x' vim -es", Q, Q],
    ["EXINIT='!rm x' ex -s", Q, Q],
    ["MANOPT='-P rm' man ls", Q, Q],
    ["LESS='+!rm x' less f", Q, Q],
    ["LESSKEYIN=k less f", Q, Q],
    ["SYSTEMD_PAGER='rm x' systemctl status", Q, Q],
    ["SUDO_EDITOR=rm sudoedit f", Q, Q],
    ["FCEDIT=rm fc", Q, Q],
    ["GCONV_PATH=. iconv -l", Q, Q],
    ["JAVA_TOOL_OPTIONS=-javaagent:a.jar java -version", Q, Q],
    ["_JAVA_OPTIONS=-javaagent:a.jar java -version", Q, Q],
    ["JDK_JAVA_OPTIONS=-javaagent:a.jar java -version", Q, Q],
    ["DOTNET_STARTUP_HOOKS=h.dll dotnet run", Q, Q],
    ["PYTHONBREAKPOINT=os.system python3 -c 'breakpoint(\"rm x\")'", Q, Q],
    // Variables of the same programs that hand them nothing to run stay as they were.
    ["GIT_AUTHOR_NAME=x git diff", A, A],
    ["npm_config_loglevel=silent npm test", A, A],
    ["LESSCHARSET=utf-8 echo x", A, A],
  ],
  reaches: [
    "SHELL=rm flock l -c x",
    "export SHELL=rm; flock l -c x",
    "MAKEFLAGS='--eval=all:;rm\\ x' make",
    "GNUMAKEFLAGS='--eval=all:;rm\\ x' make",
    "PYTHONBREAKPOINT=os.system python3 -c 'breakpoint(\"rm x\")'",
  ],
  changing: ["export XDG_CONFIG_HOME=.", "export SHELL=/bin/sh", "export MAKEFLAGS=-s", "export GIT_DIR=o"],
};
