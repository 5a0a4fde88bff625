/**
 * The gate's settings: the typed `approvals` section of `config.yaml` with defaults
 * filled in and the smart reviewer's endpoint completed from the environment.
 */

import type { ApprovalsConfig } from "../../config/config-types.js";
import type { DenyRule } from "./deny-rules.js";
import type { ApprovalMode } from "./types.js";
import type { EnvVars } from "../../util/env-vars.js";

export interface SmartSettings {
  /** OpenAI-compatible base URL; the `openai` client's default (api.openai.com) when absent. */
  baseUrl?: string;
  model?: string;
  apiKey?: string;
  /** Reviewer time limit (ms); a timeout escalates. */
  timeoutMs: number;
  /** Consecutive reviewer denials in one session after which smart review stops for it. */
  breakerThreshold: number;
}

export interface ApprovalSettings {
  mode: ApprovalMode;
  deny: DenyRule[];
  /** What a non-interactive run does with a command that needs approval. */
  nonInteractive: "deny" | "allow";
  /** Terminal prompt time limit (ms). */
  timeoutMs: number;
  /** Gateway pending-approval lifetime (ms). */
  gatewayTimeoutMs: number;
  isolatedBackendsNeedApproval: boolean;
  smart: SmartSettings;
}

export const DEFAULT_PROMPT_TIMEOUT_MS = 60_000;
export const DEFAULT_GATEWAY_TIMEOUT_MS = 300_000;
export const DEFAULT_SMART_TIMEOUT_MS = 20_000;
export const DEFAULT_BREAKER_THRESHOLD = 3;

/** Environment variables that fill in what `approvals.smart` leaves out. */
export const SMART_ENV = {
  baseUrl: "MIBYAN_APPROVALS_SMART_BASE_URL",
  model: "MIBYAN_APPROVALS_SMART_MODEL",
  apiKey: "MIBYAN_APPROVALS_SMART_API_KEY",
} as const;

export function defaultApprovalSettings(): ApprovalSettings {
  return {
    mode: "manual",
    deny: [],
    nonInteractive: "deny",
    timeoutMs: DEFAULT_PROMPT_TIMEOUT_MS,
    gatewayTimeoutMs: DEFAULT_GATEWAY_TIMEOUT_MS,
    isolatedBackendsNeedApproval: false,
    smart: { timeoutMs: DEFAULT_SMART_TIMEOUT_MS, breakerThreshold: DEFAULT_BREAKER_THRESHOLD },
  };
}

const nonEmpty = (value: string | undefined): string | undefined =>
  value !== undefined && value.trim() !== "" ? value.trim() : undefined;

/**
 * Settings from the typed `approvals` section (absent keys take defaults). The smart
 * reviewer's base URL and model come from the config, else `MIBYAN_APPROVALS_SMART_*`; its
 * key from the variable `smart.api_key_env` names (only that one when it is set), else
 * `MIBYAN_APPROVALS_SMART_API_KEY`, else `OPENAI_API_KEY`.
 */
export function approvalSettingsFromConfig(
  config: Partial<ApprovalsConfig> | undefined,
  env: EnvVars = process.env,
): ApprovalSettings {
  const settings = defaultApprovalSettings();
  if (!config) config = {};
  if (config.mode) settings.mode = config.mode;
  if (config.nonInteractive) settings.nonInteractive = config.nonInteractive;
  if (config.timeoutSeconds !== undefined) settings.timeoutMs = config.timeoutSeconds * 1000;
  if (config.gatewayTimeoutSeconds !== undefined) settings.gatewayTimeoutMs = config.gatewayTimeoutSeconds * 1000;
  if (config.isolatedBackendsNeedApproval !== undefined) settings.isolatedBackendsNeedApproval = config.isolatedBackendsNeedApproval;
  settings.deny = (config.deny ?? []).map((entry) => {
    const rule: DenyRule = {};
    if (entry.rule) rule.rule = entry.rule;
    if (entry.prefix) rule.prefix = entry.prefix;
    if (entry.category) rule.category = entry.category;
    if (entry.backend) rule.backend = entry.backend;
    if (entry.reason) rule.reason = entry.reason;
    return rule;
  });

  const smart = config.smart ?? {};
  const baseUrl = smart.baseUrl ?? nonEmpty(env[SMART_ENV.baseUrl]);
  const model = smart.model ?? nonEmpty(env[SMART_ENV.model]);
  const apiKey = smart.apiKeyEnv
    ? nonEmpty(env[smart.apiKeyEnv])
    : (nonEmpty(env[SMART_ENV.apiKey]) ?? nonEmpty(env.OPENAI_API_KEY));
  if (baseUrl) settings.smart.baseUrl = baseUrl;
  if (model) settings.smart.model = model;
  if (apiKey) settings.smart.apiKey = apiKey;
  if (smart.timeoutSeconds !== undefined) settings.smart.timeoutMs = smart.timeoutSeconds * 1000;
  if (smart.breakerThreshold !== undefined) settings.smart.breakerThreshold = smart.breakerThreshold;
  return settings;
}
