/**
 * The docker backend: one long-lived, hardened container per task, driven
 * through the real `docker` CLI (so `DOCKER_HOST` is honoured, and podman's
 * Docker-compatible API service works as well as a Docker daemon).
 *
 * - `create` starts the container (`docker run -d`, a keep-alive shell as PID 1
 *   that also reaps orphans), labelled `mibyan.task=<task>`, with all
 *   capabilities dropped, `no-new-privileges`, pids/memory/cpu limits, no
 *   network and no host mounts unless configured, then makes a private state
 *   directory inside it (`mktemp -d`).
 * - `exec` is one `docker exec <id> bash -c ...` supervised by `spawnGroup`
 *   (no `-t`, stdin closed): the task's cwd and exported variables carry over
 *   through `wrapCommand`'s state file, which lives in the container. A timeout
 *   or an abort kills the command's process tree inside the container (a second
 *   `docker exec` signals its process group, session and descendants), not
 *   just the local client, and the result waits until that is done.
 * - `close` removes the container (`docker rm -f`); idempotent.
 *
 * The scripts run inside the container are in `sandbox-scripts.ts`; the CLI
 * plumbing and the availability check in `docker-cli.ts`.
 */

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";

import type { BackendInfo } from "../approval/flow/types.js";
import { CappedOutput } from "../terminal/output-buffer.js";
import { ABORT_EXIT_CODE, DEFAULT_KILL_GRACE_MS, DEFAULT_PIPE_DRAIN_MS, spawnGroup } from "../terminal/process-group.js";
import {
  dockerBinary,
  dockerEnv,
  dockerFailure,
  dockerUnavailableReason,
  runDocker,
  type DockerCliOptions,
  type DockerCommandResult,
} from "./docker-cli.js";
import { buildInitScript, buildKillScript, buildRunScript, parseTrailer, trailerTag, TrailerFilter } from "./sandbox-scripts.js";
import { statePaths, wrapCommand, wrapOptionsFor, type ShellStatePaths } from "./shell-state.js";
import { backendConfigSection, checkedSection } from "./backend-config.js";
import type { Environment, EnvironmentFactory, ExecOptions, ExecResult } from "./types.js";
import type { EnvVars } from "../util/env-vars.js";

export { dockerUnavailableReason, resetDockerAvailability } from "./docker-cli.js";

/** The label every container of this backend carries; its value is the task id. */
export const DOCKER_TASK_LABEL = "mibyan.task";
/** A second label, so that all of this backend's containers can be found at once. */
export const DOCKER_BACKEND_LABEL = "mibyan.backend";

export const DOCKER_DEFAULTS = {
  image: "debian:stable-slim",
  network: "none",
  memory: "1g",
  cpus: 2,
  pidsLimit: 512,
} as const;

/** A host path made visible in the container (`--mount type=bind`). */
export interface DockerMount {
  /** Absolute path on the host. */
  source: string;
  /** Absolute path in the container. */
  target: string;
  /** Mount read-only. Default false. */
  readOnly?: boolean;
}

export interface DockerEnvironmentOptions extends DockerCliOptions {
  /** Image to run. Default `debian:stable-slim`. It must contain `bash`. */
  image?: string;
  /** `--network`: `none` (default), `bridge`, `host`, or a network name. */
  network?: string;
  /** `--memory` (`1g`, `512m`); `null` for no limit. Default `1g`. */
  memory?: string | null;
  /** `--cpus`; `null` for no limit. Default 2. */
  cpus?: number | string | null;
  /** `--pids-limit`; `null` for no limit. Default 512. */
  pidsLimit?: number | null;
  /** Host directories to bind-mount. None by default; any makes `isolation.hostMounts` true. */
  mounts?: DockerMount[];
  /** Starting working directory in the container (created if missing). Default: the user's home, else `/`. */
  cwd?: string;
  /** `--user` (`1000:1000`, `nobody`). Default: the image's user. */
  user?: string;
  /** Variables set in the container (`--env`). */
  env?: Record<string, string>;
  /**
   * More `docker run` arguments, placed before the image. An escape hatch: one that
   * mounts or shares something of the host (`-v`, `--mount`, `--privileged`,
   * `--pid=host`, ...) makes `isolation.hostMounts` true.
   */
  extraRunArgs?: string[];
  /** Time allowed for `docker run` (pulling an image can take long). Default 120 s. */
  startTimeoutMs?: number;
  /** SIGTERM→SIGKILL grace, for the local client and inside the container. Default 2 s. */
  killGraceMs?: number;
  /** How long to keep reading after the command exited (background jobs). Default 250 ms. */
  pipeDrainMs?: number;
  /** The environment the docker CLI runs with. Default `process.env`. */
  cliEnv?: EnvVars;
}

