/**
 * What each terminal backend needs before it can work at all, checked
 * synchronously and without loading the backend's module or SDK: the
 * `terminal` tool's availability check (which the registry runs whenever tools
 * are listed, so it must be cheap and synchronous) reports a backend whose
 * program, credentials or essential settings are missing. The backend's own
 * `unavailableReason` still checks everything (options, versions, the SDK,
 * whether the engine answers) when a task's environment is created.
 *
 * Credentials are groups of environment variables: one complete group is
 * enough (an API key, or a token with its team and project, ...).
 *
 * Settings are read as the backend reads them: its `terminal.<backend>`
 * section of config.yaml, with its `MIBYAN_<BACKEND>_*` environment variables
 * taking precedence (ssh.ts `defaultSshOptions`, docker.ts `defaultDockerOptions`).
 */

import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

import { findExecutable } from "../util/find-executable.js";
import type { EnvVars } from "../util/env-vars.js";
import { backendConfigSection } from "./backend-config.js";
import { dockerDaemonProblem } from "./docker-daemon-check.js";

interface Prerequisites {
  /** Programs of which one must be on PATH. */
  programs?: readonly string[];
  /** Groups of environment variables; all of one group must be set. */
  credentials?: readonly (readonly string[])[];
  /** Files that stand in for the credentials (a vendor's profile). */
  credentialFiles?: (env: EnvVars) => string[];
  /** What the backend's settings leave it unable to do (checked after programs and credentials). */
  settings?: (env: EnvVars) => string | undefined;
}

/** A setting as the backend reads it: `MIBYAN_<BACKEND>_<KEY>`, else `terminal.<backend>.<key>` (snake or camel case). */
function setting(backend: string, key: string, env: EnvVars): string | undefined {
  const fromEnv = env[`MIBYAN_${backend.toUpperCase()}_${key.toUpperCase()}`];
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  const section = backendConfigSection(backend);
  const camel = key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  const value = section?.[key] ?? section?.[camel];
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

function sshSettingsProblem(env: EnvVars): string | undefined {
  if (setting("ssh", "host", env) === undefined) return "the ssh backend has no host: set terminal.ssh.host in config.yaml (or MIBYAN_SSH_HOST)";
  return undefined;
}

function dockerProblem(env: EnvVars): string | undefined {
  const binary = setting("docker", "docker_path", env) ?? "docker";
  const resolved = findExecutable(binary, env);
  if (resolved === undefined) return `the docker backend needs ${binary} on PATH${binary === "docker" ? "" : " (terminal.docker.docker_path)"}`;
  const host = setting("docker", "host", env) ?? env.DOCKER_HOST;
  return dockerDaemonProblem({ binary, resolved, host, env });
}

const PREREQUISITES: Readonly<Record<string, Prerequisites>> = {
  local: {},
  ssh: { programs: ["ssh"], settings: sshSettingsProblem },
  // The program is the configured docker_path, so it is checked with the settings.
  docker: { settings: dockerProblem },
  singularity: { programs: ["apptainer", "singularity"] },
  modal: {
    credentials: [["MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET"]],
    credentialFiles: (env) => [env.MODAL_CONFIG_PATH || join(homedir(), ".modal.toml")],
  },
  daytona: { credentials: [["DAYTONA_API_KEY"], ["DAYTONA_JWT_TOKEN", "DAYTONA_ORGANIZATION_ID"]] },
  vercel_sandbox: { credentials: [["VERCEL_TOKEN", "VERCEL_TEAM_ID", "VERCEL_PROJECT_ID"], ["VERCEL_OIDC_TOKEN"]] },
};

/**
 * Why `backend` cannot work here, or undefined when its program, credentials
 * and essential settings are present. A backend not in the table (one an
 * embedder registered) has no prerequisites here; whether a name is a backend
 * at all is the caller's question (`EnvironmentManager.isKnownBackend`).
 */
export function backendPrerequisiteProblem(backend: string, env: EnvVars = process.env): string | undefined {
  if (backend === "local" && process.platform === "win32") return "the local backend needs bash and POSIX process groups (not Windows)";
  const needs = PREREQUISITES[backend];
  if (needs === undefined) return undefined;
  if (needs.programs && !needs.programs.some((program) => findExecutable(program, env) !== undefined)) {
    return `the ${backend} backend needs ${needs.programs.join(" or ")} on PATH`;
  }
  if (needs.credentials) {
    const complete = needs.credentials.some((group) => group.every((name) => (env[name] ?? "") !== ""));
    const file = needs.credentialFiles?.(env).find((path) => existsSync(path));
    if (!complete && file === undefined) {
      const groups = needs.credentials.map((group) => group.join(" + ")).join(", or ");
      const files = needs.credentialFiles ? ` (or a profile file: ${needs.credentialFiles(env).join(", ")})` : "";
      return `the ${backend} backend needs credentials: ${groups}${files}`;
    }
  }
  return needs.settings?.(env);
}
