/**
 * `loadPlugins(options)`: discover, gate and load plugins into a registry, install the hooks, and hand back
 * a `PluginManager` the application (and later `mibyan plugins list|reload`) drives: `plugins` (one status
 * per discovered plugin), `reload()`, `startSession()` / `endSession()`, `close()`.
 *
 * Load plugins after the built-in tools are registered (`discoverBuiltinTools()`): a plugin's override of a
 * built-in is judged against what is registered when it loads.
 */

import type { MibyanConfig } from "../config/config-types.js";
import { mibyanHome } from "../config/home.js";
import { getConfig } from "../config/load-config.js";
import { registry as sharedRegistry } from "../registry/singleton.js";
import type { ToolRegistry } from "../registry/tool-registry.js";
import type { Logger } from "../registry/types.js";
import type { EnvVars } from "../util/env-vars.js";
import { createStderrLogger } from "../util/logger.js";
import type { ActionApprovalGate } from "./approval.js";
import { discoverPlugins } from "./discovery.js";
import { isSafeMode } from "../util/env-vars.js";
import { gatePlugin, projectPluginsEnabled } from "./gating.js";
import { DEFAULT_LOAD_TIMEOUT_MS, entryStamp, loadPlugin, type LoadedPlugin } from "./loader.js";
import { PluginHooks } from "./plugin-hooks.js";
import { ShellHooks } from "./shell-hooks.js";
import type { DiscoveredPlugin, PluginStatus, SubagentHookEvent, SubagentStopHookEvent } from "./types.js";

export interface LoadPluginsOptions {
  /** Where tools go and where the hooks are installed. Default: the shared `registry`. */
  registry?: ToolRegistry | undefined;
  /** The configuration (`plugins`, `hooks`). Default: config.yaml of `home`, read again on every `reload()`. */
  config?: MibyanConfig | undefined;
  /** For `MIBYAN_SAFE_MODE`, `MIBYAN_ENABLE_PROJECT_PLUGINS`, `requires_env` and shell hooks' environment. Default: `process.env`. */
  env?: EnvVars | undefined;
  /** The profile home (`plugins/`, `node_modules/`, config.yaml). Default: `MIBYAN_HOME` or `~/.mibyan`. */
  home?: string | undefined;
  /** The project folder (`.mibyan/plugins/`), and the working directory of shell hooks. Default: `process.cwd()`. */
  cwd?: string | undefined;
  logger?: Logger | undefined;
  /** The approval gate for `approve` directives. Default: the process-wide gate (`getApprovalGate()`), on first use. */
  approval?: ActionApprovalGate | undefined;
  /** Limit on one plugin's import and `register` (ms). Default 10,000. */
  loadTimeoutMs?: number | undefined;
}

export interface ReloadOptions {
  /** Re-import every enabled plugin, changed or not. */
  force?: boolean | undefined;
  /** A new configuration (when the manager was given one rather than reading config.yaml). */
  config?: MibyanConfig | undefined;
}

export interface SessionInfo {
  sessionId: string;
  [key: string]: unknown;
}

export class PluginManager {
  /** One status per discovered plugin, sorted by key; empty in safe mode. */
  plugins: PluginStatus[] = [];
  /** `MIBYAN_SAFE_MODE` was set: no plugin and no shell hook was loaded. */
  readonly safeMode: boolean;
  private readonly loaded = new Map<string, LoadedPlugin>();
  private shell: ShellHooks | undefined;
  private closed = false;
  readonly hooks: PluginHooks;
  private readonly registry: ToolRegistry;
  private readonly env: EnvVars;
  private readonly home: string;
  private readonly cwd: string;
  private readonly logger: Logger;
  private readonly loadTimeoutMs: number;
  private config: MibyanConfig | undefined;

  /** Use `loadPlugins`. */
  constructor(options: LoadPluginsOptions) {
    this.registry = options.registry ?? sharedRegistry;
    this.env = options.env ?? process.env;
    this.home = options.home ?? mibyanHome(this.env);
    this.cwd = options.cwd ?? process.cwd();
    this.logger = options.logger ?? createStderrLogger();
    this.loadTimeoutMs = options.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS;
    this.config = options.config;
    this.safeMode = isSafeMode(this.env);
    const given = options.approval;
    this.hooks = new PluginHooks({
      registry: this.registry,
      logger: this.logger,
      approval: given !== undefined ? () => given : async () => (await import("../approval/default-gate.js")).getApprovalGate(),
    });
  }

  /**
   * Re-reads the configuration and the plugin folders; loads what is newly enabled, re-imports what changed,
   * removes what was disabled. Reloads run one at a time (a second waits for the first).
   */
  reload(options: ReloadOptions = {}): Promise<void> {
    const next = this.reloading.then(() => this.reloadNow(options));
    this.reloading = next.catch(() => undefined);
    return next;
  }

  private reloading: Promise<void> = Promise.resolve();