/** `docker run` options that give the container a part of the host, whatever their value. */
const HOST_REACHING_FLAGS = new Set(["-v", "--volume", "--mount", "--volumes-from", "--privileged", "--device", "--cap-add"]);
/** Options that reach the host only with the value `host` (`--pid host`, `--network=host`). */
const HOST_NAMESPACE_FLAGS = new Set(["--pid", "--ipc", "--uts", "--userns", "--cgroupns", "--network", "--net"]);

/** Whether a configuration gives the container any part of the host (conservatively). */
export function dockerReachesHost(options: Pick<DockerEnvironmentOptions, "mounts" | "extraRunArgs" | "network">): boolean {
  if ((options.mounts?.length ?? 0) > 0) return true;
  if (options.network === "host") return true;
  const args = options.extraRunArgs ?? [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf("=");
    const flag = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg;
    if (HOST_REACHING_FLAGS.has(flag) || /^-v./.test(arg)) return true;
    if (HOST_NAMESPACE_FLAGS.has(flag)) {
      const value = eq > 0 && arg.startsWith("--") ? arg.slice(eq + 1) : args[i + 1];
      if (value === "host" || value?.startsWith("container:")) return true;
    }
  }
  return false;
}

function cliOptions(options: DockerEnvironmentOptions): DockerCliOptions {
  const cli: DockerCliOptions = {};
  if (options.dockerPath !== undefined) cli.dockerPath = options.dockerPath;
  if (options.host !== undefined) cli.host = options.host;
  if (options.cliEnv !== undefined) cli.env = options.cliEnv;
  return cli;
}

/** A container name docker accepts: `mibyan-<task slug>-<random>`. */
function containerName(taskId: string): string {
  const slug = taskId.replace(/[^a-zA-Z0-9_.-]+/g, "-").replace(/^[-.]+/, "").slice(0, 40) || "task";
  return `mibyan-${slug}-${randomBytes(4).toString("hex")}`;
}

function assertAbsolute(kind: string, path: string): void {
  if (!path.startsWith("/")) throw new Error(`docker ${kind} must be an absolute path: ${JSON.stringify(path)}`);
  if (path.includes(",") && kind.startsWith("mount")) {
    throw new Error(`docker ${kind} must not contain a comma: ${JSON.stringify(path)}`);
  }
}

/** The `docker run` argument list (without `docker` itself) for a task's container. */
export function dockerRunArgs(taskId: string, options: DockerEnvironmentOptions, name = containerName(taskId)): string[] {
  const args = ["run", "-d", "--name", name, "--label", `${DOCKER_TASK_LABEL}=${taskId}`, "--label", `${DOCKER_BACKEND_LABEL}=docker`];
  args.push("--cap-drop", "ALL", "--security-opt", "no-new-privileges");
  const pidsLimit = options.pidsLimit === undefined ? DOCKER_DEFAULTS.pidsLimit : options.pidsLimit;
  if (pidsLimit !== null) args.push("--pids-limit", String(pidsLimit));
  const memory = options.memory === undefined ? DOCKER_DEFAULTS.memory : options.memory;
  if (memory !== null) args.push("--memory", memory);
  const cpus = options.cpus === undefined ? DOCKER_DEFAULTS.cpus : options.cpus;
  if (cpus !== null) args.push("--cpus", String(cpus));
  args.push("--network", options.network ?? DOCKER_DEFAULTS.network);
  if (options.user !== undefined) args.push("--user", options.user);
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new Error(`docker env: invalid variable name ${JSON.stringify(key)}`);
    args.push("--env", `${key}=${value}`);
  }
  for (const mount of options.mounts ?? []) {
    assertAbsolute("mount source", mount.source);
    assertAbsolute("mount target", mount.target);
    args.push("--mount", `type=bind,source=${mount.source},target=${mount.target}${mount.readOnly ? ",readonly" : ""}`);
  }
  args.push(...(options.extraRunArgs ?? []));
  // PID 1: a shell that stays alive and reaps orphaned background jobs (a plain
  // `sleep infinity` would leave them as zombies, counting against --pids-limit).
  args.push("--entrypoint", "bash", options.image ?? DOCKER_DEFAULTS.image, "-c", 'trap "exit 0" TERM INT; while :; do sleep 2147483647 & wait $!; done');
  return args;
}

