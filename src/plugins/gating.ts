/**
 * Which discovered plugins load. Nothing loads unless the operator named it:
 *
 *   1. `MIBYAN_SAFE_MODE` truthy      → nothing is discovered or loaded (manager.ts)
 *   2. a manifest that cannot be read → `failed` with its located error
 *   3. `plugins.disabled` lists the key, or `plugins.entries.<key>.enabled: false` → `disabled` (wins over 4)
 *   4. `plugins.enabled` lists the key, or `plugins.entries.<key>.enabled: true` → enabled
 *   5. anything else                  → `not enabled`
 *   6. an enabled plugin whose `requires_env` variables are not all set (non-empty) → `disabled`, saying which
 *
 * Keys are matched exactly, never against the manifest's `name`: a manifest is written by whoever wrote
 * the plugin folder, and must not be able to borrow the name of a plugin the operator enabled.
 */

import type { PluginsConfig } from "../config/config-types.js";
import { isTruthyEnv, type EnvVars } from "../util/env-vars.js";
import type { DiscoveredPlugin, PluginState } from "./types.js";

export function projectPluginsEnabled(env: EnvVars): boolean {
  return isTruthyEnv(env.MIBYAN_ENABLE_PROJECT_PLUGINS);
}

export interface GateVerdict {
  state: PluginState;
  /** Why the plugin is failed, or why an enabled-in-config plugin will not load. */
  reason?: string;
  /** True only when the plugin should be imported. */
  load: boolean;
}

export function gatePlugin(plugin: DiscoveredPlugin, config: PluginsConfig, env: EnvVars): GateVerdict {
  if (plugin.error !== undefined || plugin.manifest === undefined) {
    return { state: "failed", reason: plugin.error ?? "no manifest", load: false };
  }
  const entry = Object.hasOwn(config.entries, plugin.key) ? config.entries[plugin.key] : undefined;
  if ((config.disabled ?? []).includes(plugin.key) || entry?.enabled === false) {
    return { state: "disabled", load: false };
  }
  const enabled = (config.enabled ?? []).includes(plugin.key) || entry?.enabled === true;
  if (!enabled) {
    return { state: "not enabled", reason: `not enabled in config (run \`mibyan plugins enable ${plugin.key}\` to activate)`, load: false };
  }
  const missing = plugin.manifest.requiresEnv.filter((spec) => !env[spec.name]).map((spec) => spec.name);
  if (missing.length > 0) {
    return { state: "disabled", reason: `missing environment variable${missing.length > 1 ? "s" : ""}: ${missing.join(", ")} (requires_env)`, load: false };
  }
  return { state: "enabled", load: true };
}
