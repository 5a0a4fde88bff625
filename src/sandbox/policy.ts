/**
 * The local backend's sandbox settings, `terminal.local.sandbox` in
 * config.yaml (docs/sandbox.md):
 *
 *     terminal:
 *       local:
 *         sandbox: workspace-write          # off (default) | read-only | workspace-write
 *
 *     terminal:
 *       local:
 *         sandbox:
 *           mode: workspace-write
 *           network: false                  # default false: no network at all
 *           writable_roots: [~/.cache/pip]  # more directories writable besides the workspace
 *
 * Unknown keys are errors, as in every backend section: a misspelt isolation
 * setting must not pass silently.
 */

import path from "node:path";

import { expandTilde } from "../config/home.js";
import { getConfig } from "../config/load-config.js";
import { SandboxConfigError } from "./errors.js";

export const SANDBOX_MODES = ["off", "read-only", "workspace-write"] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

export interface SandboxPolicy {
  /**
   * `off`: no sandbox. `read-only`: nothing on the machine is writable but the
   * task's own state and private /tmp. `workspace-write`: the workspace (the
   * task's starting directory) and `writableRoots` are writable too.
   */
  mode: SandboxMode;
  /** Whether commands may use the network (any network: there is no allowlist). */
  network: boolean;
  /** Absolute directories writable in `workspace-write` mode besides the workspace. */
  writableRoots: string[];
}

export const SANDBOX_OFF: Readonly<SandboxPolicy> = Object.freeze({ mode: "off", network: true, writableRoots: [] });

const LOCAL_KEYS = ["sandbox"] as const;
const SANDBOX_KEYS = ["mode", "network", "writable_roots"] as const;

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function parseMode(value: unknown, where: string): SandboxMode {
  // YAML 1.1 readers turn a bare `off` into false; take it as meant.
  if (value === false) return "off";
  if (typeof value === "string" && (SANDBOX_MODES as readonly string[]).includes(value)) return value as SandboxMode;
  throw new SandboxConfigError(`${where} must be one of ${SANDBOX_MODES.join(", ")} (got ${JSON.stringify(value)})`);
}

function parseRoots(value: unknown, where: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new SandboxConfigError(`${where} must be a list of absolute directories`);
  return value.map((item, index) => {
    if (typeof item !== "string" || item.trim() === "") throw new SandboxConfigError(`${where}[${index}] must be a non-empty string`);
    const expanded = expandTilde(item.trim());
    // A relative root would mean something different in every task; say so rather than guess.
    if (!path.isAbsolute(expanded)) throw new SandboxConfigError(`${where}[${index}] must be an absolute path or start with ~ (got ${JSON.stringify(item)})`);
    return path.resolve(expanded);
  });
}

/** The policy a `terminal.local.sandbox` value describes (a mode, or a mapping). Throws `SandboxConfigError`. */
export function parseSandboxSetting(value: unknown, where = "terminal.local.sandbox"): SandboxPolicy {
  if (value === undefined || value === null) return { ...SANDBOX_OFF, writableRoots: [] };
  if (!isMapping(value)) {
    const mode = parseMode(value, where);
    return { mode, network: mode === "off", writableRoots: [] };
  }
  const fields: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    const name = snake(key);
    if (!(SANDBOX_KEYS as readonly string[]).includes(name)) {
      throw new SandboxConfigError(`${where}.${key} is not a known option (known: ${SANDBOX_KEYS.join(", ")})`);
    }
    fields[name] = field;
  }
  if (fields.mode === undefined) throw new SandboxConfigError(`${where}.mode is required (${SANDBOX_MODES.join(", ")})`);
  const mode = parseMode(fields.mode, `${where}.mode`);
  if (fields.network !== undefined && typeof fields.network !== "boolean") {
    throw new SandboxConfigError(`${where}.network must be true or false (got ${JSON.stringify(fields.network)})`);
  }
  return {
    mode,
    network: mode === "off" ? true : fields.network === true,
    writableRoots: parseRoots(fields.writable_roots, `${where}.writable_roots`),
  };
}

/** The policy of a `terminal.local` section as written. Throws `SandboxConfigError` on an unknown key or a bad value. */
export function sandboxPolicyFromSection(section: unknown): SandboxPolicy {
  if (section === undefined || section === null) return parseSandboxSetting(undefined);
  if (!isMapping(section)) throw new SandboxConfigError("terminal.local must be a mapping");
  for (const key of Object.keys(section)) {
    if (!(LOCAL_KEYS as readonly string[]).includes(snake(key))) {
      throw new SandboxConfigError(`terminal.local.${key} is not a known option (known: ${LOCAL_KEYS.join(", ")})`);
    }
  }
  return parseSandboxSetting(section.sandbox);
}

/**
 * The policy config.yaml sets. A config file that cannot be read at all is
 * reported where the runtime loads it; it throws here too, since a sandbox
 * that may have been configured must not be guessed off.
 */
export function configuredSandboxPolicy(): SandboxPolicy {
  let document: unknown;
  try {
    document = getConfig().document;
  } catch (err) {
    throw new SandboxConfigError(`config.yaml cannot be read, so whether the local sandbox is on is unknown: ${(err as Error).message}`);
  }
  const terminal = isMapping(document) ? document.terminal : undefined;
  return sandboxPolicyFromSection(isMapping(terminal) ? terminal.local : undefined);
}

/** One line for messages: `workspace-write, network off, 1 extra writable root`. */
export function describePolicy(policy: SandboxPolicy): string {
  if (policy.mode === "off") return "off";
  const roots = policy.mode === "workspace-write" && policy.writableRoots.length > 0 ? `, extra writable roots: ${policy.writableRoots.join(", ")}` : "";
  return `${policy.mode}, network ${policy.network ? "on" : "off"}${roots}`;
}
