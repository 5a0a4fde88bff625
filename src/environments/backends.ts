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
import { closeMatches } from "../toolsets/suggest.js";

/** Imports a backend's module and returns its factory. */
export type BackendLoader = () => Promise<EnvironmentFactory>;

const LOADERS = {
  local: async () => (await import("./local.js")).localFactory,
  docker: async () => (await import("./docker.js")).dockerFactory,
  ssh: async () => (await import("./ssh.js")).sshFactory,
  singularity: async () => (await import("./singularity.js")).singularityFactory,
  modal: async () => (await import("./modal.js")).modalFactory,
  daytona: async () => (await import("./daytona.js")).daytonaFactory,
  vercel_sandbox: async () => (await import("./vercel-sandbox.js")).vercelSandboxFactory,
} as const satisfies Record<string, BackendLoader>;

/** A built-in terminal backend's name (`terminal.backend` in config.yaml): `"local" | "docker" | "ssh" | ...`. */
export type BackendName = keyof typeof LOADERS;

/** Every backend name the runtime knows, and how to load it. Keys are the `terminal.backend` values. */
export const BACKENDS: Readonly<Record<BackendName, BackendLoader>> = Object.freeze(LOADERS);

/** The backend names of `BACKENDS`, for messages and docs. */
export const BACKEND_NAMES: readonly BackendName[] = Object.freeze(Object.keys(BACKENDS) as BackendName[]);

/** Whether `name` is a built-in backend's name (own keys only: `toString` is not a backend). */
export function isBackendName(name: unknown): name is BackendName {
  return typeof name === "string" && Object.hasOwn(BACKENDS, name);
}

/**
 * A backend name nothing is known under: not built in, and no factory was
 * registered for it. Thrown at once by `setBackend`, and by `get` for a
 * default backend (config `terminal.backend`) that names none.
 */
export class UnknownBackendError extends Error {
  override readonly name = "UnknownBackendError";
  /** Known names that look like it, best first. */
  readonly suggestions: readonly string[];

  constructor(
    readonly backend: string,
    /** The names that would have been accepted. */
    readonly known: readonly string[],
  ) {
    const suggestions = closeMatches(backend, known);
    super(
      `Unknown terminal backend ${JSON.stringify(backend)}.` +
        (suggestions.length > 0 ? ` Did you mean: ${suggestions.join(", ")}?` : "") +
        ` Known backends: ${known.join(", ")}.`,
    );
    this.suggestions = Object.freeze(suggestions);
  }
}
