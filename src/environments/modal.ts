/**
 * The modal backend: one Modal Sandbox per task (https://modal.com/docs/guide/sandbox),
 * driven through Modal's official JS SDK (`modal`), which is imported only
 * when a task first needs it. Commands run with `sandbox.exec(argv)` and
 * streamed output; closing the environment terminates the sandbox.
 *
 * This module is the backend's configuration: options (`terminal.modal` in
 * config.yaml), credentials (`MODAL_TOKEN_ID` + `MODAL_TOKEN_SECRET`, else the
 * SDK's profile in `~/.modal.toml`), the availability check and the factory
 * the registry loads. The SDK calls are in `modal-transport.ts`; the shell
 * state, exit codes, timeouts and kills in `sandbox-environment.ts`.
 *
 * Credentials are never read from config.yaml (it is often committed) and never
 * appear in a message: errors and SDK log lines are redacted.
 */

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";

import { backendConfigSection, checkedSection } from "./backend-config.js";
import { openModalSandbox, type ModalSandboxSpec } from "./modal-transport.js";
import { createSandboxFactory, type SandboxEnvironmentOptions } from "./sandbox-environment.js";
import type { EnvironmentFactory } from "./types.js";
import type { EnvVars } from "../util/env-vars.js";
import { sdkInstallCommand } from "./sdk-install-hints.js";

export { MODAL_EXEC_ARGV_LIMIT, ModalSandboxTransport, openModalSandbox, type ModalSandboxSpec } from "./modal-transport.js";

export const MODAL_DEFAULTS = {
  appName: "mibyan-tools",
  image: "python:3.12-slim",
  cpu: 1,
  memoryMiB: 1024,
  timeoutSeconds: 3600,
  blockNetwork: true,
} as const;

/** Modal's longest sandbox lifetime (24 h). */
const MAX_TIMEOUT_SECONDS = 24 * 60 * 60;

export interface ModalOptions {
  /** The Modal app the sandboxes belong to (created if missing). Default `mibyan-tools`. */
  appName?: string;
  /** Registry image the sandbox runs (it must contain bash). Default `python:3.12-slim`. */
  image?: string;
  /** Physical CPU cores requested; `null` leaves Modal's default. Default 1. */
  cpu?: number | null;
  /** Memory requested, MiB; `null` leaves Modal's default. Default 1024. */
  memoryMiB?: number | null;
  /** Lifetime of the sandbox in whole seconds; Modal ends it then even if the task goes on (or was abandoned). Default 3600. */
  timeoutSeconds?: number;
  /** No network access at all from inside the sandbox. Default true. */
  blockNetwork?: boolean;
  /** Starting directory inside the sandbox (created if missing). Default: the image user's home, else `/`. */
  cwd?: string;
  /** Variables set in the sandbox. */
  env?: Record<string, string>;
  /** Modal environment to use. Default: the profile's (`MODAL_ENVIRONMENT`), else the workspace's default. */
  environment?: string;
  /** Credentials, for embedders. Default: `MODAL_TOKEN_ID` / `MODAL_TOKEN_SECRET`, else the active profile of `~/.modal.toml`. */
  tokenId?: string;
  tokenSecret?: string;
}

/** A Modal token pair. */
export interface ModalCredentials {
  tokenId: string;
  tokenSecret: string;
}

/** Whether the SDK is installed, checked without loading it (the availability check is synchronous). */
function sdkPath(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve("modal");
  } catch {
    return undefined;
  }
}

/**
 * The profile the SDK would use from its config file (`MODAL_CONFIG_PATH`,
 * default `~/.modal.toml`): `MODAL_PROFILE`, else the one marked `active`.
 * Parsed with the SDK's own TOML parser. An unreadable or malformed file
 * counts as no profile, as it does for the SDK.
 */
function sdkProfile(env: EnvVars, modalPath: string): Record<string, unknown> {
  const file = env.MODAL_CONFIG_PATH || join(homedir(), ".modal.toml");
  let parsed: Record<string, unknown>;
  try {
    const toml = createRequire(modalPath)("smol-toml") as { parse(text: string): Record<string, unknown> };
    parsed = toml.parse(readFileSync(file, "utf8"));
  } catch {
    return {};
  }
  let name = env.MODAL_PROFILE;
  if (!name) {
    name = Object.entries(parsed).find(([, value]) => isRecord(value) && value.active === true)?.[0];
  }
  const profile = name !== undefined && Object.hasOwn(parsed, name) ? parsed[name] : undefined;
  return isRecord(profile) ? profile : {};
}

