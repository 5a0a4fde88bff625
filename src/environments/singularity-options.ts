/**
 * The singularity backend's options: the `terminal.singularity` section of
 * config.yaml (snake_case keys as written), checked here once so that every
 * later step can trust them, and the one judgement made from them that the
 * approval gate relies on: whether the instance can reach the host's files.
 *
 * Every value ends up as an argument of the `apptainer` CLI, so the checks are
 * strict: a path must be absolute (a relative one would be resolved against
 * whatever directory the CLI happens to start in), a bind path must not hold
 * the characters the CLI splits bind specifications on (`,` and `:`), and no
 * value may start with `-` (it would be read as a flag). A bad value throws an
 * error naming its key (`terminal.singularity.binds[1]: ...`); so does an
 * unknown key, since a misspelt `bind:` silently ignored would leave the user
 * believing a directory is shared when it is not.
 */

import { checkedSection } from "./backend-config.js";
import type { EnvVars } from "../util/env-vars.js";

/** The config section's name, for messages. */
export const SINGULARITY_SECTION = "terminal.singularity";

/** A host path made visible in the instance (`--bind src:dest[:ro]`). */
export interface SingularityBind {
  /** Absolute path on the host. */
  source: string;
  /** Absolute path in the instance. Default: the same as `source`. */
  target?: string;
  /** Mount read-only. Default false. */
  readOnly?: boolean;
}

export interface SingularityOptions {
  /**
   * What to run: a `.sif` file or a sandbox directory (absolute paths), or a
   * URI the CLI can pull (`docker://debian:stable-slim`, `oras://...`,
   * `library://...`). Required. It must contain `bash` and `/bin/sh`.
   */
  image?: string;
  /** The CLI: a path, or a name looked up on PATH. Default `apptainer`, else `singularity`. */
  binary?: string;
  /** Starting directory in the instance (created if missing). Default: the contained `$HOME`, else `/`. */
  cwd?: string;
  /** Host directories to bind. None by default; any makes `isolation.hostMounts` true. */
  binds?: SingularityBind[];
  /**
   * The hardening switch (default true): `--containall` (own PID and IPC
   * namespaces, an empty private `$HOME`, `/tmp` and `/dev`), `--no-mount
   * hostfs,bind-paths` (no host filesystems, none of the administrator's
   * system bind paths) and `--no-privs`. `false` gives Apptainer's defaults,
   * which share the host's home directory and `/tmp`: `hostMounts` is then true.
   */
  contain?: boolean;
  /** `--cleanenv` at start and on every exec, so the host's variables (API keys...) stay out. Default true. */
  cleanenv?: boolean;
  /**
   * `none`: `--net --network none` (a network namespace with only a loopback
   * interface). Another CNI network name (`bridge`, usually root-only) is passed
   * the same way. Unset or `host`: no network namespace; the host's network is shared.
   */
  network?: string;
  /** `--writable-tmpfs`: the image's root filesystem becomes writable, changes kept in memory. Default false. */
  writableTmpfs?: boolean;
  /** Variables set inside the instance (passed as `APPTAINERENV_<NAME>`, so they survive `--cleanenv`). */
  env?: Record<string, string>;
  /**
   * More `instance start` arguments, placed before the image. An escape hatch:
   * one that shares a part of the host (`--bind`, `--home`, `--overlay`,
   * `--writable`, `--nv`, ...) makes `isolation.hostMounts` true.
   */
  extraArgs?: string[];
  /** Time allowed for `instance start` (a `docker://` image is pulled and converted first). Default 300 s. */
  startTimeoutMs?: number;
  /** SIGTERM→SIGKILL grace inside the instance on a timeout or an abort. Default 2 s. */
  killGraceMs?: number;
  /** How long output of background jobs is still read after a command ended. Default 250 ms. */
  pipeDrainMs?: number;
  /** The environment the CLI runs with (before the clean-up in `cliEnvironment`). Default `process.env`. */
  cliEnv?: EnvVars;
}

export const SINGULARITY_DEFAULTS = {
  contain: true,
  cleanenv: true,
  writableTmpfs: false,
  startTimeoutMs: 300_000,
} as const;

/** The snake_case keys `singularityOptionsFromConfig` reads. */
const KNOWN_KEYS = [
  "image",
  "binary",
  "cwd",
  "binds",
  "contain",
  "cleanenv",
  "network",
  "writable_tmpfs",
  "env",
  "extra_args",
  "start_timeout_seconds",
] as const;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `docker://x`, `oras://x`, `library://x`, and the colon-only forms `docker-archive:/x`, `oci-archive:/x`. */
const IMAGE_URI = /^[a-z][a-z0-9+.-]*:/;
/** CNI network names: a comma-separated list of plain names. */
const NETWORK_VALUE = /^[A-Za-z0-9_.][A-Za-z0-9_.,-]*$/;

function fail(key: string, message: string): never {
  throw new Error(`${SINGULARITY_SECTION}.${key} ${message}`);
}

