/**
 * Finding plugins. Three places, scanned in this order; a later one wins on the same key:
 *
 *   user     `$MIBYAN_HOME/plugins/<name>/plugin.yaml`, or one category level `<category>/<name>/plugin.yaml`
 *            (key `category/name`); anything deeper is ignored
 *   project  `<cwd>/.mibyan/plugins/`, same layout, only when `MIBYAN_ENABLE_PROJECT_PLUGINS` is truthy
 *   npm      packages in `$MIBYAN_HOME/node_modules` (and `@scope/` folders) whose `package.json` has
 *            `"mibyan": {"plugin": "<entry>"}`; key = the package's folder name (`name` or `@scope/name`)
 *
 * Nothing is imported here. Folder names that could not be a key (`plugins enable` accepts the same shapes)
 * are skipped with a warning; manifests are read as bounded regular files.
 */

import { readdirSync, realpathSync, statSync, type Dirent } from "node:fs";
import path from "node:path";

import { readRegularFileSync, RegularFileError } from "../util/read-regular-file.js";
import type { Logger } from "../registry/types.js";
import { PluginManifestError } from "./errors.js";
import { checkEntry, printable, readManifest } from "./manifest.js";
import { PLUGIN_KINDS, type DiscoveredPlugin, type PluginKind, type PluginManifest, type PluginSource, type RequiredEnv } from "./types.js";

const MANIFEST_NAMES = ["plugin.yaml", "plugin.yml"];
const MAX_PACKAGE_JSON_BYTES = 1024 * 1024;
/** At most this many folders are looked at per place: a folder of a million entries is not a plugin collection. */
const MAX_ENTRIES = 1_000;
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export interface DiscoverOptions {
  home: string;
  cwd: string;
  /** Scan `<cwd>/.mibyan/plugins` (from `MIBYAN_ENABLE_PROJECT_PLUGINS`). */
  project: boolean;
  logger: Logger;
}

