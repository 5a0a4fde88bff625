/** The typed errors of the plugin system. Each says which plugin (by key) and why. */

import { formatLocation } from "../config/config-error.js";

/** A `plugin.yaml` (or an npm package's `package.json`) that cannot be used; `file`, `line`, `column` locate it. */
export class PluginManifestError extends Error {
  override readonly name = "PluginManifestError";
  readonly reason: string;
  constructor(
    reason: string,
    readonly file: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(`${formatLocation(file, line, column)}: ${reason}`);
    this.reason = reason;
  }
}

/** A plugin tried to replace a built-in tool without `plugins.entries.<key>.allow_tool_override: true`. */
export class PluginToolOverrideError extends Error {
  override readonly name = "PluginToolOverrideError";
  constructor(
    readonly pluginKey: string,
    readonly toolName: string,
    message: string,
  ) {
    super(message);
  }
}

/** A registration the registry refused (shadowing another toolset's tool, say), or a malformed one. */
export class PluginRegistrationError extends Error {
  override readonly name = "PluginRegistrationError";
  constructor(
    readonly pluginKey: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A plugin asked to deregister a tool it did not register. */
export class PluginOwnershipError extends Error {
  override readonly name = "PluginOwnershipError";
  constructor(
    readonly pluginKey: string,
    readonly toolName: string,
  ) {
    super(`plugin "${pluginKey}" may only deregister its own tools; "${toolName}" was not registered by it`);
  }
}

/** What loading one plugin failed with: its import, its `register()`, a `process.exit`, the time limit. */
export class PluginLoadError extends Error {
  override readonly name = "PluginLoadError";
  constructor(
    readonly pluginKey: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
