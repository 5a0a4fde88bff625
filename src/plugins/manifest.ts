/**
 * `plugin.yaml`: read as a bounded regular file (a symlink to /dev/zero or a FIFO is an error, not a hang),
 * parsed with the `yaml` library under an alias limit (a "billion laughs" file is an error), checked field
 * by field with located errors. Everything here runs before a plugin is enabled, on files anyone who can
 * write the plugin folder controls, so nothing in it is trusted.
 */

import path from "node:path";

import { LineCounter, isMap, isScalar, parseDocument, type Document, type Node as YamlNode } from "yaml";

import { readRegularFileSync, RegularFileError } from "../util/read-regular-file.js";
import { PluginManifestError } from "./errors.js";
import { PLUGIN_KINDS, type PluginKind, type PluginManifest, type RequiredEnv } from "./types.js";

/** Largest manifest read (a manifest is a dozen lines). */
export const MAX_MANIFEST_BYTES = 64 * 1024;
/** Most aliases a manifest may expand (the library's default is 100; a manifest needs none). */
const MAX_ALIAS_COUNT = 20;
const KNOWN_KEYS = new Set(["name", "version", "description", "kind", "requires_env", "entry", "author", "provides_tools", "provides_hooks"]);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Reads and checks `<dir>/plugin.yaml` (or `plugin.yml`); `fallbackName` is the folder's name. Throws `PluginManifestError`. */
export function readManifest(file: string, fallbackName: string): PluginManifest {
  let text: string;
  try {
    text = readRegularFileSync(file, MAX_MANIFEST_BYTES).text;
  } catch (err) {
    const why = err instanceof RegularFileError ? err.message : String(err);
    throw new PluginManifestError(`cannot read the manifest: ${why}`, file);
  }
  return parseManifest(text, file, fallbackName);
}