function checkAbsolutePath(key: string, path: string): void {
  if (!path.startsWith("/")) fail(key, `must be an absolute path: ${JSON.stringify(path)}`);
  if (path.includes("\0")) fail(key, "must not contain a NUL character");
}

/** A bind path: absolute, and free of the characters `--bind` splits its specification on. */
function checkBindPath(key: string, path: string): void {
  checkAbsolutePath(key, path);
  if (/[,:]/.test(path)) fail(key, `must not contain "," or ":" (the CLI splits bind specifications on them): ${JSON.stringify(path)}`);
}

/**
 * Checks options however they were made (from config.yaml or by a caller),
 * throwing an error that names the offending key. Returns them unchanged.
 */
export function checkSingularityOptions(options: SingularityOptions): SingularityOptions {
  if (options.image !== undefined) {
    const image = options.image;
    if (typeof image !== "string" || image === "") fail("image", "must be a non-empty string");
    if (image.startsWith("instance://")) fail("image", "must be an image, not a running instance (instance://...)");
    if (!IMAGE_URI.test(image)) {
      if (!image.startsWith("/")) {
        fail("image", `must be an absolute path (a .sif file or a sandbox directory) or a URI such as docker://debian:stable-slim: ${JSON.stringify(image)}`);
      }
      checkAbsolutePath("image", image);
    }
  }
  if (options.binary !== undefined && (typeof options.binary !== "string" || options.binary === "" || options.binary.startsWith("-"))) {
    fail("binary", "must be a path or a command name");
  }
  if (options.cwd !== undefined) {
    if (typeof options.cwd !== "string") fail("cwd", "must be a string");
    checkAbsolutePath("cwd", options.cwd);
  }
  for (const [index, bind] of (options.binds ?? []).entries()) {
    const key = `binds[${index}]`;
    if (typeof bind?.source !== "string") fail(key, "needs a source path");
    checkBindPath(key, bind.source);
    if (bind.target !== undefined) {
      if (typeof bind.target !== "string") fail(key, "target must be a string");
      checkBindPath(key, bind.target);
    }
  }
  for (const key of ["contain", "cleanenv", "writableTmpfs"] as const) {
    const value = options[key];
    if (value !== undefined && typeof value !== "boolean") fail(key === "writableTmpfs" ? "writable_tmpfs" : key, "must be true or false");
  }
  if (options.network !== undefined && (typeof options.network !== "string" || !NETWORK_VALUE.test(options.network))) {
    fail("network", `must be none, host, or a network name such as bridge: ${JSON.stringify(options.network)}`);
  }
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (!ENV_NAME.test(name)) fail("env", `has an invalid variable name: ${JSON.stringify(name)}`);
    if (typeof value !== "string") fail(`env.${name}`, "must be a string");
    if (value.includes("\0")) fail(`env.${name}`, "must not contain a NUL character");
  }
  if (options.extraArgs !== undefined) {
    if (!Array.isArray(options.extraArgs) || !options.extraArgs.every((a) => typeof a === "string" && !a.includes("\0"))) {
      fail("extra_args", "must be a list of strings");
    }
  }
  if (options.startTimeoutMs !== undefined && !(typeof options.startTimeoutMs === "number" && options.startTimeoutMs > 0)) {
    fail("start_timeout_seconds", "must be a positive number");
  }
  return options;
}

function parseBind(entry: unknown, index: number): SingularityBind {
  const key = `binds[${index}]`;
  if (typeof entry === "string") {
    const [source, target, mode, ...more] = entry.split(":");
    if (!source || more.length > 0 || target === "" || (mode !== undefined && mode !== "ro" && mode !== "rw")) {
      fail(key, `must look like /host/path[:/instance/path[:ro|rw]]: ${JSON.stringify(entry)}`);
    }
    const bind: SingularityBind = { source };
    if (target !== undefined) bind.target = target;
    if (mode === "ro") bind.readOnly = true;
    return bind;
  }
  if (entry !== null && typeof entry === "object" && !Array.isArray(entry)) {
    const record = entry as Record<string, unknown>;
    const unknown = Object.keys(record).filter((k) => !["source", "target", "read_only", "readOnly"].includes(k));
    if (unknown.length > 0) fail(key, `has unknown keys: ${unknown.join(", ")} (known: source, target, read_only)`);
    if (typeof record.source !== "string") fail(key, "needs a source path");
    const bind: SingularityBind = { source: record.source };
    if (record.target !== undefined) {
      if (typeof record.target !== "string") fail(key, "target must be a string");
      bind.target = record.target;
    }
    const readOnly = record.read_only ?? record.readOnly;
    if (readOnly !== undefined) {
      if (typeof readOnly !== "boolean") fail(key, "read_only must be true or false");
      if (readOnly) bind.readOnly = true;
    }
    return bind;
  }
  return fail(key, "must be a string or a mapping");
}

