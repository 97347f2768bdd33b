import { UnforgetError } from "@unforget/core";

/** A settings file cannot be used: the message names the file and the key, and says what to write instead. */
export class SettingsError extends UnforgetError {
  /** The settings file (absolute path), or `--settings` when the JSON was given on the command line. */
  readonly file: string;
  /** The key in dotted form (`compaction.threshold`, `permissions.allow[2]`), or "" for the whole file. */
  readonly key: string;

  constructor(message: string, details: { file: string; key: string; cause?: unknown }) {
    super("settings_invalid", message, { cause: details.cause });
    this.file = details.file;
    this.key = details.key;
  }
}

/** No model provider is configured; the message lists each provider's variables and names `unforget replay`. */
export class NoProviderError extends UnforgetError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super("no_provider", message, options);
  }
}

/** A command-line value the agent cannot use (an empty prompt, `--resume` of an unknown session, …). */
export class AgentUsageError extends UnforgetError {
  readonly option: string;

  constructor(option: string, message: string) {
    super("agent_usage", message);
    this.option = option;
  }
}

/**
 * A TypeScript plugin was configured and tsx, the optional peer that compiles it, is not installed: the message
 * says to install tsx beside the agent or to ship the plugin as .js or .mjs.
 */
export class PluginLoaderMissingError extends UnforgetError {
  /** The plugin file that needed the loader. */
  readonly path: string;

  constructor(path: string, options: { cause?: unknown } = {}) {
    super(
      "plugin_loader_missing",
      "a TypeScript plugin needs tsx to load, and tsx is not installed: run `npm install tsx` where @unforget/agent is installed, or ship the plugin as .js or .mjs",
      options,
    );
    this.path = path;
  }
}
