/**
 * The `daytona` backend's options and credentials: what config.yaml's
 * `terminal.daytona` section may say (snake_case keys, each checked, unknown
 * keys rejected so that a typo is not silently ignored), what the vendor's
 * environment variables add, and which credentials a sandbox is created with.
 *
 * Credentials are never read from config.yaml: an API key (`DAYTONA_API_KEY`),
 * or a JWT (`DAYTONA_JWT_TOKEN`) with the organization it acts for
 * (`DAYTONA_ORGANIZATION_ID`, or `organization_id` in the section). They are
 * resolved here and handed to the SDK explicitly, together with the API URL,
 * so that the SDK does not go looking for them in `.env` files of whatever
 * directory the runtime happens to run in. No message built here contains a
 * credential.
 *
 * A key written in the section beats the vendor's environment variable of the
 * same meaning (`api_url` over `DAYTONA_API_URL`, `target` over
 * `DAYTONA_TARGET`): the section is specific to this backend, the variables
 * are the vendor's general defaults.
 */

import { apiUrlProblem } from "./backend-config.js";
import type { EnvVars } from "../util/env-vars.js";

export interface DaytonaOptions {
  /** API key (`DAYTONA_API_KEY`). Never logged or shown. */
  apiKey?: string;
  /** JWT (`DAYTONA_JWT_TOKEN`), used when there is no API key; needs `organizationId`. Never logged or shown. */
  jwtToken?: string;
  /** Organization a JWT acts for (`organization_id`, else `DAYTONA_ORGANIZATION_ID`). */
  organizationId?: string;
  /**
   * Base URL of the Daytona API (`api_url`, else `DAYTONA_API_URL`, else
   * `https://app.daytona.io/api`). https, or http to a loopback address only:
   * the credential travels with every request.
   */
  apiUrl?: string;
  /** Region the sandbox runs in (`us`, `eu`; `target`, else `DAYTONA_TARGET`). Default: the organization's. */
  target?: string;
  /** Snapshot to create the sandbox from. Exclusive with `image`. Default: Daytona's default snapshot. */
  snapshot?: string;
  /** Image to build the sandbox from (`debian:12`). Exclusive with `snapshot`. It must contain bash and coreutils. */
  image?: string;
  /** vCPUs (with `image` only: a snapshot fixes its own resources). */
  cpu?: number;
  /** Memory in GiB (with `image` only). */
  memory?: number;
  /** Disk in GiB (with `image` only). */
  disk?: number;
  /** OS user the commands run as. Default: the snapshot's (`daytona`). */
  user?: string;
  /** Minutes without activity after which the sandbox stops; 0 never. Default 30. */
  autoStopMinutes?: number;
  /** Minutes after stopping at which the sandbox is deleted; 0 at once, -1 never. Default 0. */
  autoDeleteMinutes?: number;
  /** Block all network access from the sandbox. Default: Daytona's (allowed, as the organization's tier permits). */
  networkBlockAll?: boolean;
  /** The only networks (CIDR) the sandbox may reach. */
  networkAllowList?: string[];
  /** A new task's first working directory (absolute; created if missing). Default: the user's home. */
  cwd?: string;
  /** Variables every command in the sandbox sees. */
  env?: Record<string, string>;
  /** More labels on the sandbox (`mibyan.task` and `mibyan.backend` are always set and cannot be overridden). */
  labels?: Record<string, string>;
  /** Time allowed for creating the sandbox and waiting until it runs. Default 120 s. */
  createTimeoutMs?: number;
  /** SIGTERM→SIGKILL grace inside the sandbox on a timeout or an abort. Default 2 s. */
  killGraceMs?: number;
  /** How long to keep reading after a command's end (background jobs). Default 250 ms. */
  pipeDrainMs?: number;
  /**
   * How often the sandbox's activity is refreshed while a command runs, so that
   * a long command does not count as inactivity. Default: a third of
   * `autoStopMinutes`, between 30 s and 5 min; none when auto-stop is off.
   */
  keepAliveMs?: number;
}

export const DAYTONA_DEFAULTS = {
  apiUrl: "https://app.daytona.io/api",
  autoStopMinutes: 30,
  autoDeleteMinutes: 0,
  createTimeoutMs: 120_000,
} as const;

/** Labels this backend sets on every sandbox; the section's `labels` cannot override them. */
export const DAYTONA_TASK_LABEL = "mibyan.task";
export const DAYTONA_BACKEND_LABEL = "mibyan.backend";

const SECTION = "terminal.daytona";

const CONFIG_KEYS = [
  "api_url",
  "target",
  "organization_id",
  "snapshot",
  "image",
  "cpu",
  "memory",
  "disk",
  "user",
  "auto_stop_minutes",
  "auto_delete_minutes",
  "network_block_all",
  "network_allow_list",
  "cwd",
  "env",
  "labels",
  "create_timeout_seconds",
] as const;

