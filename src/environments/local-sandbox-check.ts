/**
 * Whether the local backend's configured sandbox can run here, without the
 * local environment itself: the terminal tool's availability check (which runs
 * whenever tools are listed, synchronously) needs this answer, and importing
 * src/environments/local.ts for it would load the whole backend (process
 * groups, shell state) into `mibyan tools`.
 */

import { sandboxStatus } from "../sandbox/command-sandbox.js";
import { SandboxUnavailableError } from "../sandbox/errors.js";
import { configuredSandboxPolicy, type SandboxPolicy } from "../sandbox/policy.js";

export interface LocalSandboxOptions {
  /** The OS sandbox. Default: config `terminal.local.sandbox`. */
  sandbox?: SandboxPolicy;
  /** The bubblewrap program (tests). Default: `bwrap` on PATH. */
  sandboxProgram?: string;
}

/**
 * Why the configured sandbox cannot be used here, or undefined (off, or it
 * works). Throws `SandboxConfigError` on malformed settings (the manager
 * reports that as an invalid configuration).
 */
export function localSandboxProblem(options: LocalSandboxOptions = {}): string | undefined {
  const policy = options.sandbox ?? configuredSandboxPolicy();
  if (policy.mode === "off") return undefined;
  const status = sandboxStatus(policy, options.sandboxProgram);
  return status.active ? undefined : new SandboxUnavailableError(status.reason ?? "bubblewrap cannot be used").message;
}
