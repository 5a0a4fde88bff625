/** The shapes of the plugin system: manifests, discovered plugins, statuses, hook events and directives. */
import type { CallSurface } from "../registry/types.js";

/** `kind` of plugin.yaml. Informational in mibyan: every kind loads the same way (docs/plugins.md). */
export const PLUGIN_KINDS = ["standalone", "backend", "exclusive", "platform", "model-provider"] as const;
export type PluginKind = (typeof PLUGIN_KINDS)[number];

/** One `requires_env` item: a name, with optional help for the person who sets it. */
export interface RequiredEnv {
  name: string;
  description?: string;
  url?: string;
  secret?: boolean;
}

/** A parsed, checked `plugin.yaml` (or the `mibyan` field of an npm package). */
export interface PluginManifest {
  name: string;
  version: string;
  description: string;
  kind: PluginKind;
  requiresEnv: RequiredEnv[];
  /** The ES module exporting `register(ctx)`, relative to the plugin folder as written (default `index.js`). */
  entry: string;
  author?: string;
  /** Problems that do not stop the plugin (unknown kind, unknown keys), located. */
  warnings: string[];
}

/** Where a plugin was found. Later sources win on the same key: user, then project, then npm. */
export type PluginSource = "user" | "project" | "npm";

/** A plugin found on disk, before gating: its key, folder, manifest (or why it has none). */
export interface DiscoveredPlugin {
  /** `name`, `category/name` or the npm package name (`@scope/name`): what `plugins.enabled` lists. */
  key: string;
  source: PluginSource;
  /** The plugin's folder (real path). */
  dir: string;
  manifest?: PluginManifest;
  /** Set when the manifest could not be read; the plugin is listed as failed and never loaded. */
  error?: string;
}

export type PluginState = "enabled" | "disabled" | "not enabled" | "failed";

/** What `mibyan plugins list` shows for one plugin. */
export interface PluginStatus {
  key: string;
  source: PluginSource;
  dir: string;
  name: string;
  version: string;
  description: string;
  state: PluginState;
  /** Why the plugin is failed, or why an enabled plugin was not loaded (missing `requires_env`, safe mode). */
  error?: string;
  /** The tools it registered (empty unless loaded). */
  tools: string[];
  /** The hook names it registered, once per registration. */
  hooks: string[];
}

/** Every hook name a plugin may register; other names are stored with a warning. */
export const VALID_HOOKS = ["pre_tool_call", "post_tool_call", "transform_tool_result", "on_session_start", "on_session_end", "subagent_start", "subagent_stop"] as const;
export type HookName = (typeof VALID_HOOKS)[number];

/** What every tool-call hook is told about the call. */
export interface ToolCallEvent {
  toolName: string;
  args: Record<string, unknown>;
  taskId?: string | undefined;
  sessionId?: string | undefined;
  toolCallId?: string | undefined;
  /** Where the call came from: `library` (default), `cli`, `mcp`, `ai-sdk`, `openai-agents`, `langchain`, or the embedder's own. */
  surface: CallSurface;
}

/** `ok` for a success, else the error kind of the result (`failed`, `blocked`, `timeout`, `cancelled`, `unavailable`, ...). */
export type ToolCallStatus = "ok" | string;

export interface PostToolCallEvent extends ToolCallEvent {
  /** The model-facing result string (after `transform_tool_result`, before truncation). */
  result: string;
  /** Milliseconds from the start of the plugin hooks to the end of the call, an integer ≥ 0. */
  durationMs: number;
  status: ToolCallStatus;
}

export interface TransformToolResultEvent extends ToolCallEvent {
  result: string;
  status: ToolCallStatus;
}

export interface SessionEvent {
  sessionId: string;
  [key: string]: unknown;
}

/** What `subagent_start` hooks are told: a delegate_task child is starting (docs/delegation.md). */
export interface SubagentHookEvent {
  /** The session that delegated (undefined for a run without one). */
  parentSessionId: string | undefined;
  childSessionId: string;
  childRole: "leaf" | "orchestrator";
  taskIndex: number;
  goal: string;
}

/** What `subagent_stop` hooks are told, once the child has ended (whatever its status). */
export interface SubagentStopHookEvent extends SubagentHookEvent {
  childStatus: "completed" | "failed" | "interrupted" | "error" | "timeout";
  childSummary: string | null;
  durationMs: number;
}

/** `pre_tool_call` may return one of these; other values are ignored. */
export type PreToolCallDirective =
  | { action: "block"; message: string }
  | { action: "approve"; message?: string; ruleKey?: string; rule_key?: string };

export type PreToolCallHook = (event: ToolCallEvent) => unknown;
export type PostToolCallHook = (event: PostToolCallEvent) => unknown;
export type TransformToolResultHook = (event: TransformToolResultEvent) => unknown;
export type SessionHook = (event: SessionEvent) => unknown;
/** Any hook function; its argument depends on the hook name. */
export type PluginHookFn = (event: never) => unknown;
