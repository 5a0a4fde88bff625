/**
 * The two ways the local sandbox refuses: its settings are wrong, or it is
 * configured but cannot run here. Both are thrown before any command starts,
 * so a command never runs unsandboxed because of them (fail closed).
 */

/** `terminal.local.sandbox` is malformed: names the key and what was expected. */
export class SandboxConfigError extends Error {
  override readonly name = "SandboxConfigError";
}

/** The sandbox is configured but cannot be used here (no bubblewrap, namespaces refused, not Linux). */
export class SandboxUnavailableError extends Error {
  override readonly name = "SandboxUnavailableError";
  constructor(
    /** Why, in one sentence, with what to do about it. */
    readonly reason: string,
  ) {
    super(`The local sandbox is configured but cannot be used, so the command was not run: ${reason}`);
  }
}