/**
 * The credentials a sandbox would be created with: the options', else the
 * environment's, else the SDK profile's (field by field, as the SDK resolves
 * them). Undefined when either half is missing.
 */
export function modalCredentials(options: ModalOptions, env: EnvVars = process.env): ModalCredentials | undefined {
  let tokenId = options.tokenId || env.MODAL_TOKEN_ID;
  let tokenSecret = options.tokenSecret || env.MODAL_TOKEN_SECRET;
  if (!tokenId || !tokenSecret) {
    const modalPath = sdkPath();
    const profile = modalPath ? sdkProfile(env, modalPath) : {};
    if (!tokenId && typeof profile.token_id === "string") tokenId = profile.token_id;
    if (!tokenSecret && typeof profile.token_secret === "string") tokenSecret = profile.token_secret;
  }
  return tokenId && tokenSecret ? { tokenId, tokenSecret } : undefined;
}

/** Why the modal backend cannot be used with these options (SDK missing, no credentials), or undefined. `sdkInstalled` is for tests. */
export function modalUnavailableReason(
  options: ModalOptions,
  env: EnvVars = process.env,
  sdkInstalled: () => boolean = () => sdkPath() !== undefined,
): string | undefined {
  if (!sdkInstalled()) return `the modal terminal backend needs the "modal" package: ${sdkInstallCommand("modal")}`;
  if (!modalCredentials(options, env)) {
    return "no Modal credentials: set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, or create a profile in ~/.modal.toml with `modal token new`";
  }
  return undefined;
}

/** What one sandbox is created with: the options with their defaults, and the credentials. */
export function modalSandboxSpec(options: ModalOptions, env: EnvVars = process.env): ModalSandboxSpec {
  const credentials = modalCredentials(options, env);
  if (!credentials) throw new Error(`modal: ${modalUnavailableReason(options, env) ?? "no credentials"}`);
  const cpu = options.cpu === undefined ? MODAL_DEFAULTS.cpu : options.cpu;
  const memoryMiB = options.memoryMiB === undefined ? MODAL_DEFAULTS.memoryMiB : options.memoryMiB;
  return {
    appName: options.appName ?? MODAL_DEFAULTS.appName,
    image: options.image ?? MODAL_DEFAULTS.image,
    ...(cpu !== null ? { cpu } : {}),
    ...(memoryMiB !== null ? { memoryMiB } : {}),
    timeoutSeconds: options.timeoutSeconds ?? MODAL_DEFAULTS.timeoutSeconds,
    blockNetwork: options.blockNetwork ?? MODAL_DEFAULTS.blockNetwork,
    ...(options.env !== undefined ? { env: options.env } : {}),
    ...(options.environment !== undefined ? { environment: options.environment } : {}),
    ...credentials,
  };
}

/**
 * What the environment is told: a Modal Sandbox is a gVisor container on
 * Modal's machines and sees nothing of this host, so it counts as isolated.
 */
export function modalEnvironmentOptions(options: ModalOptions): Omit<SandboxEnvironmentOptions, "backend"> {
  return {
    isolation: { name: "modal", hostMounts: false },
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
  };
}

/** Creates one Modal Sandbox per task, with fixed options or options read at each call (so changes apply to new tasks). */
export function createModalFactory(options: ModalOptions | (() => ModalOptions) = {}): EnvironmentFactory {
  const resolve = typeof options === "function" ? options : () => options;
  return createSandboxFactory<ModalOptions>({
    backend: "modal",
    options: resolve,
    unavailableReason: (o) => modalUnavailableReason(o),
    open: (_taskId, o) => openModalSandbox(modalSandboxSpec(o)),
    environmentOptions: modalEnvironmentOptions,
  });
}

/** The options the registry's `modalFactory` uses, read for every new task: the `terminal.modal` section of config.yaml. */
export function defaultModalOptions(): ModalOptions {
  return modalOptionsFromConfig(backendConfigSection("modal"));
}