/** Keys that would hold a credential: refused with a pointer to the environment variable. */
const SECRET_KEYS: Record<string, string> = {
  api_key: "DAYTONA_API_KEY",
  jwt_token: "DAYTONA_JWT_TOKEN",
};

const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

/**
 * Options from the `terminal.daytona` section of config.yaml (keys as written,
 * snake_case): `api_url`, `target`, `organization_id`, `snapshot` or `image`,
 * `cpu`, `memory`, `disk` (GiB; with `image` only), `user`,
 * `auto_stop_minutes`, `auto_delete_minutes`, `network_block_all`,
 * `network_allow_list` (CIDRs, a list or a comma-separated string), `cwd`,
 * `env`, `labels`, `create_timeout_seconds`. A bad value or an unknown key
 * throws, naming `terminal.daytona.<key>`.
 */
export function daytonaOptionsFromConfig(section: Record<string, unknown> | undefined | null): DaytonaOptions {
  const options: DaytonaOptions = {};
  if (section === undefined || section === null) return options;
  if (typeof section !== "object" || Array.isArray(section)) throw new Error(`${SECTION} must be a mapping`);
  for (const key of Object.keys(section)) {
    const variable = SECRET_KEYS[key];
    if (variable !== undefined) throw new Error(`${SECTION}.${key} is not read from config.yaml: set the ${variable} environment variable instead`);
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
  const number = (key: string, check: (n: number) => boolean, what: string): number | undefined => {
    const value = section[key];
    if (value === undefined || value === null) return undefined;
    const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
    if (typeof n !== "number" || !Number.isFinite(n) || !check(n)) throw new Error(`${SECTION}.${key} must be ${what}`);
    return n;
  };
  const bool = (key: string): boolean | undefined => {
    const value = section[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "boolean") throw new Error(`${SECTION}.${key} must be true or false`);
    return value;
  };
  const mapping = (key: string, validKey: RegExp, keyWhat: string): Record<string, string> | undefined => {
    const value = section[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "object" || Array.isArray(value)) throw new Error(`${SECTION}.${key} must be a mapping`);
    const out: Record<string, string> = {};
    for (const [name, item] of Object.entries(value as Record<string, unknown>)) {
      if (!validKey.test(name)) throw new Error(`${SECTION}.${key}.${name} is not a valid ${keyWhat}`);
      if (item === null || typeof item === "object") throw new Error(`${SECTION}.${key}.${name} must be a string, a number or a boolean`);
      out[name] = String(item);
    }
    return out;
  };

  const apiUrl = str("api_url");
  if (apiUrl !== undefined) {
    const problem = daytonaApiUrlProblem(apiUrl);
    if (problem) throw new Error(`${SECTION}.api_url ${problem}`);
    options.apiUrl = apiUrl;
  }
  const target = str("target");
  if (target !== undefined) options.target = target;
  const organizationId = str("organization_id");
  if (organizationId !== undefined) options.organizationId = organizationId;

  const snapshot = str("snapshot");
  const image = str("image");
  if (snapshot !== undefined && image !== undefined) throw new Error(`${SECTION}.snapshot and ${SECTION}.image cannot both be set`);
  if (snapshot !== undefined) options.snapshot = snapshot;
  if (image !== undefined) options.image = image;
  const positive = (n: number): boolean => n > 0;
  const cpu = number("cpu", (n) => positive(n) && Number.isInteger(n), "a positive integer (vCPUs)");
  const memory = number("memory", (n) => positive(n) && Number.isInteger(n), "a positive integer (GiB)");
  const disk = number("disk", (n) => positive(n) && Number.isInteger(n), "a positive integer (GiB)");
  for (const [key, value] of [["cpu", cpu], ["memory", memory], ["disk", disk]] as const) {
    if (value !== undefined && image === undefined) {
      throw new Error(`${SECTION}.${key} needs ${SECTION}.image: a sandbox created from a snapshot has the snapshot's resources`);
    }
  }
  if (cpu !== undefined) options.cpu = cpu;
  if (memory !== undefined) options.memory = memory;
  if (disk !== undefined) options.disk = disk;
  const user = str("user");
  if (user !== undefined) options.user = user;

  const autoStop = number("auto_stop_minutes", (n) => Number.isInteger(n) && n >= 0, "a whole number of minutes (0: never)");
  if (autoStop !== undefined) options.autoStopMinutes = autoStop;
  const autoDelete = number("auto_delete_minutes", (n) => Number.isInteger(n) && n >= -1, "a whole number of minutes (0: as soon as it stops, -1: never)");
  if (autoDelete !== undefined) options.autoDeleteMinutes = autoDelete;

  const blockAll = bool("network_block_all");
  if (blockAll !== undefined) options.networkBlockAll = blockAll;
  const allow = section.network_allow_list;
  if (allow !== undefined && allow !== null) {
    const items = typeof allow === "string" ? allow.split(",").map((s) => s.trim()).filter(Boolean) : allow;
    if (!Array.isArray(items) || items.length === 0 || !items.every((c) => typeof c === "string" && isCidr(c))) {
      throw new Error(`${SECTION}.network_allow_list must be a non-empty list of IPv4 networks in CIDR form (like 10.0.0.0/8)`);
    }
    options.networkAllowList = [...(items as string[])];
  }

  const cwd = str("cwd");
  if (cwd !== undefined) {
    if (!cwd.startsWith("/")) throw new Error(`${SECTION}.cwd must be an absolute path`);
    options.cwd = cwd;
  }
  const env = mapping("env", /^[A-Za-z_][A-Za-z0-9_]*$/, "variable name");
  if (env !== undefined) options.env = env;
  const labels = mapping("labels", /^[A-Za-z0-9][A-Za-z0-9._\/-]{0,62}$/, "label name");
  if (labels !== undefined) {
    for (const reserved of [DAYTONA_TASK_LABEL, DAYTONA_BACKEND_LABEL]) {
      if (reserved in labels) throw new Error(`${SECTION}.labels.${reserved} is set by mibyan itself and cannot be configured`);
    }
    options.labels = labels;
  }
  const createTimeout = number("create_timeout_seconds", positive, "a positive number of seconds");
  if (createTimeout !== undefined) options.createTimeoutMs = createTimeout * 1000;
  return options;
}

/**
 * The vendor's environment variables: `DAYTONA_API_KEY`, `DAYTONA_JWT_TOKEN`,
 * `DAYTONA_ORGANIZATION_ID`, `DAYTONA_API_URL`, `DAYTONA_TARGET`. A malformed
 * `DAYTONA_API_URL` throws (naming the variable, not its value's secrets).
 */
export function daytonaOptionsFromEnv(env: EnvVars = process.env): DaytonaOptions {
  const options: DaytonaOptions = {};
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };
  const apiKey = read("DAYTONA_API_KEY");
  if (apiKey !== undefined) options.apiKey = apiKey;
  const jwtToken = read("DAYTONA_JWT_TOKEN");
  if (jwtToken !== undefined) options.jwtToken = jwtToken;
  const organizationId = read("DAYTONA_ORGANIZATION_ID");
  if (organizationId !== undefined) options.organizationId = organizationId;
  const apiUrl = read("DAYTONA_API_URL");
  if (apiUrl !== undefined) {
    const problem = daytonaApiUrlProblem(apiUrl);
    if (problem) throw new Error(`DAYTONA_API_URL ${problem}`);
    options.apiUrl = apiUrl;
  }
  const target = read("DAYTONA_TARGET");
  if (target !== undefined) options.target = target;
  return options;
}