/** Every plugin found, one per key (the later source's), sorted by key. */
export function discoverPlugins(options: DiscoverOptions): DiscoveredPlugin[] {
  const found = new Map<string, DiscoveredPlugin>();
  const add = (plugin: DiscoveredPlugin): void => {
    const earlier = found.get(plugin.key);
    if (earlier !== undefined) options.logger.info(`plugin "${plugin.key}" from ${plugin.source} (${plugin.dir}) replaces the one from ${earlier.source} (${earlier.dir})`);
    found.set(plugin.key, plugin);
  };
  for (const p of scanFolderTree(path.join(options.home, "plugins"), "user", options.logger)) add(p);
  if (options.project) for (const p of scanFolderTree(path.join(options.cwd, ".mibyan", "plugins"), "project", options.logger)) add(p);
  for (const p of scanNodeModules(path.join(options.home, "node_modules"), options.logger)) add(p);
  return [...found.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function listDirs(dir: string, logger: Logger): Dirent[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") logger.warn(`plugins: cannot read ${dir}: ${(err as Error).message}`);
    return [];
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (entries.length > MAX_ENTRIES) {
    logger.warn(`plugins: ${dir} has ${entries.length} entries; only the first ${MAX_ENTRIES} are looked at`);
    entries = entries.slice(0, MAX_ENTRIES);
  }
  // A symlinked plugin folder is allowed (a checkout linked in); it is followed once, here.
  return entries.filter((e) => e.isDirectory() || (e.isSymbolicLink() && isDir(path.join(dir, e.name))));
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function manifestIn(dir: string): string | undefined {
  for (const name of MANIFEST_NAMES) {
    const file = path.join(dir, name);
    try {
      statSync(file);
      return file;
    } catch {
      // next name
    }
  }
  return undefined;
}

function scanFolderTree(root: string, source: PluginSource, logger: Logger): DiscoveredPlugin[] {
  const out: DiscoveredPlugin[] = [];
  for (const first of listDirs(root, logger)) {
    if (!SEGMENT.test(first.name)) {
      logger.warn(`plugins: skipping ${path.join(root, first.name)}: a plugin folder name must match ${SEGMENT.source}`);
      continue;
    }
    const dir = path.join(root, first.name);
    const manifest = manifestIn(dir);
    if (manifest !== undefined) {
      out.push(folderPlugin(first.name, first.name, dir, manifest, source));
      continue;
    }
    // A category: one level of plugins below it; deeper folders are never looked at.
    for (const second of listDirs(dir, logger)) {
      if (!SEGMENT.test(second.name)) {
        logger.warn(`plugins: skipping ${path.join(dir, second.name)}: a plugin folder name must match ${SEGMENT.source}`);
        continue;
      }
      const inner = path.join(dir, second.name);
      const innerManifest = manifestIn(inner);
      if (innerManifest !== undefined) out.push(folderPlugin(`${first.name}/${second.name}`, second.name, inner, innerManifest, source));
    }
  }
  return out;
}

function folderPlugin(key: string, folderName: string, dir: string, manifestFile: string, source: PluginSource): DiscoveredPlugin {
  let real = dir;
  try {
    real = realpathSync(dir);
  } catch {
    // keep the path as found; reading the manifest will say what is wrong
  }
  try {
    return { key, source, dir: real, manifest: readManifest(manifestFile, folderName) };
  } catch (err) {
    return { key, source, dir: real, error: err instanceof Error ? err.message : String(err) };
  }
}

function scanNodeModules(root: string, logger: Logger): DiscoveredPlugin[] {
  const out: DiscoveredPlugin[] = [];
  for (const first of listDirs(root, logger)) {
    if (first.name.startsWith(".")) continue;
    if (first.name.startsWith("@")) {
      if (!SEGMENT.test(first.name.slice(1))) continue;
      for (const second of listDirs(path.join(root, first.name), logger)) {
        if (!SEGMENT.test(second.name)) continue;
        const plugin = npmPlugin(`${first.name}/${second.name}`, path.join(root, first.name, second.name));
        if (plugin !== undefined) out.push(plugin);
      }
    } else if (SEGMENT.test(first.name)) {
      const plugin = npmPlugin(first.name, path.join(root, first.name));
      if (plugin !== undefined) out.push(plugin);
    }
  }
  return out;
}

/** A package with `"mibyan": {"plugin": ...}` in its package.json; undefined for any other package. */
function npmPlugin(key: string, dir: string): DiscoveredPlugin | undefined {
  const file = path.join(dir, "package.json");
  let text: string;
  try {
    text = readRegularFileSync(file, MAX_PACKAGE_JSON_BYTES).text;
  } catch (err) {
    if (err instanceof RegularFileError && err.problem === "missing") return undefined;
    // Unreadable: we cannot tell whether it is a plugin, so it is not one (but say so only if it claims to be).
    return undefined;
  }
  if (!text.includes('"mibyan"')) return undefined;
  let real = dir;
  try {
    real = realpathSync(dir);
  } catch {
    // as found
  }
  try {
    return { key, source: "npm", dir: real, manifest: packageManifest(text, file, key) };
  } catch (err) {
    return { key, source: "npm", dir: real, error: err instanceof Error ? err.message : String(err) };
  }
}

function packageManifest(text: string, file: string, key: string): PluginManifest | undefined {
  let pkg: unknown;
  try {
    pkg = JSON.parse(text);
  } catch (err) {
    throw new PluginManifestError(`invalid JSON: ${(err as Error).message}`, file);
  }
  if (pkg === null || typeof pkg !== "object" || Array.isArray(pkg)) throw new PluginManifestError("package.json must be an object", file);
  const p = pkg as Record<string, unknown>;
  const field = p.mibyan;
  if (field === null || typeof field !== "object" || Array.isArray(field)) throw new PluginManifestError(`"mibyan" must be an object like {"plugin": "./index.js"}`, file);
  const m = field as Record<string, unknown>;
  if (typeof m.plugin !== "string") throw new PluginManifestError(`"mibyan.plugin" must be the path of the plugin's entry module (got ${JSON.stringify(m.plugin) ?? "nothing"})`, file);
  const problem = checkEntry(m.plugin);
  if (problem !== undefined) throw new PluginManifestError(`"mibyan.plugin" ${JSON.stringify(m.plugin)} ${problem}`, file);
  const warnings: string[] = [];
  if (typeof p.name === "string" && p.name !== key) warnings.push(`${file}: package name ${JSON.stringify(p.name)} differs from its folder; the key is ${JSON.stringify(key)}`);
  let kind: PluginKind = "standalone";
  if (m.kind !== undefined) {
    if (typeof m.kind === "string" && (PLUGIN_KINDS as readonly string[]).includes(m.kind)) kind = m.kind as PluginKind;
    else warnings.push(`${file}: unknown kind ${JSON.stringify(m.kind)}; treated as standalone`);
  }
  const requiresEnv: RequiredEnv[] = [];
  if (m.requires_env !== undefined) {
    if (!Array.isArray(m.requires_env) || !m.requires_env.every((n) => typeof n === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(n))) {
      throw new PluginManifestError(`"mibyan.requires_env" must be a list of environment variable names`, file);
    }
    for (const name of m.requires_env as string[]) requiresEnv.push({ name });
  }
  return {
    name: typeof p.name === "string" ? printable(p.name, 200) : key,
    version: typeof p.version === "string" ? printable(p.version, 100) : "",
    description: typeof p.description === "string" ? printable(p.description, 2_000) : "",
    kind,
    requiresEnv,
    entry: m.plugin,
    warnings,
  };
}