/** The modal backend as the registry loads it (options from `defaultModalOptions`). */
export const modalFactory: EnvironmentFactory = createModalFactory(() => defaultModalOptions());

const MODAL_CONFIG_KEYS = ["app_name", "image", "cpu", "memory_mib", "timeout_seconds", "block_network", "cwd", "env", "environment"] as const;

/**
 * Options from the `terminal.modal` section of config.yaml (snake_case keys as
 * written, camelCase accepted too): `app_name`, `image`, `cpu`, `memory_mib`
 * (`none` for Modal's defaults), `timeout_seconds`, `block_network`, `cwd`,
 * `env`, `environment`. An unknown key throws; credentials are not read
 * here (`token_id`/`token_secret` in config.yaml are refused, so that they are
 * not kept in a file that is often shared). A malformed value throws, naming the key.
 */
export function modalOptionsFromConfig(raw: Record<string, unknown> | undefined): ModalOptions {
  const options: ModalOptions = {};
  if (!raw) return options;
  const fail = (key: string, what: string): never => {
    throw new Error(`terminal.modal.${key} ${what}`);
  };
  for (const [snake, camel] of [["token_id", "tokenId"], ["token_secret", "tokenSecret"]] as const) {
    if (raw[snake] !== undefined || raw[camel] !== undefined) {
      fail(snake, "must not be set in config.yaml: use MODAL_TOKEN_ID / MODAL_TOKEN_SECRET or ~/.modal.toml");
    }
  }
  const section = checkedSection("modal", raw, MODAL_CONFIG_KEYS);
  const str = (key: string): string | undefined => {
    const value = section[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "string" || value.trim() === "") fail(key, "must be a non-empty string");
    return (value as string).trim();
  };
  const limit = (key: string, integer: boolean): number | null | undefined => {
    const value = section[key];
    if (value === undefined) return undefined;
    if (value === null || value === "none" || value === "default") return null;
    const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
    if (typeof n !== "number" || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
      fail(key, `must be a positive ${integer ? "integer" : "number"}, or none for Modal's default`);
    }
    return n as number;
  };

  const appName = str("app_name");
  if (appName !== undefined) {
    // Modal's rule for object names.
    if (!/^[A-Za-z0-9._-]{1,64}$/.test(appName)) fail("app_name", "may contain only letters, digits, dashes, periods and underscores (at most 64)");
    options.appName = appName;
  }
  const image = str("image");
  if (image !== undefined) {
    if (/\s/.test(image)) fail("image", "must be an image reference without spaces (e.g. python:3.12-slim)");
    options.image = image;
  }
  const cpu = limit("cpu", false);
  if (cpu !== undefined) options.cpu = cpu;
  const memory = limit("memory_mib", true);
  if (memory !== undefined) options.memoryMiB = memory;
  const timeout = section.timeout_seconds;
  if (timeout !== undefined) {
    const n = typeof timeout === "string" && timeout.trim() !== "" ? Number(timeout) : timeout;
    if (typeof n !== "number" || !Number.isInteger(n) || n <= 0 || n > MAX_TIMEOUT_SECONDS) {
      fail("timeout_seconds", `must be a whole number of seconds from 1 to ${MAX_TIMEOUT_SECONDS}`);
    }
    options.timeoutSeconds = n as number;
  }
  const block = section.block_network;
  if (block !== undefined) {
    if (typeof block !== "boolean") fail("block_network", "must be true or false");
    options.blockNetwork = block as boolean;
  }
  const cwd = str("cwd");
  if (cwd !== undefined) {
    if (!cwd.startsWith("/")) fail("cwd", "must be an absolute path");
    options.cwd = cwd;
  }
  const environment = str("environment");
  if (environment !== undefined) options.environment = environment;
  const env = section.env;
  if (env !== undefined && env !== null) {
    if (!isRecord(env)) fail("env", "must be a mapping of variable names to values");
    const vars: Record<string, string> = {};
    for (const [name, value] of Object.entries(env as Record<string, unknown>)) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) fail("env", `has an invalid variable name: ${JSON.stringify(name)}`);
      if (value === null || typeof value === "object") fail(`env.${name}`, "must be a string, number or boolean");
      vars[name] = String(value);
    }
    options.env = vars;
  }
  return options;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
