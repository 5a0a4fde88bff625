/** Plugins: discovery, gating, loading with rollback, hooks, shell hooks (docs/plugins.md). */

export { loadPlugins, PluginManager, type LoadPluginsOptions, type ReloadOptions, type SessionInfo } from "./manager.js";
export type { PluginContext } from "./context.js";
export { PluginLoadError, PluginManifestError, PluginOwnershipError, PluginRegistrationError, PluginToolOverrideError } from "./errors.js";
export { isTruthyEnv, isSafeMode } from "../util/env-vars.js";
export { PLUGIN_APPROVAL_RULE, type ActionApprovalGate } from "./approval.js";
export { SHELL_HOOK_ENV_KEYS, SHELL_HOOK_MAX_TIMEOUT_S, SHELL_HOOK_DEFAULT_TIMEOUT_S } from "./shell-hooks.js";
export {
  PLUGIN_KINDS,
  VALID_HOOKS,
  type HookName,
  type PluginKind,
  type PluginManifest,
  type PluginSource,
  type PluginState,
  type PluginStatus,
  type PostToolCallEvent,
  type PreToolCallDirective,
  type RequiredEnv,
  type SessionEvent,
  type SubagentHookEvent,
  type SubagentStopHookEvent,
  type ToolCallEvent,
  type ToolCallStatus,
  type TransformToolResultEvent,
} from "./types.js";