/** Parses the text of a manifest; `file` is for messages. */
export function parseManifest(source: string, file: string, fallbackName: string): PluginManifest {
  if (source.charCodeAt(0) === 0xfeff) source = source.slice(1);
  const lineCounter = new LineCounter();
  const doc = parseDocument(source, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const syntax = doc.errors[0];
  if (syntax) {
    const at = syntax.linePos?.[0];
    throw new PluginManifestError(`invalid YAML: ${firstLine(syntax.message)}`, file, at?.line, at?.col);
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    throw new PluginManifestError(`invalid YAML: ${firstLine(err instanceof Error ? err.message : String(err))}`, file);
  }
  if (data === null || data === undefined) data = {};
  const locate = (key: string): { line?: number; column?: number } => locateKey(doc, lineCounter, key);
  const wrong = (key: string, expected: string, got: unknown): PluginManifestError => {
    const at = locate(key);
    return new PluginManifestError(`${key} must be ${expected} (got ${describe(got)})`, file, at.line, at.column);
  };
  if (typeof data !== "object" || Array.isArray(data)) throw new PluginManifestError(`the manifest must be a mapping (got ${describe(data)})`, file, 1, 1);
  const raw = data as Record<string, unknown>;
  const warnings: string[] = [];
  const warn = (key: string, message: string): void => {
    const at = locate(key);
    warnings.push(`${formatAt(file, at)}: ${message}`);
  };

  for (const key of Object.keys(raw)) if (!KNOWN_KEYS.has(key)) warn(key, `unknown key ${JSON.stringify(key)} (ignored)`);

  const text = (key: string, fallback: string): string => {
    const value = raw[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value === "string") return value;
    if (typeof value === "number" && key === "version") return String(value);
    throw wrong(key, "a string", value);
  };

  const name = printable(text("name", fallbackName), 200) || fallbackName;
  const version = printable(text("version", ""), 100);
  const description = printable(text("description", ""), 2_000);
  const author = raw.author === undefined || raw.author === null ? undefined : printable(text("author", ""), 200);

  let kind: PluginKind = "standalone";
  const rawKind = raw.kind;
  if (rawKind !== undefined && rawKind !== null) {
    if (typeof rawKind === "string" && (PLUGIN_KINDS as readonly string[]).includes(rawKind)) kind = rawKind as PluginKind;
    else warn("kind", `unknown kind ${describe(rawKind)}; treated as standalone (known: ${PLUGIN_KINDS.join(", ")})`);
  }

  const entry = text("entry", "index.js");
  const entryProblem = checkEntry(entry);
  if (entryProblem !== undefined) {
    const at = locate("entry");
    throw new PluginManifestError(`entry ${JSON.stringify(entry)} ${entryProblem}`, file, at.line, at.column);
  }

  const requiresEnv: RequiredEnv[] = [];
  const env = raw.requires_env;
  if (env !== undefined && env !== null) {
    if (!Array.isArray(env)) throw wrong("requires_env", "a list of variable names or {name, description, url, secret}", env);
    for (const [index, item] of env.entries()) {
      const itemKey = `requires_env[${index}]`;
      if (typeof item === "string") {
        if (!ENV_NAME.test(item)) throw wrong("requires_env", `a list of environment variable names (${itemKey})`, item);
        requiresEnv.push({ name: item });
      } else if (item !== null && typeof item === "object" && !Array.isArray(item) && typeof (item as RequiredEnv).name === "string" && ENV_NAME.test((item as RequiredEnv).name)) {
        const { name: envName, description: d, url, secret } = item as Record<string, unknown>;
        const spec: RequiredEnv = { name: envName as string };
        if (typeof d === "string") spec.description = d;
        if (typeof url === "string") spec.url = url;
        if (typeof secret === "boolean") spec.secret = secret;
        requiresEnv.push(spec);
      } else {
        throw wrong("requires_env", `a list of variable names or {name, description, url, secret} (${itemKey})`, item);
      }
    }
  }

  const manifest: PluginManifest = { name, version, description, kind, requiresEnv, entry, warnings };
  if (author !== undefined) manifest.author = author;
  return manifest;
}

/**
 * Why an entry path written in a manifest (or package.json) is refused, or undefined when it is a
 * plain relative path inside the plugin folder. Symlinks are checked when the entry is resolved (loader).
 */
export function checkEntry(entry: string): string | undefined {
  if (entry.trim() === "") return "is empty";
  if (entry.includes("\0")) return "contains a NUL byte";
  if (path.isAbsolute(entry) || /^[A-Za-z]:[\\/]/.test(entry)) return "must be a path relative to the plugin folder";
  if (/^[a-z][a-z0-9+.-]*:/i.test(entry)) return "must be a file path, not a URL";
  const normal = path.posix.normalize(entry.replace(/\\/g, "/"));
  if (normal === ".." || normal.startsWith("../")) return "leads out of the plugin folder";
  return undefined;
}

/**
 * What a listing may print of a manifest's text: control characters (a terminal escape sequence that
 * would rewrite `mibyan plugins list`'s output, say) become `?`, and the text is cut to `max` characters.
 */
export function printable(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g, "?");
  return clean.length > max ? `${clean.slice(0, max)}…` : clean;
}

function locateKey(doc: Document, lineCounter: LineCounter, key: string): { line?: number; column?: number } {
  const contents = doc.contents as YamlNode | null;
  if (!contents || !isMap(contents)) return {};
  for (const pair of contents.items) {
    if (isScalar(pair.key) && pair.key.value === key) {
      const node = (pair.value as YamlNode | null) ?? (pair.key as YamlNode);
      const offset = node.range?.[0];
      if (offset === undefined) return {};
      const pos = lineCounter.linePos(offset);
      return { line: pos.line, column: pos.col };
    }
  }
  return {};
}

function formatAt(file: string, at: { line?: number; column?: number }): string {
  return at.line === undefined ? file : `${file}:${at.line}${at.column === undefined ? "" : `:${at.column}`}`;
}

function firstLine(message: string): string {
  return message.split("\n")[0]!.trim();
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  return String(value);
}
