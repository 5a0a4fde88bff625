/**
 * The `apptainer` (or legacy `singularity`) command lines of the singularity
 * backend, built from checked options (`singularity-options.ts`), and the
 * environment the CLI runs with. Nothing here starts a process except the
 * availability probe (`apptainer version`).
 *
 * One task is one instance:
 *
 *     apptainer instance start --containall --cleanenv --no-privs \
 *         --no-mount hostfs,bind-paths [--net --network none] [--writable-tmpfs] \
 *         [--bind src:dest[:ro]]... [extra args] IMAGE mibyan-<task>-<random>
 *     apptainer exec --cleanenv --no-privs instance://NAME /bin/sh -c 'exec 2>&1; exec "$@"' sh ARGV...
 *     apptainer instance stop --force NAME
 *
 * Why the exec flags repeat some of the start flags: a process that joins an
 * instance gets its environment and its privileges from the `exec` command
 * line, not from the instance (`--cleanenv` given only to `instance start`
 * cleans the start script's environment and nothing else).
 *
 * Why `/bin/sh -c 'exec 2>&1; exec "$@"'`: the CLI's own messages (`FATAL:`,
 * `WARNING:`) go to its stderr, the same stream as the program's. Merging the
 * program's stderr into its stdout inside the instance keeps both in their
 * real order and leaves the client's stderr to the CLI alone, where the
 * transport reads it for error messages.
 *
 * The CLI reads many options from `APPTAINER_*`/`SINGULARITY_*` variables
 * (`APPTAINER_BIND=/` binds the host's root). Those are removed from the
 * environment it runs with, except the few that only say where the CLI keeps
 * its cache and how it reaches registries, so that the hardening above is
 * exactly what the options say.
 */

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { basename } from "node:path";

import { findExecutable } from "../util/find-executable.js";
import { SINGULARITY_DEFAULTS, SINGULARITY_SECTION, type SingularityOptions } from "./singularity-options.js";
import type { EnvVars } from "../util/env-vars.js";

/** Which CLI it is: they name their variables differently (`APPTAINERENV_` / `SINGULARITYENV_`). */
export type SingularityFlavor = "apptainer" | "singularity";

export interface SingularityBinary {
  /** The executable (a resolved path). */
  path: string;
  flavor: SingularityFlavor;
}

/** `--no-mount` values under `contain`: host filesystems (`mount hostfs`) and the administrator's `bind path` entries. */
export const CONTAINED_NO_MOUNT = "hostfs,bind-paths";

/** How a command is started inside the instance (see the module comment). */
export const MERGE_STDERR_PREFIX: readonly string[] = Object.freeze(["/bin/sh", "-c", 'exec 2>&1; exec "$@"', "sh"]);

/** Variables of the CLI kept in its environment: where it caches, and how it reaches registries. */
const KEPT_CLI_SETTINGS = new Set(["CACHEDIR", "TMPDIR", "CONFIGDIR", "DOCKER_USERNAME", "DOCKER_PASSWORD", "AUTHFILE", "NOHTTPS"]);

export function flavorOf(binaryPath: string): SingularityFlavor {
  return basename(binaryPath).includes("singularity") ? "singularity" : "apptainer";
}

/**
 * The CLI to use: the configured `binary`, else `apptainer` on PATH, else
 * `singularity` on PATH. Throws when none is there.
 */
export function resolveSingularityBinary(options: Pick<SingularityOptions, "binary" | "cliEnv">): SingularityBinary {
  const env = options.cliEnv ?? process.env;
  if (options.binary !== undefined) {
    const path = findExecutable(options.binary, env);
    if (path === undefined) throw new Error(`${SINGULARITY_SECTION}.binary: ${options.binary} is not an executable file (or not on PATH)`);
    return { path, flavor: flavorOf(options.binary) };
  }
  for (const name of ["apptainer", "singularity"] as const) {
    const path = findExecutable(name, env);
    if (path !== undefined) return { path, flavor: name };
  }
  throw new Error("neither apptainer nor singularity is installed or on PATH (see docs/backends/singularity.md)");
}

/**
 * The environment the CLI runs with: the caller's (`cliEnv`, else
 * `process.env`) without the `APPTAINER_*`/`SINGULARITY_*` variables that set
 * action options or inject container variables, plus one
 * `APPTAINERENV_<NAME>` (`SINGULARITYENV_<NAME>` for legacy SingularityCE) per
 * configured `env` entry: the documented way to set a variable inside that
 * survives `--cleanenv`, and one that needs no quoting (the `--env` flag splits
 * its value on commas).
 */
export function cliEnvironment(options: Pick<SingularityOptions, "env" | "cliEnv">, flavor: SingularityFlavor): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(options.cliEnv ?? process.env)) {
    const setting = /^(?:APPTAINER|SINGULARITY)_(.*)$/.exec(key)?.[1];
    if (/^(?:APPTAINERENV|SINGULARITYENV)_/.test(key)) continue;
    if (setting !== undefined && !KEPT_CLI_SETTINGS.has(setting)) continue;
    env[key] = value;
  }
  const prefix = flavor === "singularity" ? "SINGULARITYENV_" : "APPTAINERENV_";
  for (const [name, value] of Object.entries(options.env ?? {})) env[`${prefix}${name}`] = value;
  return env;
}

