/**
 * The `vercel_sandbox` terminal backend: one Vercel Sandbox (a Firecracker
 * microVM) per task, through the official SDK `@vercel/sandbox`.
 *
 * This module is the glue the registry loads (`vercelSandboxFactory`): options
 * read for every new task from config.yaml's `terminal.vercel_sandbox` section
 * and the vendor's environment variables (`vercel-sandbox-options.ts`), the
 * availability check (credentials, SDK installed), and `SandboxEnvironment`
 * over the transport (`vercel-sandbox-transport.ts`), which does the shell
 * state, timeouts and process-tree kills with the same scripts as every
 * sandbox backend. Setup and keys: docs/backends/vercel-sandbox.md.
 */

import { getConfig } from "../config/load-config.js";
import { createSandboxFactory, type SandboxEnvironmentOptions } from "./sandbox-environment.js";
import type { EnvironmentFactory } from "./types.js";
import { mergeVercelSandboxOptions, resolveVercelCredentials, type VercelSandboxOptions } from "./vercel-sandbox-options.js";
import { VERCEL_SANDBOX_SDK, VercelSandboxTransport, vercelSdkInstalled } from "./vercel-sandbox-transport.js";
import type { EnvVars } from "../util/env-vars.js";
import { sdkInstallCommand } from "./sdk-install-hints.js";

export {
  VERCEL_RUNTIMES,
  VERCEL_SANDBOX_DEFAULTS,
  mergeVercelSandboxOptions,
  resolveVercelCredentials,
  vercelSandboxOptionsFromConfig,
  vercelSandboxOptionsFromEnv,
  type VercelCredentials,
  type VercelSandboxNetwork,
  type VercelSandboxOptions,
} from "./vercel-sandbox-options.js";
export { VERCEL_SANDBOX_SDK, VercelSandboxTransport } from "./vercel-sandbox-transport.js";

export const VERCEL_SANDBOX_BACKEND = "vercel_sandbox";

/**
 * Why the backend cannot be used with these options, or undefined: the SDK is
 * not installed, or credentials are missing. `sdkInstalled` is for tests.
 */
export function vercelSandboxUnavailableReason(options: VercelSandboxOptions, sdkInstalled: () => boolean = vercelSdkInstalled): string | undefined {
  if (!sdkInstalled()) return `install ${VERCEL_SANDBOX_SDK} to use the vercel_sandbox terminal backend (${sdkInstallCommand(VERCEL_SANDBOX_SDK)})`;
  const resolved = resolveVercelCredentials(options);
  return "problem" in resolved ? resolved.problem : undefined;
}

/** What `SandboxEnvironment` gets from the backend's options. */
export function vercelSandboxEnvironmentOptions(options: VercelSandboxOptions): Omit<SandboxEnvironmentOptions, "backend"> {
  return {
    // A microVM of its own: nothing of the host is reachable from it.
    isolation: { name: VERCEL_SANDBOX_BACKEND, hostMounts: false },
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
    ...(options.pipeDrainMs !== undefined ? { pipeDrainMs: options.pipeDrainMs } : {}),
  };
}

/** A factory with fixed options, or options read at each call (so that changes apply to new tasks). */
export function createVercelSandboxFactory(options: VercelSandboxOptions | (() => VercelSandboxOptions)): EnvironmentFactory {
  return createSandboxFactory<VercelSandboxOptions>({
    backend: VERCEL_SANDBOX_BACKEND,
    options: typeof options === "function" ? options : () => options,
    unavailableReason: (o) => vercelSandboxUnavailableReason(o),
    open: (taskId, o) => VercelSandboxTransport.open(taskId, o),
    environmentOptions: vercelSandboxEnvironmentOptions,
  });
}

/**
 * The options the registry's factory uses, read for every new task: the
 * `terminal.vercel_sandbox` section of config.yaml over `VERCEL_TOKEN`,
 * `VERCEL_TEAM_ID`, `VERCEL_PROJECT_ID` and `VERCEL_OIDC_TOKEN`. A malformed
 * section throws (the factory reports it as the reason it is unavailable).
 */
export function defaultVercelSandboxOptions(env: EnvVars = process.env): VercelSandboxOptions {
  let section: Record<string, unknown> | undefined;
  try {
    const document = getConfig().document as { terminal?: { vercel_sandbox?: unknown } } | undefined;
    const value = document?.terminal?.vercel_sandbox;
    // Anything but a mapping is rejected by the parser, naming the section.
    if (value !== null && value !== undefined) section = value as Record<string, unknown>;
  } catch {
    // An unreadable config.yaml is reported where it is loaded for the rest of the runtime.
  }
  return mergeVercelSandboxOptions(section, env);
}

/** The vercel_sandbox backend as the registry loads it (options from `defaultVercelSandboxOptions`). */
export const vercelSandboxFactory: EnvironmentFactory = createVercelSandboxFactory(() => defaultVercelSandboxOptions());
