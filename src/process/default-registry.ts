/**
 * The process-wide `ProcessRegistry` that the built-in `terminal` (with
 * `background: true`) and `process` tools share. It finds closed task
 * environments again through the process-wide environment manager.
 */

import { ProcessRegistry } from "./process-registry.js";

let current: ProcessRegistry | undefined;

export function getProcessRegistry(): ProcessRegistry {
  current ??= new ProcessRegistry({
    environments: async () => (await import("../environments/manager.js")).getEnvironmentManager(),
  });
  return current;
}

/** Replaces the process-wide registry (tests, embedders with their own options). The old one stops polling. */
export function setProcessRegistry(registry: ProcessRegistry): void {
  if (current !== registry) void current?.dispose();
  current = registry;
}