/** A hint when the engine could not start `bash` (126/127, or the entrypoint failing). */
function bashHint(options: DockerEnvironmentOptions, result: DockerCommandResult): string {
  const text = `${result.stderr}\n${result.stdout}`;
  const missing = /executable file not found|"bash": .*no such file|bash: no such file|exec: "?bash"?/i.test(text);
  return missing ? ` (the image ${options.image ?? DOCKER_DEFAULTS.image} must contain bash)` : "";
}

let runCounter = 0;

export class DockerEnvironment implements Environment {
  readonly backend = "docker";
  readonly isolation: BackendInfo;
  private currentCwd: string;
  private closing: Promise<void> | undefined;
  private readonly paths: ShellStatePaths;
  private readonly cli: DockerCliOptions;

  private constructor(
    readonly taskId: string,
    /** The container's id. */
    readonly containerId: string,
    /** The container's name. */
    readonly containerName: string,
    /** The task's private state directory inside the container. */
    readonly stateDir: string,
    private readonly initialCwd: string,
    private readonly options: DockerEnvironmentOptions,
  ) {
    this.isolation = { name: "docker", hostMounts: dockerReachesHost(options) };
    this.currentCwd = initialCwd;
    this.paths = statePaths(stateDir);
    this.cli = cliOptions(options);
  }

  /** Starts the task's container and prepares its state directory. */
  static async create(taskId: string, options: DockerEnvironmentOptions = {}): Promise<DockerEnvironment> {
    if (options.cwd !== undefined) assertAbsolute("cwd", options.cwd);
    const cli = cliOptions(options);
    const name = containerName(taskId);
    const run = await runDocker(cli, dockerRunArgs(taskId, options, name), { timeoutMs: options.startTimeoutMs ?? 120_000 });
    const id = run.stdout.trim().split("\n").pop()?.trim() ?? "";
    if (run.code !== 0 || !/^[0-9a-f]{12,64}$/.test(id)) {
      // A container may exist even though `run` failed (it was created but did not start).
      await runDocker(cli, ["rm", "-f", name], { timeoutMs: 30_000 }).catch(() => undefined);
      throw new Error(`${dockerFailure(`docker run of image ${options.image ?? DOCKER_DEFAULTS.image}`, run)}${bashHint(options, run)}`);
    }
    try {
      const init = await runDocker(cli, ["exec", id, "bash", "-c", buildInitScript(options.cwd)], { timeoutMs: 60_000 });
      const [stateDir, cwd] = init.stdout.split("\u0000");
      if (init.code !== 0 || !stateDir || !cwd) {
        throw new Error(`${dockerFailure("preparing the container", init)}${bashHint(options, init)}`);
      }
      return new DockerEnvironment(taskId, id, name, stateDir, cwd, options);
    } catch (err) {
      await runDocker(cli, ["rm", "-f", id], { timeoutMs: 30_000 }).catch(() => undefined);
      throw err;
    }
  }

  get cwd(): string {
    return this.currentCwd;
  }