  private async reloadNow(options: ReloadOptions): Promise<void> {
    if (this.closed) throw new Error("the plugin manager is closed");
    if (options.config !== undefined) this.config = options.config;
    if (this.safeMode) {
      if (this.plugins.length === 0) this.logger.info("plugins: MIBYAN_SAFE_MODE is set; no plugins and no shell hooks are loaded");
      return;
    }
    const config = this.config ?? getConfig(this.home).config;
    const found = discoverPlugins({ home: this.home, cwd: this.cwd, project: projectPluginsEnabled(this.env), logger: this.logger });
    const statuses: PluginStatus[] = [];
    const seen = new Set<string>();
    for (const plugin of found) {
      seen.add(plugin.key);
      for (const warning of plugin.manifest?.warnings ?? []) this.logger.warn(`plugin "${plugin.key}": ${warning}`);
      const verdict = gatePlugin(plugin, config.plugins, this.env);
      const status = statusOf(plugin, verdict.state, verdict.reason);
      const current = this.loaded.get(plugin.key);
      if (!verdict.load) {
        if (current !== undefined) this.unload(current, "it is no longer enabled");
        statuses.push(status);
        continue;
      }
      if (current !== undefined) {
        if (!options.force && entryStamp(plugin) === current.stamp) {
          statuses.push(withRegistrations(status, current));
          continue;
        }
        this.unload(current, "it is being reloaded");
      }
      const entry = Object.hasOwn(config.plugins.entries, plugin.key) ? config.plugins.entries[plugin.key] : undefined;
      try {
        const loaded = await loadPlugin(plugin, {
          registry: this.registry,
          hooks: this.hooks,
          logger: this.logger,
          allowToolOverride: entry?.allowToolOverride === true,
          loadTimeoutMs: this.loadTimeoutMs,
          isLoaded: (key) => this.loaded.has(key),
        });
        this.loaded.set(plugin.key, loaded);
        statuses.push(withRegistrations(status, loaded));
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        this.logger.warn(`plugin "${plugin.key}" failed to load: ${message}`);
        statuses.push({ ...status, state: "failed", error: message });
      }
    }
    for (const key of config.plugins.enabled ?? []) {
      if (!seen.has(key)) this.logger.warn(`plugins.enabled names "${key}", but no plugin with that key was found (run \`mibyan plugins list\`)`);
    }
    // Plugins whose folder is gone.
    for (const [key, current] of this.loaded) if (!seen.has(key)) this.unload(current, "its folder is gone");
    this.plugins = statuses;

    this.shell?.close();
    this.shell = await ShellHooks.compile(config.hooks, { logger: this.logger, cwd: this.cwd, env: this.env });
    this.hooks.setShellHooks(this.shell.size > 0 ? this.shell : undefined);
  }

  /** Runs the `on_session_start` hooks (plugin, then shell). Never rejects; hook failures are logged. */
  async startSession(session: SessionInfo): Promise<void> {
    if (!this.closed) await this.hooks.runSessionHooks("on_session_start", session);
  }

  /** Runs the `on_session_end` hooks. */
  async endSession(session: SessionInfo): Promise<void> {
    if (!this.closed) await this.hooks.runSessionHooks("on_session_end", session);
  }

  /** Runs the `subagent_start` hooks (a delegate_task child starts; docs/delegation.md). Never rejects. */
  async subagentStart(event: SubagentHookEvent): Promise<void> {
    if (!this.closed) await this.hooks.runSubagentHooks("subagent_start", event);
  }

  /** Runs the `subagent_stop` hooks, with the child's status, summary and duration. Never rejects. */
  async subagentStop(event: SubagentStopHookEvent): Promise<void> {
    if (!this.closed) await this.hooks.runSubagentHooks("subagent_stop", event);
  }

  /** Removes every plugin's tools and hooks, uninstalls the hooks from the registry and stops running shell hooks. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Last loaded first, each forgotten before its rollback: a tool one plugin took over from another comes
    // back to the other only while that one is still loaded.
    for (const current of [...this.loaded.values()].reverse()) {
      this.loaded.delete(current.key);
      current.recording.rollback("the plugin manager was closed");
    }
    this.shell?.close();
    this.hooks.clear();
    this.plugins = this.plugins.map((p) => ({ ...p, tools: [], hooks: [] }));
  }

  private unload(current: LoadedPlugin, why: string): void {
    this.loaded.delete(current.key);
    current.recording.rollback(why);
  }
}

function statusOf(plugin: DiscoveredPlugin, state: PluginStatus["state"], reason: string | undefined): PluginStatus {
  const status: PluginStatus = {
    key: plugin.key,
    source: plugin.source,
    dir: plugin.dir,
    name: plugin.manifest?.name ?? plugin.key,
    version: plugin.manifest?.version ?? "",
    description: plugin.manifest?.description ?? "",
    state,
    tools: [],
    hooks: [],
  };
  if (reason !== undefined) status.error = reason;
  return status;
}

function withRegistrations(status: PluginStatus, loaded: LoadedPlugin): PluginStatus {
  return { ...status, tools: loaded.recording.toolNames, hooks: loaded.recording.hookNames };
}

/** Discovers, gates and loads plugins and shell hooks (see `PluginManager`). Never rejects for a plugin's failure. */
export async function loadPlugins(options: LoadPluginsOptions = {}): Promise<PluginManager> {
  const manager = new PluginManager(options);
  await manager.reload();
  return manager;
}
