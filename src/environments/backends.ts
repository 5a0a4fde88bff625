/**
 * THE place where terminal backends are known by name. `EnvironmentManager`
 * looks a backend up here the first time a task needs it, so a backend's
 * module (and the SDK it pulls in) is only imported when it is used: starting
 * the runtime costs nothing for backends nobody configured.
 *
 * Adding a backend: write `src/environments/<module>.ts` exporting an
 * `EnvironmentFactory` named `<camelCaseName>Factory` (e.g. `sshFactory`,
 * `dockerFactory`, `vercelSandboxFactory`). The entries below already point at
 * those modules by convention, so a backend becomes usable as soon as its
 * module exists; replace its `byConvention(...)` line with a literal loader
 * (like `local`'s) once it does, so the compiler checks the export.
 * Embedders and tests can also hand a factory to
 * `EnvironmentManager.registerBackend` at run time.
 */

import type { EnvironmentFactory } from "./types.js";

/** Imports a backend's module and returns its factory. */
export type BackendLoader = () => Promise<EnvironmentFactory>;

/** Raised when a backend's module does not exist in this build (not written yet, or not shipped). */
export class BackendNotInstalledError extends Error {
  constructor(
    readonly backend: string,
    options?: ErrorOptions,
  ) {
    super(`The "${backend}" terminal backend is not part of this build.`, options);
    this.name = "BackendNotInstalledError";
  }
}

function isFactory(value: unknown): value is EnvironmentFactory {
  const f = value as EnvironmentFactory | undefined;
  return typeof f === "object" && f !== null && typeof f.backend === "string" && typeof f.create === "function" && typeof f.unavailableReason === "function";
}

/**
 * A loader for `./<module>.js` (next to this file) exporting `exportName` (or
 * a default export). The specifier is not a literal, so the compiler does not
 * require the module to exist yet. A missing module rejects with
 * `BackendNotInstalledError`.
 */
export function byConvention(backend: string, module: string, exportName: string): BackendLoader {
  return async () => {
    const specifier = `./${module}.js`;
    let loaded: Record<string, unknown>;
    try {
      loaded = (await import(/* @vite-ignore */ specifier)) as Record<string, unknown>;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const missing =
        (e?.code === "ERR_MODULE_NOT_FOUND" && String(e.message).includes(`${module}.js`)) ||
        /Failed to load url|Cannot find module|Does the file exist/i.test(String(e?.message));
      if (missing) throw new BackendNotInstalledError(backend, { cause: err });
      throw new Error(`The "${backend}" terminal backend could not be loaded: ${e?.message ?? String(err)}`, { cause: err });
    }
    const factory = loaded[exportName] ?? loaded.default;
    if (!isFactory(factory)) {
      throw new Error(`src/environments/${module}.ts does not export an EnvironmentFactory named ${exportName}.`);
    }
    return factory;
  };
}

/** Every backend name the runtime knows, and how to load it. Keys are the `terminal.backend` values. */
export const BACKENDS: Readonly<Record<string, BackendLoader>> = Object.freeze({
  local: async () => (await import("./local.js")).localFactory,
  docker: async () => (await import("./docker.js")).dockerFactory,
  ssh: async () => (await import("./ssh.js")).sshFactory,
  singularity: async () => (await import("./singularity.js")).singularityFactory,
  modal: async () => (await import("./modal.js")).modalFactory,
  daytona: byConvention("daytona", "daytona", "daytonaFactory"),
  vercel_sandbox: async () => (await import("./vercel-sandbox.js")).vercelSandboxFactory,
});

/** The backend names of `BACKENDS`, for messages and docs. */
export const BACKEND_NAMES: readonly string[] = Object.freeze(Object.keys(BACKENDS));