  /** Whether `close` was called. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  async exec(command: string, options: ExecOptions): Promise<ExecResult> {
    if (this.closing) throw new Error(`the docker environment of task ${this.taskId} is closed`);
    if (command.includes("\0")) throw new Error("the command contains a NUL character, which cannot be passed to the container's shell");
    if (options.cwd !== undefined && options.cwd.includes("\0")) throw new Error("the working directory contains a NUL character");
    if (options.signal?.aborted) {
      return { output: "", exitCode: ABORT_EXIT_CODE, timedOut: false, aborted: true, truncated: false, totalChars: 0, durationMs: 0 };
    }
    const runId = `${process.pid}-${++runCounter}-${randomBytes(4).toString("hex")}`;
    const nonce = randomBytes(12).toString("hex");
    const inner = wrapCommand(this.paths, wrapOptionsFor(this.initialCwd, options));
    const script = buildRunScript({ stateDir: this.stateDir, runId, paths: this.paths, inner, nonce });
    const argv = [dockerBinary(this.cli), "exec", this.containerId, "bash", "-c", script, "bash", command];

    const output = new CappedOutput(options.maxOutputChars, { headRatio: options.headRatio ?? 0.2 });
    const filter = new TrailerFilter(trailerTag(nonce), (chunk) => output.push(chunk));
    const graceMs = this.options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    let killing: Promise<string | undefined> | undefined;

    const group = spawnGroup(argv, {
      env: dockerEnv(this.cli),
      timeoutMs: options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
      // The output is collected here, through the trailer filter; spawnGroup only supervises.
      maxOutputChars: 0,
      killGraceMs: graceMs,
      ...(this.options.pipeDrainMs !== undefined ? { pipeDrainMs: this.options.pipeDrainMs } : {}),
      onKill: () => {
        killing = this.killRun(runId, graceMs);
      },
      // The result waits until the tree inside the container is gone.
      onExit: () => killing,
    });
    const { child } = group;
    child.stdout?.on("data", (chunk: Buffer) => filter.push(chunk));

    // The trailer means the command is over. Podman's `docker exec` returns then; an
    // engine that keeps the call open while a background job holds the output stream
    // gets the usual drain time, and then the local client is let go (the job goes on
    // running in the container).
    let endedByTrailer = false;
    let drainTimer: NodeJS.Timeout | undefined;
    filter.onValue = () => {
      drainTimer = setTimeout(() => {
        if (child.exitCode === null && child.signalCode === null && !killing) {
          endedByTrailer = true;
          child.kill("SIGTERM");
        }
      }, this.options.pipeDrainMs ?? DEFAULT_PIPE_DRAIN_MS);
    };

    let result: ExecResult;
    try {
      result = await group.result;
    } catch (err) {
      throw new Error(`Failed to start docker exec: ${(err as Error).message}`, { cause: err });
    } finally {
      if (drainTimer !== undefined) clearTimeout(drainTimer);
    }
    const cwdAfterKill = killing ? await killing : undefined;
    filter.end();
    output.end();
    const trailer = parseTrailer(filter.value);
    // The trailer (or, after a kill, the kill script) reports the task's directory;
    // with a one-off cwd it is the task's unchanged one.
    const cwd = trailer?.cwd || cwdAfterKill;
    if (cwd) this.currentCwd = cwd;
    const final: ExecResult = { ...result, output: output.toString(), truncated: output.truncated, totalChars: output.totalChars };
    if (trailer !== undefined && !result.timedOut && !result.aborted) {
      final.exitCode = trailer.exitCode;
      if (endedByTrailer) delete final.signal;
    }
    return final;
  }

  /**
   * Signals one run's process tree inside the container and waits until it is
   * gone. Resolves to the task's directory as the killed command left it.
   */
  private async killRun(runId: string, graceMs: number): Promise<string | undefined> {
    const script = buildKillScript({ stateDir: this.stateDir, runId, graceMs, cwdFile: this.paths.cwdFile });
    try {
      const result = await runDocker(this.cli, ["exec", this.containerId, "bash", "-c", script], { timeoutMs: graceMs + 15_000 });
      return result.code === 0 && result.stdout !== "" ? result.stdout : undefined;
    } catch {
      // The CLI could not run; the container is removed on close in any case.
      return undefined;
    }
  }

  /**
   * Removes the container (`docker rm -f`: every process of the task, running
   * commands included, and its files). Idempotent; `exec` rejects afterwards.
   */
  close(): Promise<void> {
    if (!this.closing) {
      this.closing = runDocker(this.cli, ["rm", "-f", "-v", this.containerId], { timeoutMs: 60_000 }).then(
        (result) => {
          if (result.code !== 0 && !/no such container|no container with name or id/i.test(result.stderr)) {
            throw new Error(dockerFailure(`removing container ${this.containerName}`, result));
          }
        },
        () => undefined,
      );
    }
    return this.closing;
  }

  /**
   * Removes the container with a blocking `docker rm -f`, for the process's
   * `exit` event and fatal signals, where nothing asynchronous runs any more.
   * Leaves the environment closed. Prefer `close()` elsewhere.
   */
  disposeSync(): void {
    if (this.closing) return;
    this.closing = Promise.resolve();
    spawnSync(dockerBinary(this.cli), ["rm", "-f", "-v", this.containerId], {
      env: dockerEnv(this.cli),
      stdio: "ignore",
      timeout: 30_000,
    });
  }
}

