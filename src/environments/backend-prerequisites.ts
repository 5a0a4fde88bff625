/**
 * What each terminal backend needs before it can work at all, checked
 * synchronously and without loading the backend's module or SDK: the
 * `terminal` tool's availability check (which the registry runs whenever tools
 * are listed, so it must be cheap and synchronous) reports a backend whose
 * program or credentials are missing. The backend's own `unavailableReason`
 * still checks everything (options, versions, the SDK) when a task's
 * environment is created.
 *
 * Credentials are groups of environment variables: one complete group is
 * enough (an API key, or a token with its team and project, ...).
 */

import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

import { findExecutable } from "../util/find-executable.js";

interface Prerequisites {
  /** Programs of which one must be on PATH. */
  programs?: readonly string[];
  /** Groups of environment variables; all of one group must be set. */
  credentials?: readonly (readonly string[])[];
  /** Files that stand in for the credentials (a vendor's profile). */
  credentialFiles?: (env: NodeJS.ProcessEnv) => string[];
}

const PREREQUISITES: Readonly<Record<string, Prerequisites>> = {
  local: {},
  ssh: { programs: ["ssh"] },
  docker: { programs: ["docker"] },
  singularity: { programs: ["apptainer", "singularity"] },
  modal: {
    credentials: [["MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET"]],
    credentialFiles: (env) => [env.MODAL_CONFIG_PATH || join(homedir(), ".modal.toml")],
  },
  daytona: { credentials: [["DAYTONA_API_KEY"], ["DAYTONA_JWT_TOKEN", "DAYTONA_ORGANIZATION_ID"]] },
  vercel_sandbox: { credentials: [["VERCEL_TOKEN", "VERCEL_TEAM_ID", "VERCEL_PROJECT_ID"], ["VERCEL_OIDC_TOKEN"]] },
};

/**
 * Why `backend` cannot work here, or undefined when its program and
 * credentials are present. A backend not in the table (one an embedder
 * registered) has no prerequisites here.
 */
export function backendPrerequisiteProblem(backend: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
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
  return undefined;
}
