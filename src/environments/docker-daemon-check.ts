/**
 * A cheap, synchronous guess at whether the docker backend's engine can be
 * reached, for the `terminal` tool's availability check (run whenever tools
 * are listed: no process is spawned, no connection made, only `stat`s and
 * reads of small files). It catches the common dead configurations: no
 * daemon socket where `DOCKER_HOST` (or the default `/var/run/docker.sock`)
 * says, or a socket path that is something else. It cannot tell a live
 * socket from a stale one, nor judge `tcp://`/`ssh://` hosts or docker
 * contexts: those count as reachable here, and the backend's own check
 * (`docker ps` when a task's environment is created) has the last word.
 */
import { realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";

import { readRegularFileSync } from "../util/read-regular-file.js";
import type { EnvVars } from "../util/env-vars.js";

/** The socket the docker CLI uses when neither `DOCKER_HOST` nor a context says otherwise. */
export const DEFAULT_DOCKER_SOCKET = "/var/run/docker.sock";

/** The docker CLI's config.json is read only up to this size (a FIFO or a huge file is not read). */
const MAX_CONFIG_JSON_BYTES = 1024 * 1024;

/** Scripts at most this big are read to see whether `docker` is podman's shim. */
const MAX_SHIM_BYTES = 4096;

export interface DockerTarget {
  /** The CLI the backend runs (`docker_path`), resolved on PATH or not. */
  binary: string;
  /** Its absolute path when found. */
  resolved?: string;
  /** The engine address in effect (`terminal.docker.host`, `MIBYAN_DOCKER_HOST` or `DOCKER_HOST`); undefined for the CLI's default. */
  host?: string;
  env: EnvVars;
}

/** Why the docker engine of `target` cannot be reached, or undefined when it may be. */
export function dockerDaemonProblem(target: DockerTarget): string | undefined {
  // Podman runs containers without a daemon: there is no socket to look for.
  if (isPodman(target.binary, target.resolved)) return undefined;
  const { host, env } = target;
  let socket: string;
  let origin: string;
  if (host === undefined || host === "") {
    if (usesContext(env)) return undefined;
    socket = DEFAULT_DOCKER_SOCKET;
    origin = "the default socket (DOCKER_HOST is not set)";
  } else if (host.startsWith("unix://")) {
    socket = host.slice("unix://".length);
    origin = `docker host ${host}`;
  } else {
    // tcp://, ssh://, npipe://, fd://: not judged without connecting.
    return undefined;
  }
  const stat = statSync(socket, { throwIfNoEntry: false });
  if (stat === undefined) return `no Docker daemon: ${origin}: ${socket} does not exist (start the daemon, or point terminal.docker.host or DOCKER_HOST at its socket)`;
  if (!stat.isSocket()) return `no Docker daemon: ${origin}: ${socket} is not a socket`;
  return undefined;
}

function isPodman(binary: string, resolved: string | undefined): boolean {
  if (basename(binary).startsWith("podman")) return true;
  if (resolved === undefined) return false;
  try {
    const real = realpathSync(resolved);
    if (basename(real).startsWith("podman")) return true;
    // podman-docker installs `docker` as a small shell script that execs podman (a binary is too big to be read).
    if (statSync(real).size > MAX_SHIM_BYTES) return false;
    return /\bpodman\b/.test(readRegularFileSync(real, MAX_SHIM_BYTES).text);
  } catch {
    return false;
  }
}

/** Whether a docker context other than the default chooses the engine (DOCKER_CONTEXT, or currentContext in the CLI's config.json). */
function usesContext(env: EnvVars): boolean {
  const named = env.DOCKER_CONTEXT;
  if (named !== undefined && named !== "") return named !== "default";
  const dir = env.DOCKER_CONFIG || join(env.HOME || homedir(), ".docker");
  try {
    const text = readRegularFileSync(join(dir, "config.json"), MAX_CONFIG_JSON_BYTES).text;
    const current = (JSON.parse(text) as { currentContext?: unknown }).currentContext;
    return typeof current === "string" && current !== "" && current !== "default";
  } catch {
    return false;
  }
}