/** Creates one container per task, with fixed options or options read at each call (so changes apply to new tasks). */
export class DockerEnvironmentFactory implements EnvironmentFactory {
  readonly backend = "docker";
  private readonly resolve: () => DockerEnvironmentOptions;

  constructor(options: DockerEnvironmentOptions | (() => DockerEnvironmentOptions) = {}) {
    this.resolve = typeof options === "function" ? options : () => options;
  }

  /** The options a new environment would get now. */
  get options(): DockerEnvironmentOptions {
    return this.resolve();
  }

  unavailableReason(): string | undefined {
    return dockerUnavailableReason(cliOptions(this.resolve()));
  }

  create(taskId: string): Promise<DockerEnvironment> {
    return DockerEnvironment.create(taskId, this.resolve());
  }
}

export function createDockerFactory(options: DockerEnvironmentOptions | (() => DockerEnvironmentOptions) = {}): DockerEnvironmentFactory {
  return new DockerEnvironmentFactory(options);
}

/**
 * The options the registry's `dockerFactory` uses, read for every new task: the
 * `terminal.docker` section of config.yaml (`dockerOptionsFromConfig`), with any
 * `MIBYAN_DOCKER_*` environment variable (`dockerOptionsFromEnv`) taking
 * precedence; without either, image `debian:stable-slim` and the hardened
 * defaults, `DOCKER_HOST` from the environment.
 */
export function defaultDockerOptions(env: EnvVars = process.env): DockerEnvironmentOptions {
  return { ...dockerOptionsFromConfig(backendConfigSection("docker")), ...dockerOptionsFromEnv(env) };
}

/** The docker backend as the registry loads it (options from `defaultDockerOptions`). */
export const dockerFactory: DockerEnvironmentFactory = createDockerFactory(() => defaultDockerOptions());

/**
 * Options from the environment: `MIBYAN_DOCKER_IMAGE`, `_NETWORK`, `_MEMORY`,
 * `_CPUS`, `_PIDS_LIMIT` (`none` lifts a limit), `_CWD`, `_USER`, `_HOST`
 * (overrides `DOCKER_HOST`), `_MOUNTS` (`/host:/container[:ro]`, several separated
 * by commas), `_DOCKER_PATH`.
 */
export function dockerOptionsFromEnv(env: EnvVars = process.env): DockerEnvironmentOptions {
  const section: Record<string, unknown> = {};
  const keys = ["image", "network", "memory", "cpus", "pids_limit", "cwd", "user", "host", "docker_path"];
  for (const key of keys) {
    const value = env[`MIBYAN_DOCKER_${key.toUpperCase()}`];
    if (value !== undefined && value !== "") section[key] = value;
  }
  const mounts = env.MIBYAN_DOCKER_MOUNTS;
  if (mounts) section.mounts = mounts.split(",").map((m) => m.trim()).filter(Boolean);
  return dockerOptionsFromConfig(section);
}

/**
 * Removes this backend's containers left behind (by a crash, say): all of them,
 * or only those of one task. Returns how many were removed.
 */
export async function removeDockerContainers(options: DockerCliOptions & { taskId?: string } = {}): Promise<number> {
  const filter = options.taskId === undefined ? `label=${DOCKER_BACKEND_LABEL}=docker` : `label=${DOCKER_TASK_LABEL}=${options.taskId}`;
  const list = await runDocker(options, ["ps", "-aq", "--no-trunc", "--filter", filter], { timeoutMs: 30_000 });
  if (list.code !== 0) throw new Error(dockerFailure("docker ps", list));
  const ids = list.stdout.split("\n").map((line) => line.trim()).filter(Boolean);
  if (ids.length === 0) return 0;
  const removed = await runDocker(options, ["rm", "-f", "-v", ...ids], { timeoutMs: 60_000 });
  if (removed.code !== 0) throw new Error(dockerFailure("docker rm", removed));
  return ids.length;
}

const DOCKER_CONFIG_KEYS = [
  "image",
  "network",
  "memory",
  "cpus",
  "pids_limit",
  "mounts",
  "cwd",
  "user",
  "env",
  "extra_run_args",
  "docker_path",
  "host",
  "start_timeout_seconds",
] as const;