/** The options of one task: the config section over the environment variables. */
export function mergeDaytonaOptions(section: Record<string, unknown> | undefined | null, env: EnvVars = process.env): DaytonaOptions {
  return { ...daytonaOptionsFromEnv(env), ...daytonaOptionsFromConfig(section) };
}

/** Why `url` cannot be the Daytona API's base URL, or undefined. */
export function daytonaApiUrlProblem(url: string): string | undefined {
  return apiUrlProblem(url, "the API key");
}

function isCidr(value: string): boolean {
  const match = CIDR.exec(value);
  if (!match) return false;
  const octets = match.slice(1, 5).map(Number);
  return octets.every((o) => o <= 255) && Number(match[5]) <= 32;
}

/** How the SDK authenticates: the resolved credential, and what it is called in messages. */
export type DaytonaCredentials =
  | { kind: "apiKey"; apiKey: string }
  | { kind: "jwt"; jwtToken: string; organizationId: string };

/** Resolves the credentials, or says what is missing (never showing a credential). */
export function resolveDaytonaCredentials(options: DaytonaOptions): { credentials: DaytonaCredentials } | { problem: string } {
  if (options.apiKey !== undefined) return { credentials: { kind: "apiKey", apiKey: options.apiKey } };
  if (options.jwtToken !== undefined) {
    if (options.organizationId === undefined) {
      return { problem: `DAYTONA_JWT_TOKEN is set but DAYTONA_ORGANIZATION_ID (or ${SECTION}.organization_id) is missing` };
    }
    return { credentials: { kind: "jwt", jwtToken: options.jwtToken, organizationId: options.organizationId } };
  }
  return { problem: "no Daytona credentials: set DAYTONA_API_KEY (or DAYTONA_JWT_TOKEN with DAYTONA_ORGANIZATION_ID)" };
}

/** The secrets among the options, for redacting messages. */
export function daytonaSecrets(options: DaytonaOptions): string[] {
  return [options.apiKey, options.jwtToken].filter((s): s is string => s !== undefined);
}
