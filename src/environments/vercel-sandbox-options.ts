/**
 * The `vercel_sandbox` backend's options and credentials: what config.yaml's
 * `terminal.vercel_sandbox` section may say (snake_case keys, each checked,
 * unknown keys rejected so that a typo is not silently ignored), what the
 * vendor's environment variables add, and which credentials a sandbox is
 * created with.
 *
 * Credentials are never read from config.yaml: an access token
 * (`VERCEL_TOKEN`) with its team and project (`VERCEL_TEAM_ID`,
 * `VERCEL_PROJECT_ID`, or `team_id`/`project_id` in the section), or else a
 * Vercel OIDC token (`VERCEL_OIDC_TOKEN`, which names its team and project
 * itself). They are resolved here, once per task, and handed to the SDK
 * explicitly, so that the SDK never falls back to its interactive login.
 * No message built here contains a token.
 */

import { apiUrlProblem } from "./backend-config.js";
import type { EnvVars } from "../util/env-vars.js";

/** How the sandbox may reach the network: Vercel's two modes, or the only domains allowed. */
export type VercelSandboxNetwork = "allow-all" | "deny-all" | readonly string[];

export interface VercelSandboxOptions {
  /** Access token (`VERCEL_TOKEN`); needs `teamId` and `projectId`. Never logged or shown. */
  token?: string;
  /** Vercel OIDC token (`VERCEL_OIDC_TOKEN`); used when there is no access token. Never logged or shown. */
  oidcToken?: string;
  /** Team the sandbox belongs to (`team_id`, else `VERCEL_TEAM_ID`). */
  teamId?: string;
  /** Project the sandbox belongs to (`project_id`, else `VERCEL_PROJECT_ID`). */
  projectId?: string;
  /** Legacy Vercel runtime (`node24`, `node22`, `python3.13`). Exclusive with `image`. */
  runtime?: string;
  /** Image to boot (`vercel/sandbox/ubuntu`, a VCR repository). Default: Vercel's (`vercel/sandbox/universal`). */
  image?: string;
  /** Virtual CPUs (2048 MB of memory each). Default: Vercel's. */
  vcpus?: number;
  /** The sandbox stops by itself after this long, whatever happens to this process. Default 30. */
  timeoutMinutes?: number;
  /** Ports to expose on a public `*.vercel.run` URL (at most 15). None by default. */
  ports?: number[];
  /** Network policy. Default: Vercel's (full internet access). */
  network?: VercelSandboxNetwork;
  /** Region (`iad1`, `fra1`, ...). Default: Vercel's (`iad1`). */
  region?: string;
  /** A new task's first working directory (absolute; created if missing). Default: the user's home. */
  cwd?: string;
  /** Variables every command in the sandbox sees. */
  env?: Record<string, string>;
  /**
   * Base URL of the Sandbox API instead of `https://vercel.com/api` (a proxy,
   * or a local stand-in in tests). https, or http to a loopback address only:
   * the token travels with every request.
   */
  apiUrl?: string;
  /** Time allowed for creating the sandbox. Default 120 s. */
  createTimeoutMs?: number;
  /** SIGTERM→SIGKILL grace inside the sandbox on a timeout or an abort. Default 2 s. */
  killGraceMs?: number;
  /** How long to keep reading after a command's end (background jobs). Default 250 ms. */
  pipeDrainMs?: number;
}

export const VERCEL_SANDBOX_DEFAULTS = {
  timeoutMinutes: 30,
  createTimeoutMs: 120_000,
  apiUrl: "https://vercel.com/api",
} as const;

/** The Vercel SDK's legacy runtimes (`image` takes any VCR image instead). */
export const VERCEL_RUNTIMES: readonly string[] = ["node26", "node24", "node22", "python3.13"];

const CONFIG_KEYS = [
  "runtime",
  "image",
  "vcpus",
  "timeout_minutes",
  "ports",
  "network",
  "region",
  "cwd",
  "env",
  "team_id",
  "project_id",
  "api_url",
] as const;

const SECTION = "terminal.vercel_sandbox";