/**
 * Options from the `terminal.docker` section of config.yaml (snake_case keys as
 * written): `image`, `network`, `memory`, `cpus`, `pids_limit`, `mounts`
 * (`[{source, target, read_only}]` or `"src:dst[:ro]"` strings), `cwd`, `user`,
 * `env`, `extra_run_args`, `docker_path`, `host`, `start_timeout_seconds`;
 * camelCase spellings are accepted too. An unknown key or a malformed value
 * throws, naming the key.
 */
export function dockerOptionsFromConfig(raw: Record<string, unknown> | undefined): DockerEnvironmentOptions {
  const options: DockerEnvironmentOptions = {};
  if (!raw) return options;
  const section = checkedSection("docker", raw, DOCKER_CONFIG_KEYS);
  const str = (key: string): string | undefined => {
    const value = section[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "string" || value === "") throw new Error(`terminal.docker.${key} must be a non-empty string`);
    return value;
  };
  const limit = (key: string): number | string | null | undefined => {
    const value = section[key];
    if (value === undefined) return undefined;
    if (value === null || value === false || value === 0 || value === "none" || value === "unlimited") return null;
    if (typeof value === "number" && value > 0) return value;
    if (typeof value === "string" && value.trim() !== "") return value.trim();
    throw new Error(`terminal.docker.${key} must be a positive number, a string, or none`);
  };
  const image = str("image");
  if (image !== undefined) options.image = image;
  const network = str("network");
  if (network !== undefined) options.network = network;
  const cwd = str("cwd");
  if (cwd !== undefined) options.cwd = cwd;
  const user = str("user");
  if (user !== undefined) options.user = user;
  const dockerPath = str("docker_path");
  if (dockerPath !== undefined) options.dockerPath = dockerPath;
  const host = str("host");
  if (host !== undefined) options.host = host;
  const memory = limit("memory");
  if (memory !== undefined) options.memory = memory === null ? null : String(memory);
  const cpus = limit("cpus");
  if (cpus !== undefined) options.cpus = cpus;
  const pids = limit("pids_limit");
  if (pids !== undefined) {
    if (pids !== null && !Number.isInteger(Number(pids))) throw new Error("terminal.docker.pids_limit must be an integer");
    options.pidsLimit = pids === null ? null : Number(pids);
  }
  const start = section.start_timeout_seconds;
  if (start !== undefined) {
    if (typeof start !== "number" || !(start > 0)) throw new Error("terminal.docker.start_timeout_seconds must be a positive number");
    options.startTimeoutMs = start * 1000;
  }
  const env = section.env;
  if (env !== undefined && env !== null) {
    if (typeof env !== "object" || Array.isArray(env)) throw new Error("terminal.docker.env must be a mapping");
    options.env = Object.fromEntries(Object.entries(env as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
  }
  const extra = section.extra_run_args;
  if (extra !== undefined && extra !== null) {
    if (!Array.isArray(extra) || !extra.every((a) => typeof a === "string")) throw new Error("terminal.docker.extra_run_args must be a list of strings");
    options.extraRunArgs = extra as string[];
  }
  const mounts = section.mounts;
  if (mounts !== undefined && mounts !== null) {
    if (!Array.isArray(mounts)) throw new Error("terminal.docker.mounts must be a list");
    options.mounts = mounts.map((entry, index): DockerMount => {
      if (typeof entry === "string") {
        const [source, target, mode, ...more] = entry.split(":");
        if (!source || !target || more.length > 0 || (mode !== undefined && mode !== "ro" && mode !== "rw")) {
          throw new Error(`terminal.docker.mounts[${index}] must look like /host/path:/container/path[:ro]`);
        }
        return { source, target, readOnly: mode === "ro" };
      }
      if (typeof entry === "object" && entry !== null) {
        const record = entry as Record<string, unknown>;
        if (typeof record.source !== "string" || typeof record.target !== "string") {
          throw new Error(`terminal.docker.mounts[${index}] needs source and target`);
        }
        return { source: record.source, target: record.target, readOnly: record.read_only === true || record.readonly === true || record.readOnly === true };
      }
      throw new Error(`terminal.docker.mounts[${index}] must be a string or a mapping`);
    });
  }
  return options;
}
