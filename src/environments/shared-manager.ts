/**
 * Where the process-wide environment manager is kept (`getEnvironmentManager`,
 * `setEnvironmentManager` and `peekEnvironmentManager` in ./manager.ts use it).
 * A module of its own so that the terminal tool's availability check can ask
 * whether the manager exists, and what it knows, without loading the manager
 * (and, through it, the backends' machinery) when tools are only listed.
 */

import type { EnvironmentManager } from "./manager.js";

let shared: EnvironmentManager | undefined;

/** The process-wide manager, if one was created or set. */
export function sharedEnvironmentManager(): EnvironmentManager | undefined {
  return shared;
}

export function setSharedEnvironmentManager(manager: EnvironmentManager): void {
  shared = manager;
}
