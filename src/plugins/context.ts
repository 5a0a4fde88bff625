/**
 * The object a plugin's `register(ctx)` receives. It records every tool and hook the plugin registers,
 * so that the loader can roll them ALL back when loading fails, and the manager can remove them when the
 * plugin is disabled or reloaded. A tool that replaced another (a built-in the operator let it override)
 * is remembered with what it replaced, which is put back on rollback.
 */

import type { ToolRegistry } from "../registry/tool-registry.js";
import type { Logger, RegisterInput, ToolEntry } from "../registry/types.js";
import { PluginLoadError, PluginOwnershipError, PluginRegistrationError, PluginToolOverrideError } from "./errors.js";
import type { HookRecord, PluginHooks } from "./plugin-hooks.js";
import { VALID_HOOKS, type PluginManifest } from "./types.js";

export interface PluginContext {
  /** The plugin's key (`name`, `category/name` or the npm package name). */
  readonly key: string;
  readonly manifest: PluginManifest;
  /** The plugin's folder. */
  readonly dir: string;
  /** Messages prefixed with the plugin's key. */
  readonly logger: Logger;
  /**
   * Registers a tool: the options of `registry.register`, with `source` stamped `{kind: "plugin", id: key}`.
   * Replacing a built-in needs `override: true` and the operator's `plugins.entries.<key>.allow_tool_override: true`;
   * otherwise, or when the registry refuses, it throws (and the load fails).
   */
  registerTool(options: RegisterInput): ToolEntry;
  /** Removes one of this plugin's own tools; any other name throws `PluginOwnershipError`. */
  deregisterTool(name: string): boolean;
  /** Registers a hook; an unknown name is stored with a warning listing the valid ones. */
  registerHook(name: string, fn: (event: never) => unknown): void;
}

interface OwnedTool {
  entry: ToolEntry;
  replaced?: ToolEntry;
}

export interface ContextOptions {
  key: string;
  manifest: PluginManifest;
  dir: string;
  registry: ToolRegistry;
  hooks: PluginHooks;
  logger: Logger;
  /** `plugins.entries.<key>.allow_tool_override`. */
  allowToolOverride: boolean;
  /** Whether another plugin is still loaded: its tool, replaced by this one, comes back on rollback only then. */
  isLoaded?: ((key: string) => boolean) | undefined;
}

/** The recording context and its owner-side controls. */
export class RecordingContext {
  readonly tools = new Map<string, OwnedTool>();
  readonly hookRecords: HookRecord[] = [];
  private revoked: string | undefined;
  readonly context: PluginContext;

  constructor(private readonly options: ContextOptions) {
    const { key, manifest, dir } = options;
    const prefix = `plugin "${key}": `;
    const logger: Logger = {
      debug: (m) => options.logger.debug(prefix + m),
      info: (m) => options.logger.info(prefix + m),
      warn: (m) => options.logger.warn(prefix + m),
      error: (m) => options.logger.error(prefix + m),
    };
    this.context = Object.freeze({
      key,
      manifest,
      dir,
      logger,
      registerTool: (input: RegisterInput) => this.registerTool(input),
      deregisterTool: (name: string) => this.deregisterTool(name),
      registerHook: (name: string, fn: (event: never) => unknown) => this.registerHook(name, fn),
    });
  }

  get toolNames(): string[] {
    return [...this.tools.keys()];
  }

  get hookNames(): string[] {
    return this.hookRecords.map((r) => r.name);
  }

  /** Removes every tool and hook (putting back what the tools replaced); later calls on the context throw `why`. */
  rollback(why: string): void {
    this.revoked = why;
    const { registry, hooks } = this.options;
    for (const [name, owned] of [...this.tools.entries()].reverse()) {
      // Only what is still ours: a later registration (user code) over our tool is left alone.
      if (registry.get(name) === owned.entry) this.restore(name, owned);
    }
    this.tools.clear();
    for (const record of this.hookRecords) hooks.remove(record);
    this.hookRecords.length = 0;
  }

  private check(): void {
    if (this.revoked !== undefined) throw new PluginLoadError(this.options.key, `plugin "${this.options.key}" is no longer loaded (${this.revoked})`);
  }

  private registerTool(input: RegisterInput): ToolEntry {
    this.check();
    const { key, registry } = this.options;
    if (input === null || typeof input !== "object") throw new PluginRegistrationError(key, `plugin "${key}": registerTool needs an options object`);
    const name = (input as { name?: unknown }).name;
    const existing = typeof name === "string" ? registry.get(name) : undefined;
    if (existing?.source.kind === "builtin") {
      if (!this.options.allowToolOverride) {
        throw new PluginToolOverrideError(
          key,
          name as string,
          `plugin "${key}" may not replace built-in tool "${name as string}": set plugins.entries.${key}.allow_tool_override: true in config.yaml (and pass override: true)`,
        );
      }
      if (input.override !== true) {
        throw new PluginToolOverrideError(key, name as string, `plugin "${key}" tried to replace built-in tool "${name as string}" without override: true`);
      }
    }
    let refusal: string | undefined;
    const entry = registry.register({ ...input, source: { kind: "plugin", id: key } } as RegisterInput, {
      pluginOverrideAllowed: this.options.allowToolOverride,
      onRefused: (reason) => (refusal = reason),
    });
    if (entry === undefined) throw new PluginRegistrationError(key, `plugin "${key}": ${refusal ?? "the registry refused the tool"}`);
    const earlier = this.tools.get(entry.name);
    // Re-registering its own tool keeps what the first registration replaced.
    const replaced = earlier !== undefined ? earlier.replaced : existing;
    this.tools.set(entry.name, replaced === undefined ? { entry } : { entry, replaced });
    return entry;
  }

  private deregisterTool(name: string): boolean {
    this.check();
    const owned = this.tools.get(name);
    if (owned === undefined) throw new PluginOwnershipError(this.options.key, name);
    const { registry } = this.options;
    this.tools.delete(name);
    if (registry.get(name) !== owned.entry) return false;
    this.restore(name, owned);
    return true;
  }

  /** Puts back what the tool replaced (a built-in, user code's tool, a plugin's that is still loaded), else removes it. */
  private restore(name: string, owned: OwnedTool): void {
    const { registry, isLoaded } = this.options;
    const replaced = owned.replaced;
    const gone = replaced?.source.kind === "plugin" && !(isLoaded?.(replaced.source.id) ?? false);
    if (replaced !== undefined && !gone) registry.reinstate(replaced);
    else registry.deregister(name);
  }

  private registerHook(name: string, fn: (event: never) => unknown): void {
    this.check();
    if (typeof name !== "string" || name === "") throw new TypeError(`plugin "${this.options.key}": registerHook needs a hook name`);
    if (typeof fn !== "function") throw new TypeError(`plugin "${this.options.key}": the ${name} hook must be a function`);
    if (!(VALID_HOOKS as readonly string[]).includes(name)) {
      this.options.logger.warn(`plugin "${this.options.key}" registered an unknown hook "${name}" (stored, never called); valid hooks: ${VALID_HOOKS.join(", ")}`);
    }
    this.hookRecords.push(this.options.hooks.add(this.options.key, name, fn));
  }
}
