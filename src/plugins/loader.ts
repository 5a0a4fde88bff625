/**
 * Loading one plugin: resolve its entry inside its folder, import it (a cache-busting `?v=` query so a
 * reload imports a changed file anew), call `register(ctx)`, and on ANY failure roll back everything it
 * registered. Failures: a throw at import (syntax error, missing dependency), a throw in `register`, a
 * returned Promise that rejects, `process.exit` called during the load, a load that does not settle within
 * the time limit, no `register` export.
 *
 * `process.exit` is replaced by a function that throws for the duration of the load and restored after it,
 * even on failure. This guards against accidents (a plugin written as a script), not against hostile code:
 * an enabled plugin runs in this process with its rights, and can keep a reference to the real
 * `process.exit`, call it later, or do anything else the process can. Isolation would need a worker or a
 * child process (docs/plugins.md).
 */

import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

import type { ToolRegistry } from "../registry/tool-registry.js";
import type { Logger } from "../registry/types.js";
import { describeThrown } from "../util/text.js";
import { RecordingContext } from "./context.js";
import { PluginLoadError } from "./errors.js";
import type { PluginHooks } from "./plugin-hooks.js";
import type { DiscoveredPlugin, PluginManifest } from "./types.js";

/** Default limit on importing a plugin and running its `register` (ms). */
export const DEFAULT_LOAD_TIMEOUT_MS = 10_000;

export interface LoadOneOptions {
  registry: ToolRegistry;
  hooks: PluginHooks;
  logger: Logger;
  allowToolOverride: boolean;
  loadTimeoutMs: number;
  isLoaded?: ((key: string) => boolean) | undefined;
}

export interface LoadedPlugin {
  key: string;
  /** The entry's version stamp (mtime and size): a reload re-imports when it changed. */
  stamp: string;
  recording: RecordingContext;
}

/** The real path of the plugin's entry, or why it is refused (missing, not a file, outside the folder). */
export function resolveEntry(dir: string, manifest: PluginManifest): { file: string; stamp: string } {
  const realDir = realpathSync(dir);
  const candidate = path.resolve(realDir, manifest.entry);
  let real: string;
  try {
    real = realpathSync(candidate);
  } catch {
    throw new Error(`entry ${JSON.stringify(manifest.entry)} not found in ${realDir}`);
  }
  const relative = path.relative(realDir, real);
  if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) {
    throw new Error(`entry ${JSON.stringify(manifest.entry)} resolves to ${real}, outside the plugin folder ${realDir}; refused`);
  }
  const stat = statSync(real);
  if (!stat.isFile()) throw new Error(`entry ${JSON.stringify(manifest.entry)} is not a regular file`);
  return { file: real, stamp: `${stat.mtimeMs}-${stat.size}` };
}

/** The stamp of the plugin's entry as it is now, or undefined when it cannot be resolved. */
export function entryStamp(plugin: DiscoveredPlugin): string | undefined {
  if (plugin.manifest === undefined) return undefined;
  try {
    return resolveEntry(plugin.dir, plugin.manifest).stamp;
  } catch {
    return undefined;
  }
}

let exitGuardDepth = 0;
let realExit: typeof process.exit | undefined;

/** Loads one plugin. Resolves with the loaded plugin, or rejects with `PluginLoadError` after rolling back. */
export async function loadPlugin(plugin: DiscoveredPlugin, options: LoadOneOptions): Promise<LoadedPlugin> {
  const { key, manifest } = plugin;
  if (manifest === undefined) throw new PluginLoadError(key, plugin.error ?? "no manifest");
  let resolved: { file: string; stamp: string };
  try {
    resolved = resolveEntry(plugin.dir, manifest);
  } catch (err) {
    throw new PluginLoadError(key, (err as Error).message);
  }
  const recording = new RecordingContext({
    key,
    manifest,
    dir: plugin.dir,
    registry: options.registry,
    hooks: options.hooks,
    logger: options.logger,
    allowToolOverride: options.allowToolOverride,
    isLoaded: options.isLoaded,
  });

  let exitCode: unknown;
  let exitCalled = false;
  // Nested loads (a plugin's register awaiting another load) share one stub; the outermost restores.
  if (exitGuardDepth++ === 0) realExit = process.exit;
  const stub = ((code?: unknown) => {
    exitCalled = true;
    exitCode = code;
    throw new PluginLoadError(key, `plugin called process.exit(${code === undefined ? "" : String(code)}) during load`);
  }) as typeof process.exit;
  process.exit = stub;

  let timer: NodeJS.Timeout | undefined;
  const timeLimit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new PluginLoadError(key, `loading took longer than ${options.loadTimeoutMs} ms (import and register); abandoned`)), options.loadTimeoutMs);
  });
  try {
    const work = (async () => {
      const url = `${pathToFileURL(resolved.file).href}?v=${encodeURIComponent(resolved.stamp)}`;
      const mod = (await import(url)) as Record<string, unknown>;
      const register = registerOf(mod);
      if (register === undefined) throw new PluginLoadError(key, "the entry exports no register() function");
      await register(recording.context);
    })();
    work.catch(() => undefined); // settled later than the time limit: already reported
    await Promise.race([work, timeLimit]);
    if (exitCalled) throw new PluginLoadError(key, `plugin called process.exit(${exitCode === undefined ? "" : String(exitCode)}) during load`);
  } catch (err) {
    const message = exitCalled
      ? `plugin called process.exit(${exitCode === undefined ? "" : String(exitCode)}) during load`
      : err instanceof PluginLoadError
        ? err.message
        : describeThrown(err);
    recording.rollback(`its load failed: ${message}`);
    throw err instanceof PluginLoadError && !exitCalled ? err : new PluginLoadError(key, message, { cause: err });
  } finally {
    clearTimeout(timer);
    if (--exitGuardDepth === 0 && realExit !== undefined) {
      process.exit = realExit;
      realExit = undefined;
    }
  }
  return { key, stamp: resolved.stamp, recording };
}

function registerOf(mod: Record<string, unknown>): ((ctx: unknown) => unknown) | undefined {
  if (typeof mod.register === "function") return mod.register as (ctx: unknown) => unknown;
  const fallback = mod.default as { register?: unknown } | undefined;
  if (fallback !== null && typeof fallback === "object" && typeof fallback.register === "function") {
    return fallback.register.bind(fallback) as (ctx: unknown) => unknown;
  }
  return undefined;
}
