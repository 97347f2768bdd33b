/** What decides the environment of hook commands (a subset of the plugin's options). */
export interface CommandEnvironmentOptions {
  /** The project root, exported as `CLAUDE_PROJECT_DIR` and `UNFORGET_PROJECT_DIR`. */
  projectDir: string;
  /** `true`: all of `process.env`; `false`: none of it; a list: only those names. Default `true`. */
  inheritEnv?: boolean | readonly string[];
  /** Added on top of the inherited variables. */
  env?: Record<string, string>;
}

/** The part of `process.env` the commands inherit, per the `inheritEnv` option. */
function inheritedEnvironment(inherit: boolean | readonly string[]): Record<string, string | undefined> {
  if (inherit === true) return { ...process.env };
  const environment: Record<string, string | undefined> = {};
  if (inherit === false) return environment;
  for (const name of inherit) {
    const value = process.env[name];
    if (value !== undefined) environment[name] = value;
  }
  return environment;
}

/** The environment every hook command runs with; read once, when the plugin is created. */
export function commandEnvironment(options: CommandEnvironmentOptions): Record<string, string | undefined> {
  return {
    ...inheritedEnvironment(options.inheritEnv ?? true),
    ...options.env,
    CLAUDE_PROJECT_DIR: options.projectDir,
    UNFORGET_PROJECT_DIR: options.projectDir,
  };
}
