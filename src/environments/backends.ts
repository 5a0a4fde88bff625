/**
 * THE place where terminal backends are known by name. `EnvironmentManager`
 * looks a backend up here the first time a task needs it, so a backend's
 * module (and the SDK it pulls in) is only imported when it is used: starting
 * the runtime costs nothing for backends nobody configured.
 *
 * Adding a backend: write `src/environments/<module>.ts` exporting an
 * `EnvironmentFactory` named `<camelCaseName>Factory` (e.g. `sshFactory`,
 * `dockerFactory`, `vercelSandboxFactory`) and add a literal loader for it
 * below (a literal specifier, so the compiler checks the export). Embedders and tests can also hand a factory to
 * `EnvironmentManager.registerBackend` at run time.
 */

import type { EnvironmentFactory } from "./types.js";

/** Imports a backend's module and returns its factory. */
export type BackendLoader = () => Promise<EnvironmentFactory>;

/** Every backend name the runtime knows, and how to load it. Keys are the `terminal.backend` values. */
export const BACKENDS: Readonly<Record<string, BackendLoader>> = Object.freeze({
  local: async () => (await import("./local.js")).localFactory,
  docker: async () => (await import("./docker.js")).dockerFactory,
  ssh: async () => (await import("./ssh.js")).sshFactory,
  singularity: async () => (await import("./singularity.js")).singularityFactory,
  modal: async () => (await import("./modal.js")).modalFactory,
  daytona: async () => (await import("./daytona.js")).daytonaFactory,
  vercel_sandbox: async () => (await import("./vercel-sandbox.js")).vercelSandboxFactory,
});

/** The backend names of `BACKENDS`, for messages and docs. */
export const BACKEND_NAMES: readonly string[] = Object.freeze(Object.keys(BACKENDS));
