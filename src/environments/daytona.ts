/**
 * The `daytona` terminal backend: one Daytona sandbox per task, through the
 * official SDK `@daytonaio/sdk`.
 *
 * This module is the glue the registry loads (`daytonaFactory`): options read
 * for every new task from config.yaml's `terminal.daytona` section and the
 * vendor's environment variables (`daytona-options.ts`), the availability
 * check (credentials, SDK installed), and `SandboxEnvironment` over the
 * transport (`daytona-transport.ts`, with the output framing of
 * `daytona-output.ts`), which does the shell state, timeouts and process-tree
 * kills with the same scripts as every sandbox backend. Setup and keys:
 * docs/backends/daytona.md.
 */

import { backendConfigSection } from "./backend-config.js";
import { mergeDaytonaOptions, resolveDaytonaCredentials, type DaytonaOptions } from "./daytona-options.js";
import { DAYTONA_SDK, DaytonaTransport, daytonaSdkInstalled } from "./daytona-transport.js";
import { createSandboxFactory, type SandboxEnvironmentOptions } from "./sandbox-environment.js";
import type { EnvironmentFactory } from "./types.js";
import type { EnvVars } from "../util/env-vars.js";
import { sdkInstallCommand } from "./sdk-install-hints.js";

export {
  DAYTONA_BACKEND_LABEL,
  DAYTONA_DEFAULTS,
  DAYTONA_TASK_LABEL,
  daytonaApiUrlProblem,
  daytonaOptionsFromConfig,
  daytonaOptionsFromEnv,
  mergeDaytonaOptions,
  resolveDaytonaCredentials,
  type DaytonaCredentials,
  type DaytonaOptions,
} from "./daytona-options.js";
export { DAYTONA_SDK, DaytonaTransport, daytonaCreateParams, daytonaKeepAliveMs } from "./daytona-transport.js";

export const DAYTONA_BACKEND = "daytona";

/**
 * Why the backend cannot be used with these options, or undefined: the SDK is
 * not installed, or credentials are missing. `sdkInstalled` is for tests.
 */
export function daytonaUnavailableReason(options: DaytonaOptions, sdkInstalled: () => boolean = daytonaSdkInstalled): string | undefined {
  if (!sdkInstalled()) return `install ${DAYTONA_SDK} to use the daytona terminal backend (${sdkInstallCommand(DAYTONA_SDK)})`;
  const resolved = resolveDaytonaCredentials(options);
  return "problem" in resolved ? resolved.problem : undefined;
}

/** What `SandboxEnvironment` gets from the backend's options. */
export function daytonaEnvironmentOptions(options: DaytonaOptions): Omit<SandboxEnvironmentOptions, "backend"> {
  return {
    // A sandbox of its own at Daytona: nothing of this machine is reachable from it.
    isolation: { name: DAYTONA_BACKEND, hostMounts: false },
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
    ...(options.pipeDrainMs !== undefined ? { pipeDrainMs: options.pipeDrainMs } : {}),
  };
}

/** A factory with fixed options, or options read at each call (so that changes apply to new tasks). */
export function createDaytonaFactory(options: DaytonaOptions | (() => DaytonaOptions)): EnvironmentFactory {
  return createSandboxFactory<DaytonaOptions>({
    backend: DAYTONA_BACKEND,
    options: typeof options === "function" ? options : () => options,
    unavailableReason: (o) => daytonaUnavailableReason(o),
    open: (taskId, o) => DaytonaTransport.open(taskId, o),
    environmentOptions: daytonaEnvironmentOptions,
  });
}

/**
 * The options the registry's factory uses, read for every new task: the
 * `terminal.daytona` section of config.yaml over `DAYTONA_API_KEY`,
 * `DAYTONA_JWT_TOKEN`, `DAYTONA_ORGANIZATION_ID`, `DAYTONA_API_URL` and
 * `DAYTONA_TARGET`. A malformed section throws (the factory reports it as the
 * reason it is unavailable).
 */
export function defaultDaytonaOptions(env: EnvVars = process.env): DaytonaOptions {
  return mergeDaytonaOptions(backendConfigSection(DAYTONA_BACKEND), env);
}

/** The daytona backend as the registry loads it (options from `defaultDaytonaOptions`). */
export const daytonaFactory: EnvironmentFactory = createDaytonaFactory(() => defaultDaytonaOptions());