/**
 * Options from the `terminal.vercel_sandbox` section of config.yaml (keys as
 * written, snake_case): `runtime` or `image`, `vcpus`, `timeout_minutes`,
 * `ports`, `network` (`allow-all`, `deny-all`, or a list of domains), `region`,
 * `cwd`, `env`, `team_id`, `project_id`, `api_url`. A bad value or an unknown
 * key throws, naming `terminal.vercel_sandbox.<key>`.
 */
export function vercelSandboxOptionsFromConfig(section: Record<string, unknown> | undefined): VercelSandboxOptions {
  const options: VercelSandboxOptions = {};
  if (section === undefined || section === null) return options;
  if (typeof section !== "object" || Array.isArray(section)) throw new Error(`${SECTION} must be a mapping`);
  for (const key of Object.keys(section)) {
    if (key === "token" || key === "oidc_token") {
      throw new Error(`${SECTION}.${key} is not read from config.yaml: set the ${key === "token" ? "VERCEL_TOKEN" : "VERCEL_OIDC_TOKEN"} environment variable instead`);
    }
    if (!(CONFIG_KEYS as readonly string[]).includes(key)) {
      throw new Error(`${SECTION}.${key} is not a known key (known: ${CONFIG_KEYS.join(", ")})`);
    }
  }
  const str = (key: string): string | undefined => {
    const value = section[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "string" || value.trim() === "") throw new Error(`${SECTION}.${key} must be a non-empty string`);
    return value.trim();
  };
  const positive = (key: string, integer: boolean): number | undefined => {
    const value = section[key];
    if (value === undefined || value === null) return undefined;
    const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
    if (typeof number !== "number" || !Number.isFinite(number) || number <= 0 || (integer && !Number.isInteger(number))) {
      throw new Error(`${SECTION}.${key} must be a positive ${integer ? "integer" : "number"}`);
    }
    return number;
  };

  const runtime = str("runtime");
  const image = str("image");
  if (runtime !== undefined && image !== undefined) throw new Error(`${SECTION}.runtime and ${SECTION}.image cannot both be set`);
  if (runtime !== undefined) {
    if (!VERCEL_RUNTIMES.includes(runtime)) throw new Error(`${SECTION}.runtime must be one of ${VERCEL_RUNTIMES.join(", ")} (or set image instead)`);
    options.runtime = runtime;
  }
  if (image !== undefined) options.image = image;
  const vcpus = positive("vcpus", true);
  if (vcpus !== undefined) options.vcpus = vcpus;
  const timeout = positive("timeout_minutes", false);
  if (timeout !== undefined) options.timeoutMinutes = timeout;
  const region = str("region");
  if (region !== undefined) options.region = region;
  const cwd = str("cwd");
  if (cwd !== undefined) {
    if (!cwd.startsWith("/")) throw new Error(`${SECTION}.cwd must be an absolute path`);
    options.cwd = cwd;
  }
  const teamId = str("team_id");
  if (teamId !== undefined) options.teamId = teamId;
  const projectId = str("project_id");
  if (projectId !== undefined) options.projectId = projectId;
  const apiUrl = str("api_url");
  if (apiUrl !== undefined) {
    const problem = apiUrlProblem(apiUrl, "the token");
    if (problem) throw new Error(`${SECTION}.api_url ${problem}`);
    options.apiUrl = apiUrl;
  }

  const ports = section.ports;
  if (ports !== undefined && ports !== null) {
    if (!Array.isArray(ports) || ports.length > 15 || !ports.every((p) => Number.isInteger(p) && (p as number) >= 1 && (p as number) <= 65535)) {
      throw new Error(`${SECTION}.ports must be a list of at most 15 port numbers (1-65535)`);
    }
    options.ports = [...new Set(ports as number[])];
  }
  const network = section.network;
  if (network !== undefined && network !== null) {
    if (network === "allow-all" || network === "deny-all") options.network = network;
    else if (Array.isArray(network) && network.length > 0 && network.every((d) => typeof d === "string" && /^(\*\.)?[A-Za-z0-9.-]+$/.test(d))) {
      options.network = [...(network as string[])];
    } else {
      throw new Error(`${SECTION}.network must be allow-all, deny-all, or a non-empty list of domains (like *.npmjs.org)`);
    }
  }
  const env = section.env;
  if (env !== undefined && env !== null) {
    if (typeof env !== "object" || Array.isArray(env)) throw new Error(`${SECTION}.env must be a mapping of variable names to values`);
    options.env = {};
    for (const [name, value] of Object.entries(env as Record<string, unknown>)) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`${SECTION}.env.${name} is not a valid variable name`);
      if (value === null || typeof value === "object") throw new Error(`${SECTION}.env.${name} must be a string, a number or a boolean`);
      options.env[name] = String(value);
    }
  }
  return options;
}

