/**
 * Which backends keep the host out of reach. On an isolated sandbox only hardline rules
 * and user deny rules apply (unless `approvals.isolated_backends_need_approval`).
 */

import type { BackendInfo } from "./types.js";

/** Sandboxes that keep the host out of reach (see `isIsolatedBackend`). */
export const ISOLATED_BACKENDS: ReadonlySet<string> = new Set(["docker", "singularity", "modal", "daytona", "vercel_sandbox"]);

/**
 * Whether commands on this backend cannot touch the host: `docker` only when the caller
 * says it mounts nothing of the host (`hostMounts: false`), the other sandboxes unless the
 * caller says they do (`hostMounts: true`). `local`, `ssh` and unknown backends never.
 */
export function isIsolatedBackend(backend: BackendInfo): boolean {
  if (!ISOLATED_BACKENDS.has(backend.name)) return false;
  if (backend.name === "docker") return backend.hostMounts === false;
  return backend.hostMounts !== true;
}