/**
 * Options from the `terminal.singularity` section of config.yaml: `image`,
 * `binary`, `cwd`, `binds` (`"/host[:/inside[:ro]]"` strings or `{source,
 * target, read_only}`), `contain`, `cleanenv`, `network`, `writable_tmpfs`,
 * `env`, `extra_args`, `start_timeout_seconds`. camelCase spellings are
 * accepted too. An unknown key or a malformed value throws, naming the key.
 */
export function singularityOptionsFromConfig(raw: Record<string, unknown> | undefined): SingularityOptions {
  const options: SingularityOptions = {};
  if (!raw) return options;
  const section = checkedSection("singularity", raw, KNOWN_KEYS);
  const present = (key: string): boolean => section[key] !== undefined && section[key] !== null;
  const str = (key: string): string => {
    const value = section[key];
    if (typeof value !== "string" || value === "") fail(key, "must be a non-empty string");
    return value;
  };
  const bool = (key: string): boolean => {
    const value = section[key];
    if (typeof value !== "boolean") fail(key, "must be true or false");
    return value;
  };

  if (present("image")) options.image = str("image");
  if (present("binary")) options.binary = str("binary");
  if (present("cwd")) options.cwd = str("cwd");
  if (present("network")) options.network = str("network");
  if (present("contain")) options.contain = bool("contain");
  if (present("cleanenv")) options.cleanenv = bool("cleanenv");
  if (present("writable_tmpfs")) options.writableTmpfs = bool("writable_tmpfs");
  if (present("binds")) {
    const binds = section.binds;
    if (!Array.isArray(binds)) fail("binds", "must be a list");
    options.binds = binds.map(parseBind);
  }
  if (present("env")) {
    const env = section.env;
    if (typeof env !== "object" || env === null || Array.isArray(env)) fail("env", "must be a mapping of variable names to values");
    options.env = {};
    for (const [name, value] of Object.entries(env as Record<string, unknown>)) {
      if (!["string", "number", "boolean"].includes(typeof value)) fail(`env.${name}`, "must be a string, a number or a boolean");
      options.env[name] = String(value);
    }
  }
  if (present("extra_args")) {
    const extra = section.extra_args;
    if (!Array.isArray(extra) || !extra.every((a) => typeof a === "string")) fail("extra_args", "must be a list of strings");
    options.extraArgs = [...(extra as string[])];
  }
  if (present("start_timeout_seconds")) {
    const seconds = section.start_timeout_seconds;
    if (typeof seconds !== "number" || !(seconds > 0)) fail("start_timeout_seconds", "must be a positive number");
    options.startTimeoutMs = seconds * 1000;
  }
  return checkSingularityOptions(options);
}

/**
 * `instance start`/`exec` options that give the instance a part of the host,
 * whatever their value: host directories (`--bind`, `--mount`, `--home`,
 * `--fusemount`, `--overlay`, a `--writable` image, checkpoint directories),
 * host GPU drivers and devices (`--nv`, `--nvccli`, `--rocm`), or root
 * privileges (`--add-caps`, `--allow-setuid`, `--keep-privs`).
 */
const HOST_REACHING_LONG = new Set([
  "--bind",
  "--mount",
  "--home",
  "--fusemount",
  "--overlay",
  "--writable",
  "--dmtcp-launch",
  "--dmtcp-restart",
  "--nv",
  "--nvccli",
  "--rocm",
  "--add-caps",
  "--allow-setuid",
  "--keep-privs",
]);
/** The short forms among them: `-B` (bind), `-H` (home), `-o` (overlay), `-w` (writable). */
const HOST_REACHING_SHORT = new Set(["B", "H", "o", "w"]);
/** Short flags that take a value: after one, the rest of a `-xyz` cluster is that value. */
const VALUE_SHORT = new Set(["B", "H", "o", "S", "W", "s"]);

/**
 * Whether the configuration gives the instance any part of the host's files
 * (conservatively: a read-only bind counts). Not contained (`contain: false`):
 * Apptainer then mounts the user's home directory and `/tmp` from the host.
 * The network is not counted (see docs/backends/singularity.md).
 */
export function singularityReachesHost(options: Pick<SingularityOptions, "binds" | "contain" | "extraArgs">): boolean {
  if ((options.binds?.length ?? 0) > 0) return true;
  if ((options.contain ?? SINGULARITY_DEFAULTS.contain) === false) return true;
  for (const arg of options.extraArgs ?? []) {
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      if (HOST_REACHING_LONG.has(eq > 0 ? arg.slice(0, eq) : arg)) return true;
    } else if (arg.startsWith("-") && arg.length > 1) {
      // A cluster of short flags (`-cB/src`): read flag letters until one that takes a value.
      for (const letter of arg.slice(1)) {
        if (HOST_REACHING_SHORT.has(letter)) return true;
        if (VALUE_SHORT.has(letter)) break;
      }
    }
  }
  return false;
}
