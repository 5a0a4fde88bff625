/**
 * delegate_task's limits and the children's endpoint, from config.yaml's `delegation` section (as
 * loaded: camelCase, defaults filled) or a library caller's partial one. The model chooses none of
 * these: not the budget, not the depth, not the endpoint.
 */

import type { DelegationConfig } from "../../config/config-types.js";
import type { EnvVars } from "../../util/env-vars.js";

export interface DelegationSettings {
  /** A child's `maxTurns` (default 50). */
  maxIterations: number;
  /** Most tasks per call, all run at once (default 3). */
  maxConcurrentChildren: number;
  /** Levels of delegation; an agent at `depth >= maxSpawnDepth` cannot delegate (default 1). */
  maxSpawnDepth: number;
  orchestratorEnabled: boolean;
  subagentAutoApprove: boolean;
  /** A child's time limit; undefined: none. */
  childTimeoutMs: number | undefined;
  /** Characters of a child's answer handed back (default 24,000). */
  maxSummaryChars: number;
}

export const DELEGATION_DEFAULTS: Readonly<DelegationSettings> = Object.freeze({
  maxIterations: 50,
  maxConcurrentChildren: 3,
  maxSpawnDepth: 1,
  orchestratorEnabled: true,
  subagentAutoApprove: false,
  childTimeoutMs: undefined,
  maxSummaryChars: 24_000,
});

/** The environment variable the original reads when the config does not set `max_concurrent_children`. */
export const MAX_CHILDREN_ENV = "DELEGATION_MAX_CONCURRENT_CHILDREN";

const positiveInt = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isInteger(value) && value >= 1 ? value : undefined;

/**
 * The settings of `section` (config.yaml's `delegation`, or part of one): absent or invalid values
 * take the defaults; `max_concurrent_children` falls back to `DELEGATION_MAX_CONCURRENT_CHILDREN`.
 * Config validation enforces the file's floors (a 30 s timeout at least); a library caller may go lower.
 */
export function delegationSettings(section: Partial<DelegationConfig> | undefined = {}, env: EnvVars = process.env): DelegationSettings {
  const fromEnv = env[MAX_CHILDREN_ENV];
  const envChildren = fromEnv !== undefined && /^\s*\d+\s*$/.test(fromEnv) ? positiveInt(Number(fromEnv)) : undefined;
  const timeout = section.childTimeoutSeconds;
  return {
    maxIterations: positiveInt(section.maxIterations) ?? DELEGATION_DEFAULTS.maxIterations,
    maxConcurrentChildren: positiveInt(section.maxConcurrentChildren) ?? envChildren ?? DELEGATION_DEFAULTS.maxConcurrentChildren,
    maxSpawnDepth: positiveInt(section.maxSpawnDepth) ?? DELEGATION_DEFAULTS.maxSpawnDepth,
    orchestratorEnabled: section.orchestratorEnabled !== false,
    subagentAutoApprove: section.subagentAutoApprove === true,
    childTimeoutMs: typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0 ? Math.round(timeout * 1000) : undefined,
    maxSummaryChars: positiveInt(section.maxSummaryChars) ?? DELEGATION_DEFAULTS.maxSummaryChars,
  };
}

export interface ChildEndpoint {
  model: string;
  baseURL: string;
  apiKey: string | undefined;
}

/**
 * The children's endpoint: `delegation.model` / `base_url` / `api_key_env`, else the parent's. The
 * parent's key goes only to the parent's endpoint: with another `base_url` and no `api_key_env`, the
 * children send no key (a key is never handed to a host it was not issued for).
 */
export function childEndpoint(section: Partial<DelegationConfig> | undefined, parent: ChildEndpoint, env: EnvVars = process.env): ChildEndpoint {
  const baseURL = section?.baseUrl ?? parent.baseURL;
  const sameHost = baseURL.replace(/\/+$/, "") === parent.baseURL.replace(/\/+$/, "");
  const apiKey = section?.apiKeyEnv !== undefined ? env[section.apiKeyEnv] : sameHost ? parent.apiKey : undefined;
  return { model: section?.model ?? parent.model, baseURL, apiKey };
}