/** The vendor's environment variables: `VERCEL_TOKEN`, `VERCEL_TEAM_ID`, `VERCEL_PROJECT_ID`, `VERCEL_OIDC_TOKEN`. */
export function vercelSandboxOptionsFromEnv(env: EnvVars = process.env): VercelSandboxOptions {
  const options: VercelSandboxOptions = {};
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };
  const token = read("VERCEL_TOKEN");
  if (token !== undefined) options.token = token;
  const oidcToken = read("VERCEL_OIDC_TOKEN");
  if (oidcToken !== undefined) options.oidcToken = oidcToken;
  const teamId = read("VERCEL_TEAM_ID");
  if (teamId !== undefined) options.teamId = teamId;
  const projectId = read("VERCEL_PROJECT_ID");
  if (projectId !== undefined) options.projectId = projectId;
  return options;
}

/**
 * The options of one task: the config section over the environment variables
 * (a `team_id` written for this backend beats the general `VERCEL_TEAM_ID`).
 */
export function mergeVercelSandboxOptions(section: Record<string, unknown> | undefined, env: EnvVars = process.env): VercelSandboxOptions {
  return { ...vercelSandboxOptionsFromEnv(env), ...vercelSandboxOptionsFromConfig(section) };
}


/** What a sandbox is created with. */
export interface VercelCredentials {
  token: string;
  teamId: string;
  projectId: string;
  /** Which kind of token: for messages (`VERCEL_TOKEN` or `VERCEL_OIDC_TOKEN`). */
  source: "VERCEL_TOKEN" | "VERCEL_OIDC_TOKEN";
  /** An OIDC token's expiry, for hints on authentication errors. */
  expiresAt?: Date;
}

/** Resolves the credentials, or says what is missing (never showing a token). */
export function resolveVercelCredentials(options: VercelSandboxOptions): { credentials: VercelCredentials } | { problem: string } {
  if (options.token !== undefined) {
    const missing = [
      options.teamId === undefined ? `VERCEL_TEAM_ID (or ${SECTION}.team_id)` : undefined,
      options.projectId === undefined ? `VERCEL_PROJECT_ID (or ${SECTION}.project_id)` : undefined,
    ].filter((m): m is string => m !== undefined);
    if (missing.length > 0) return { problem: `VERCEL_TOKEN is set but ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} missing` };
    return { credentials: { token: options.token, teamId: options.teamId!, projectId: options.projectId!, source: "VERCEL_TOKEN" } };
  }
  if (options.oidcToken !== undefined) {
    const claims = decodeOidcClaims(options.oidcToken);
    if (claims === undefined) return { problem: "VERCEL_OIDC_TOKEN is not a Vercel OIDC token (a JWT naming owner_id and project_id); run `vercel env pull` to get one" };
    return {
      credentials: {
        token: options.oidcToken,
        teamId: claims.ownerId,
        projectId: claims.projectId,
        source: "VERCEL_OIDC_TOKEN",
        ...(claims.exp !== undefined ? { expiresAt: new Date(claims.exp * 1000) } : {}),
      },
    };
  }
  return {
    problem: "no Vercel credentials: set VERCEL_TOKEN, VERCEL_TEAM_ID and VERCEL_PROJECT_ID, or VERCEL_OIDC_TOKEN (`vercel env pull`)",
  };
}

/** The team and project an OIDC token names (its payload, unverified: the API verifies it). */
function decodeOidcClaims(token: string): { ownerId: string; projectId: string; exp?: number } | undefined {
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as Record<string, unknown>;
    if (typeof payload.owner_id !== "string" || typeof payload.project_id !== "string") return undefined;
    return { ownerId: payload.owner_id, projectId: payload.project_id, ...(typeof payload.exp === "number" ? { exp: payload.exp } : {}) };
  } catch {
    return undefined;
  }
}
