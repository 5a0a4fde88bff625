/**
 * The `docker` CLI as the docker backend uses it: one-shot commands
 * (`run -d`, `exec` of helper scripts, `rm -f`, `ps`) with a time limit, and
 * the cheap, cached check of whether a Docker engine answers at all.
 *
 * Every call goes through the real CLI, so `DOCKER_HOST` (and `DOCKER_CONTEXT`,
 * `DOCKER_CONFIG`, ...) are honoured exactly as a person typing `docker` would
 * see them; podman's Docker-compatible API service works the same way.
 */

import { execFile, spawnSync } from "node:child_process";
import { findExecutable } from "../util/find-executable.js";
import type { EnvVars } from "../util/env-vars.js";

/** Where and how to reach the engine. */
export interface DockerCliOptions {
  /** The docker CLI (a name looked up on PATH, or a path). Default `docker`. */
  dockerPath?: string;
  /** Overrides `DOCKER_HOST` for this backend (`unix:///run/podman.sock`, `tcp://...`). Default: the environment's. */
  host?: string;
  /** The environment the CLI runs with. Default `process.env`. */
  env?: EnvVars;
}

export interface DockerCommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment the CLI runs with, `host` applied. */
export function dockerEnv(options: DockerCliOptions): Record<string, string | undefined> {
  // No "What's next" hints or other chatter from the CLI.
  const env: Record<string, string | undefined> = { DOCKER_CLI_HINTS: "false", ...(options.env ?? process.env) };
  if (options.host !== undefined && options.host !== "") env.DOCKER_HOST = options.host;
  return env;
}

export function dockerBinary(options: DockerCliOptions): string {
  return options.dockerPath ?? "docker";
}

/** Runs `docker ...args` to the end; never rejects for a non-zero exit (the result says so). */
export function runDocker(
  options: DockerCliOptions,
  args: readonly string[],
  { timeoutMs = 60_000, maxBuffer = 16 * 1024 * 1024 }: { timeoutMs?: number; maxBuffer?: number } = {},
): Promise<DockerCommandResult> {
  return new Promise((resolve, reject) => {
    execFile(
      dockerBinary(options),
      [...args],
      { env: dockerEnv(options), timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer, encoding: "utf8", windowsHide: true },
      (error, stdout, stderr) => {
        if (error && typeof (error as NodeJS.ErrnoException).code === "string") {
          // ENOENT / EACCES: the CLI itself could not be started.
          reject(new Error(`cannot run ${dockerBinary(options)}: ${error.message}`, { cause: error }));
          return;
        }
        let code = 0;
        if (error) {
          const failed = error as { code?: number | null; killed?: boolean; signal?: string | null };
          if (failed.killed || failed.signal) {
            resolve({ code: 124, stdout, stderr: `${stderr}docker ${args[0] ?? ""}: no answer within ${timeoutMs} ms\n` });
            return;
          }
          code = typeof failed.code === "number" ? failed.code : 1;
        }
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A readable one-line reason from a failed docker call. */
export function dockerFailure(what: string, result: DockerCommandResult): string {
  const detail = (result.stderr.trim() || result.stdout.trim() || `exit code ${result.code}`).split("\n").slice(-3).join(" / ");
  return `${what} failed: ${detail}`;
}

interface CachedAnswer {
  reason: string | undefined;
  at: number;
}

const availabilityCache = new Map<string, CachedAnswer>();
/** A positive answer is kept this long; a negative one shorter, so a daemon started later is noticed. */
const POSITIVE_TTL_MS = 5 * 60_000;
const NEGATIVE_TTL_MS = 15_000;

/**
 * Why the docker backend cannot run here, or undefined when it can: the CLI
 * is missing, or no engine answers a `docker ps` (within `timeoutMs`; `ps`
 * rather than `version`, which podman's service takes seconds to answer).
 * Synchronous (it is asked by availability checks) but cheap after the first
 * call: the answer is cached per CLI and `DOCKER_HOST`.
 */
export function dockerUnavailableReason(options: DockerCliOptions = {}, { timeoutMs = 5_000 }: { timeoutMs?: number } = {}): string | undefined {
  const env = dockerEnv(options);
  const binary = dockerBinary(options);
  const key = `${binary}\u0000${env.DOCKER_HOST ?? ""}\u0000${env.DOCKER_CONTEXT ?? ""}`;
  const cached = availabilityCache.get(key);
  const now = Date.now();
  if (cached && now - cached.at < (cached.reason === undefined ? POSITIVE_TTL_MS : NEGATIVE_TTL_MS)) return cached.reason;

  let reason: string | undefined;
  if (findExecutable(binary, env) === undefined) {
    reason = `the docker CLI (${binary}) is not installed or not on PATH`;
  } else {
    const probe = spawnSync(binary, ["ps", "--quiet", "--filter", "label=mibyan.availability-probe"], {
      env,
      timeout: timeoutMs,
      killSignal: "SIGKILL",
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      windowsHide: true,
    });
    const where = env.DOCKER_HOST ? ` at ${env.DOCKER_HOST}` : "";
    if (probe.error) {
      reason = `no Docker engine answered${where}: ${probe.error.message}`;
    } else if (probe.status !== 0) {
      const detail = (probe.stderr || probe.stdout).trim().split("\n").slice(-2).join(" / ");
      reason = `no Docker engine answered${where}${detail ? `: ${detail}` : ""}`;
    }
  }
  availabilityCache.set(key, { reason, at: now });
  return reason;
}

/** Forgets cached availability answers (after starting or stopping an engine). */
export function resetDockerAvailability(): void {
  availabilityCache.clear();
}
