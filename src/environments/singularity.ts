/**
 * The singularity backend: one Apptainer (or legacy SingularityCE) instance per
 * task, driven through the CLI. The shell state, exit codes, timeouts and
 * process-tree kills are `SandboxEnvironment`'s (the docker backend's scripts,
 * run inside the instance); this module only wires the pieces together:
 *
 * - `singularity-options.ts`: the `terminal.singularity` section, checked, and
 *   whether the configuration reaches the host's files;
 * - `singularity-command.ts`: the CLI's command lines, its environment and the
 *   availability check;
 * - `singularity-transport.ts`: `instance start`, `exec instance://` as local
 *   child processes, `instance stop`.
 *
 * docs/backends/singularity.md has the setup, the options and the flags.
 */

import { backendConfigSection } from "./backend-config.js";
import { createSandboxFactory, type SandboxEnvironmentOptions } from "./sandbox-environment.js";
import { singularityUnavailableReason } from "./singularity-command.js";
import { SINGULARITY_DEFAULTS, singularityOptionsFromConfig, singularityReachesHost, type SingularityOptions } from "./singularity-options.js";
import { openSingularityInstance } from "./singularity-transport.js";
import type { EnvironmentFactory } from "./types.js";

export {
  cliEnvironment,
  commandArgs,
  instanceExecArgs,
  instanceStartArgs,
  instanceStopArgs,
  resetSingularityAvailability,
  resolveSingularityBinary,
  singularityUnavailableReason,
} from "./singularity-command.js";
export { checkSingularityOptions, singularityOptionsFromConfig, singularityReachesHost, type SingularityBind, type SingularityOptions } from "./singularity-options.js";
export { openSingularityInstance, SingularityTransport } from "./singularity-transport.js";

/** What `SandboxEnvironment` is told: the approval gate's view, the starting directory, grace times. */
export function singularityEnvironmentOptions(options: SingularityOptions): Omit<SandboxEnvironmentOptions, "backend"> {
  const environment: Omit<SandboxEnvironmentOptions, "backend"> = {
    isolation: { name: "singularity", hostMounts: singularityReachesHost(options) },
  };
  if (options.cwd !== undefined) environment.cwd = options.cwd;
  if (options.killGraceMs !== undefined) environment.killGraceMs = options.killGraceMs;
  if (options.pipeDrainMs !== undefined) environment.pipeDrainMs = options.pipeDrainMs;
  if (options.startTimeoutMs !== undefined) environment.startTimeoutMs = options.startTimeoutMs;
  // Without `--containall` the instance's /tmp is the host's: the state directory would stay behind.
  if (!(options.contain ?? SINGULARITY_DEFAULTS.contain)) environment.removeStateOnClose = true;
  return environment;
}

/** One instance per task, with fixed options or options read at each call (so config changes apply to new tasks). */
export function createSingularityFactory(options: SingularityOptions | (() => SingularityOptions)): EnvironmentFactory {
  const resolve = typeof options === "function" ? options : () => options;
  return createSandboxFactory<SingularityOptions>({
    backend: "singularity",
    options: resolve,
    unavailableReason: (current) => singularityUnavailableReason(current),
    open: (taskId, current) => openSingularityInstance(taskId, current),
    environmentOptions: singularityEnvironmentOptions,
  });
}

/** The options the registry's factory uses, read for every new task: the `terminal.singularity` section of config.yaml. */
export function defaultSingularityOptions(): SingularityOptions {
  return singularityOptionsFromConfig(backendConfigSection("singularity"));
}

/** The singularity backend as the registry loads it (options from `defaultSingularityOptions`). */
export const singularityFactory: EnvironmentFactory = createSingularityFactory(() => defaultSingularityOptions());
