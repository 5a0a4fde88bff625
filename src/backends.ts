/**
 * mibyan-tools/backends: the terminal backends other than `local`, configured from code.
 *
 * A subpath of its own (package.json `exports`), not the main entry: the runtime imports a
 * backend's module only when a task first uses that backend (`environments/backends.ts`),
 * and importing the main entry must not pay for six backends nobody configured. Each
 * `create*Factory` returns an `EnvironmentFactory` to hand to
 * `new EnvironmentManager({ factories: [...] })` or `manager.registerBackend(...)`; each
 * `*OptionsFromConfig` reads the matching `terminal.<backend>` section of config.yaml as data.
 * The cloud backends' SDKs are optional peer dependencies, still imported only when a
 * sandbox is opened. See docs/packaging.md and docs/backends/.
 */

export {
  createDockerFactory,
  defaultDockerOptions,
  dockerOptionsFromConfig,
  dockerOptionsFromEnv,
  dockerUnavailableReason,
  removeDockerContainers,
  DOCKER_DEFAULTS,
  DockerEnvironment,
  DockerEnvironmentFactory,
  type DockerEnvironmentOptions,
  type DockerMount,
} from "./environments/docker.js";
export type { DockerCliOptions } from "./environments/docker-cli.js";

export {
  createSshFactory,
  defaultSshOptions,
  sshOptionsFromConfig,
  sshOptionsFromEnv,
  sshUnavailableReason,
  SshEnvironment,
  type HostKeyChecking,
  type SshOptions,
} from "./environments/ssh.js";

export {
  checkSingularityOptions,
  createSingularityFactory,
  defaultSingularityOptions,
  singularityOptionsFromConfig,
  singularityUnavailableReason,
  type SingularityBind,
  type SingularityOptions,
} from "./environments/singularity.js";

export {
  createModalFactory,
  defaultModalOptions,
  modalOptionsFromConfig,
  modalUnavailableReason,
  MODAL_DEFAULTS,
  type ModalOptions,
} from "./environments/modal.js";

export {
  createDaytonaFactory,
  daytonaOptionsFromConfig,
  daytonaOptionsFromEnv,
  daytonaUnavailableReason,
  defaultDaytonaOptions,
  DAYTONA_DEFAULTS,
  type DaytonaOptions,
} from "./environments/daytona.js";

export {
  createVercelSandboxFactory,
  defaultVercelSandboxOptions,
  vercelSandboxOptionsFromConfig,
  vercelSandboxOptionsFromEnv,
  vercelSandboxUnavailableReason,
  VERCEL_SANDBOX_DEFAULTS,
  type VercelSandboxNetwork,
  type VercelSandboxOptions,
} from "./environments/vercel-sandbox.js";
