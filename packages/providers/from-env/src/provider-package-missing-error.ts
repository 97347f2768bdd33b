import { ConfigurationError } from "@unforget/core";

/** The chosen provider's package is not installed: provider packages are optional peers, installed by choice. */
export class ProviderPackageMissingError extends ConfigurationError {
  /** The package to install, e.g. "@unforget/provider-bedrock". */
  readonly packageName: string;

  constructor(message: string, details: { packageName: string; setting?: string; cause?: unknown }) {
    super(message, {
      setting: details.setting ?? "UNFORGET_PROVIDER",
      ...(details.cause === undefined ? {} : { cause: details.cause }),
    });
    this.packageName = details.packageName;
  }
}
