/**
 * Reading `config.yaml` from the profile home. Synchronous, so the CLI can consult it
 * before anything else starts. The `yaml` package is loaded only when a config file
 * actually exists: a run without one never pays for it.
 */

import { statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

import type { Document, LineCounter, Node as YamlNode } from "yaml";

import { ConfigError, formatLocation, type ConfigErrorKind } from "./config-error.js";
import {
  emptyConfig,
  formatKeyPath,
  validateConfig,
  type ConfigPathSegment,
  type MibyanConfig,
  type SourceLocation,
} from "./config-schema.js";
import { configPath, expandTilde, mibyanHome } from "./home.js";
import { readConfigFile } from "./read-config-file.js";
import type { EnvVars } from "../util/env-vars.js";

export interface LoadConfigOptions {
  /** The profile home; `~` is expanded and relative paths are resolved. Defaults to `mibyanHome(env)`. */
  home?: string;
  /** The environment to read `MIBYAN_HOME` and `HOME` from. Defaults to `process.env`. */
  env?: EnvVars;
}

export interface ParsedConfig {
  config: MibyanConfig;
  /** One line per unknown key or YAML warning: `~/.mibyan/config.yaml:5:3: unknown key terminal.bakend; did you mean terminal.backend?` */
  warnings: string[];
  /** The whole file as plain data (`{}` for an empty file), unknown keys included, for features that read their own sections. */
  document: unknown;
}

export interface LoadedConfig {
  /** Absolute path of `config.yaml` (whether or not it exists). */
  path: string;
  exists: boolean;
  config: MibyanConfig;
  warnings: string[];
  /** Present when the file exists; see `ParsedConfig.document`. */
  document?: unknown;
}

// ---------------------------------------------------------------------------
// The lazily loaded YAML library
// ---------------------------------------------------------------------------

type YamlModule = typeof import("yaml");
let yamlModule: YamlModule | undefined;

function loadYaml(): YamlModule {
  yamlModule ??= createRequire(import.meta.url)("yaml") as YamlModule;
  return yamlModule;
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

/** The text of a mapping key as it becomes a property name. */
function keyText(Y: YamlModule, key: unknown): string {
  if (key === null || key === undefined) return "";
  if (Y.isScalar(key)) return String(key.value);
  return String(key);
}

function position(lineCounter: LineCounter, node: YamlNode | null | undefined): SourceLocation | undefined {
  const offset = node?.range?.[0];
  if (offset === undefined) return undefined;
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

/** The first key that repeats within one mapping, anywhere in the document. */
function findDuplicateKey(
  Y: YamlModule,
  node: unknown,
  path: ConfigPathSegment[],
): { path: ConfigPathSegment[]; key: YamlNode | undefined; first: YamlNode | undefined } | undefined {
  if (Y.isMap(node)) {
    const seen = new Map<string, YamlNode | undefined>();
    for (const pair of node.items) {
      const text = keyText(Y, pair.key);
      const keyNode = Y.isNode(pair.key) ? pair.key : undefined;
      if (seen.has(text)) return { path: [...path, text], key: keyNode, first: seen.get(text) };
      seen.set(text, keyNode);
      const found = findDuplicateKey(Y, pair.value, [...path, text]);
      if (found) return found;
    }
  } else if (Y.isSeq(node)) {
    for (const [index, item] of node.items.entries()) {
      const found = findDuplicateKey(Y, item, [...path, index]);
      if (found) return found;
    }
  }
  return undefined;
}

/** Finds the key or value node at `path`, following aliases on the way; the nearest node found when the path runs out. */
function locateIn(
  Y: YamlModule,
  doc: Document,
  lineCounter: LineCounter,
  path: readonly ConfigPathSegment[],
  part: "key" | "value",
): SourceLocation | undefined {
  const asNode = (n: unknown): YamlNode | undefined => (Y.isNode(n) && n.range ? n : undefined);
  let node: unknown = doc.contents;
  let keyNode: YamlNode | undefined;
  let nearest = asNode(node);
  for (const segment of path) {
    const container = Y.isAlias(node) ? node.resolve(doc) : node;
    if (Y.isMap(container)) {
      const pair = container.items.find((p) => keyText(Y, p.key) === String(segment));
      if (!pair) return position(lineCounter, nearest);
      keyNode = asNode(pair.key);
      node = pair.value;
    } else if (Y.isSeq(container) && typeof segment === "number") {
      keyNode = undefined;
      node = container.items[segment];
    } else {
      return position(lineCounter, nearest);
    }
    nearest = asNode(node) ?? keyNode ?? nearest;
  }
  return position(lineCounter, part === "key" ? (keyNode ?? nearest) : nearest);
}

/** YAML's own message without its ` at line N, column M` (the location leads our message instead). */
function yamlMessage(message: string): string {
  return message.replace(/ at line \d+, column \d+/, "").trimEnd();
}

/**
 * Parses and validates the text of a config file. `file` is used in messages only.
 * Throws `ConfigError` for malformed YAML, duplicate keys, a non-mapping top level and
 * wrong types (the first, in document order).
 */
export function parseConfig(source: string, file: string): ParsedConfig {
  if (source.charCodeAt(0) === 0xfeff) source = source.slice(1);
  if (source.trim() === "") return { config: emptyConfig(), warnings: [], document: {} };

  const Y = loadYaml();
  const lineCounter = new Y.LineCounter();
  const doc = Y.parseDocument(source, { lineCounter, prettyErrors: true, uniqueKeys: false });

  const syntax = doc.errors[0];
  if (syntax) {
    const at = syntax.linePos?.[0];
    throw new ConfigError(`invalid YAML: ${yamlMessage(syntax.message)}`, {
      kind: "syntax",
      file,
      line: at?.line,
      column: at?.col,
      cause: syntax,
    });
  }
  const warnings = doc.warnings.map((w) => {
    const at = w.linePos?.[0];
    return `${formatLocation(file, at?.line, at?.col)}: ${yamlMessage(w.message)}`;
  });

  const duplicate = findDuplicateKey(Y, doc.contents, []);
  if (duplicate) {
    const at = position(lineCounter, duplicate.key);
    const first = position(lineCounter, duplicate.first);
    const key = formatKeyPath(duplicate.path);
    throw new ConfigError(`duplicate key ${key}${first ? ` (first set on line ${first.line})` : ""}`, {
      kind: "duplicate_key",
      file,
      line: at?.line,
      column: at?.column,
      key,
    });
  }

  let document: unknown;
  try {
    document = doc.toJS();
  } catch (err) {
    // e.g. an alias expanding past the library's resource limit.
    throw new ConfigError(`invalid YAML: ${err instanceof Error ? err.message : String(err)}`, {
      kind: "syntax",
      file,
      cause: err,
    });
  }
  if (document === null || document === undefined) document = {};

  const result = validateConfig(document, {
    file,
    locate: (keyPath, part) => locateIn(Y, doc, lineCounter, keyPath, part),
  });
  const firstError = result.errors[0];
  if (firstError) throw firstError;

  for (const w of result.warnings) warnings.push(`${formatLocation(file, w.line, w.column)}: ${w.message}`);
  return { config: result.config, warnings, document };
}

/**
 * Where `keyPath` is in the config file `file` (its value, or its key), read afresh; undefined when the
 * file or the key is gone. For errors found after loading, by code that knows more than the schema
 * (an unknown toolset name needs the registered tools), so they point at the line like the schema's errors.
 */
export function locateConfigKey(file: string, keyPath: readonly ConfigPathSegment[], part: "key" | "value" = "value"): SourceLocation | undefined {
  let source: string | undefined;
  try {
    source = readConfigFile(file);
  } catch {
    return undefined;
  }
  if (source === undefined) return undefined;
  if (source.charCodeAt(0) === 0xfeff) source = source.slice(1);
  const Y = loadYaml();
  const lineCounter = new Y.LineCounter();
  const doc = Y.parseDocument(source, { lineCounter, uniqueKeys: false });
  return locateIn(Y, doc, lineCounter, keyPath, part);
}

/**
 * A `ConfigError` about the value at `keyPath` of a loaded configuration, located in its file
 * (`~/.mibyan/config.yaml:4:14: toolsets.enabled[1]: unknown toolset "webb"; did you mean: web?`).
 */
export function configValueError(loaded: Pick<LoadedConfig, "path">, keyPath: readonly ConfigPathSegment[], reason: string, kind: ConfigErrorKind = "unknown_name"): ConfigError {
  const at = locateConfigKey(loaded.path, keyPath);
  const key = formatKeyPath(keyPath);
  return new ConfigError(`${key}: ${reason}`, { kind, file: loaded.path, line: at?.line, column: at?.column, key });
}

// ---------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------

function resolveHome(home: string | undefined, env: EnvVars): string {
  return home !== undefined ? path.resolve(expandTilde(home, env)) : mibyanHome(env);
}

/**
 * Reads `<home>/config.yaml`. A missing file is the empty configuration (`exists: false`);
 * an empty file is fine. Anything unusable throws `ConfigError`, including a path that
 * leads to something other than a regular file, or a file over `MAX_CONFIG_BYTES`.
 */
export function loadConfig(options: LoadConfigOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const file = configPath(resolveHome(options.home, env));

  // A regular file of bounded size only: the path may be a symlink to /dev/zero or a FIFO (see read-config-file.ts).
  const source = readConfigFile(file);
  if (source === undefined) return { path: file, exists: false, config: emptyConfig(), warnings: [] };
  return { path: file, exists: true, ...parseConfig(source, file) };
}

// ---------------------------------------------------------------------------
// The memoised configuration
// ---------------------------------------------------------------------------

const cache = new Map<string, { stamp: string; loaded: LoadedConfig }>();

/** What identifies one version of the file: modification time (ns), size and inode. */
function fileStamp(file: string): string {
  const stat = statSync(file, { bigint: true, throwIfNoEntry: false });
  return stat ? `${stat.mtimeNs}:${stat.size}:${stat.ino}` : "missing";
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/**
 * `loadConfig` for `home` (default: the profile home from `process.env`), memoised by
 * path, modification time and size: the file is re-read only when it changed. The result
 * is shared between callers and deeply frozen. Errors are not cached.
 */
export function getConfig(home?: string): LoadedConfig {
  const resolvedHome = resolveHome(home, process.env);
  const file = configPath(resolvedHome);
  // Stat before reading: a change racing the read leaves a stale stamp, so it is re-read next time.
  const stamp = fileStamp(file);
  const hit = cache.get(file);
  if (hit && hit.stamp === stamp) return hit.loaded;
  const loaded = deepFreeze(loadConfig({ home: resolvedHome }));
  cache.set(file, { stamp, loaded });
  return loaded;
}

/** Forgets every memoised configuration. */
export function clearConfigCache(): void {
  cache.clear();
}