/** An instance name the CLI accepts (`^[a-zA-Z0-9._-]+$`): `mibyan-<task slug>-<random>`. */
export function instanceName(taskId: string): string {
  const slug = taskId.replace(/[^a-zA-Z0-9_.-]+/g, "-").replace(/^[-.]+/, "").slice(0, 40) || "task";
  return `mibyan-${slug}-${randomBytes(4).toString("hex")}`;
}

/** `--bind` specification of one bind. */
function bindSpec(bind: { source: string; target?: string; readOnly?: boolean }): string {
  const target = bind.target ?? bind.source;
  return `${bind.source}:${target}${bind.readOnly ? ":ro" : ""}`;
}

/** The `instance start` argument list (without the binary) for a task's instance. */
export function instanceStartArgs(options: SingularityOptions, name: string): string[] {
  if (options.image === undefined) throw new Error(`${SINGULARITY_SECTION}.image is not set`);
  const args = ["instance", "start"];
  if (options.contain ?? SINGULARITY_DEFAULTS.contain) args.push("--containall");
  if (options.cleanenv ?? SINGULARITY_DEFAULTS.cleanenv) args.push("--cleanenv");
  if (options.contain ?? SINGULARITY_DEFAULTS.contain) args.push("--no-privs", "--no-mount", CONTAINED_NO_MOUNT);
  if (options.network !== undefined && options.network !== "host") args.push("--net", "--network", options.network);
  if (options.writableTmpfs ?? SINGULARITY_DEFAULTS.writableTmpfs) args.push("--writable-tmpfs");
  for (const bind of options.binds ?? []) args.push("--bind", bindSpec(bind));
  args.push(...(options.extraArgs ?? []));
  args.push(options.image, name);
  return args;
}

/** The `exec` argument list up to and including `instance://NAME`; the program and its arguments follow. */
export function instanceExecArgs(options: SingularityOptions, name: string): string[] {
  const args = ["exec"];
  if (options.cleanenv ?? SINGULARITY_DEFAULTS.cleanenv) args.push("--cleanenv");
  if (options.contain ?? SINGULARITY_DEFAULTS.contain) args.push("--no-privs");
  args.push(`instance://${name}`);
  return args;
}

/** The full `exec` argument list for `argv` (see `MERGE_STDERR_PREFIX`). */
export function commandArgs(options: SingularityOptions, name: string, argv: readonly string[]): string[] {
  return [...instanceExecArgs(options, name), ...MERGE_STDERR_PREFIX, ...argv];
}

/** `instance stop --force`: SIGKILL to the instance's init, which ends every process in its PID namespace. */
export function instanceStopArgs(name: string): string[] {
  return ["instance", "stop", "--force", name];
}

/** Whether a failed `instance stop` only says that the instance is gone already. */
export function isInstanceGone(stderr: string): boolean {
  return /no instance found/i.test(stderr);
}

/**
 * The CLI's own error lines, the last few, for a message: its log lines
 * (`FATAL:   ...`, `ERROR:   ...`) and its usage errors (`Error for command "exec": unknown flag: --x`).
 */
export function cliErrorLines(stderr: string): string | undefined {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => /^(?:FATAL|ERROR|Error)\b/.test(line));
  return lines.length > 0 ? lines.slice(-3).join(" / ") : undefined;
}

/** A readable one-line detail from a failed CLI call. */
export function cliFailureDetail(code: number | null, stderr: string, stdout = ""): string {
  return cliErrorLines(stderr) ?? (stderr.trim() || stdout.trim() || `exit code ${code ?? "unknown"}`).split("\n").slice(-3).join(" / ");
}

interface CachedAnswer {
  reason: string | undefined;
  at: number;
}

const availabilityCache = new Map<string, CachedAnswer>();
/** A positive answer is kept this long; a negative one shorter, so an installation made later is noticed. */
const POSITIVE_TTL_MS = 5 * 60_000;
const NEGATIVE_TTL_MS = 15_000;

/**
 * Why the singularity backend cannot run with these options here, or
 * undefined: no image configured, a local image that does not exist, no CLI,
 * or a CLI whose `version` fails. The probe's answer is cached per binary.
 */
export function singularityUnavailableReason(options: SingularityOptions, { timeoutMs = 10_000 }: { timeoutMs?: number } = {}): string | undefined {
  if (options.image === undefined) {
    return `${SINGULARITY_SECTION}.image is not set (a .sif file, a sandbox directory or a docker:// reference)`;
  }
  if (options.image.startsWith("/") && !existsSync(options.image)) return `the image ${options.image} does not exist`;
  let binary: SingularityBinary;
  try {
    binary = resolveSingularityBinary(options);
  } catch (err) {
    return (err as Error).message;
  }
  const cached = availabilityCache.get(binary.path);
  const now = Date.now();
  if (cached && now - cached.at < (cached.reason === undefined ? POSITIVE_TTL_MS : NEGATIVE_TTL_MS)) return cached.reason;
  const probe = spawnSync(binary.path, ["version"], {
    cwd: "/",
    env: cliEnvironment(options, binary.flavor),
    timeout: timeoutMs,
    killSignal: "SIGKILL",
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  let reason: string | undefined;
  if (probe.error) reason = `\`${binary.path} version\` could not run: ${probe.error.message}`;
  else if (probe.status !== 0) reason = `\`${binary.path} version\` failed: ${cliFailureDetail(probe.status, probe.stderr, probe.stdout)}`;
  availabilityCache.set(binary.path, { reason, at: now });
  return reason;
}

/** Forgets cached availability answers (after installing or replacing the CLI). */
export function resetSingularityAvailability(): void {
  availabilityCache.clear();
}
