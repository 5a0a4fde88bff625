/**
 * Validation of `config.yaml`: `validateConfig` walks a parsed document against the rule table
 * (config-rules.ts), maps the file's snake_case keys onto the camelCase `MibyanConfig`
 * (config-types.ts), reports wrong types as errors and unknown keys as warnings (later versions
 * add keys, so an older runtime must not refuse a newer file), except in the sections of
 * strict-sections.ts, where an unknown key is an error. Nothing here knows about YAML: positions
 * come from a `locate` callback supplied by the loader.
 */

import { createRequire } from "node:module";

import { ConfigError } from "./config-error.js";
import { CONFIG_RULES, type ConfigRule } from "./config-rules.js";
import type { MibyanConfig } from "./config-types.js";
import { isStrictKeyPath } from "./strict-sections.js";
import { describeValue, isPlainObject, type ConfigPathSegment } from "./value-types.js";

export { CONFIG_RULES, type ConfigRule } from "./config-rules.js";
export type * from "./config-types.js";
export { ConfigTypes, describeValue, isPlainObject, type ConfigPathSegment, type ConfigTypeProblem, type ConfigValueType } from "./value-types.js";

// ---------------------------------------------------------------------------
// The rule tree (built once from the table)
// ---------------------------------------------------------------------------

interface RuleNode {
  /** Children by literal key (as written in the file). */
  readonly literal: Map<string, RuleNode>;
  /** The child any other key matches (`*`). */
  wildcard?: RuleNode;
  /** Set on leaves. */
  rule?: ConfigRule;
}

const newNode = (): RuleNode => ({ literal: new Map() });

function buildRuleTree(rules: readonly ConfigRule[]): RuleNode {
  const root = newNode();
  for (const rule of rules) {
    let node = root;
    for (const segment of rule.path.split(".")) {
      let next = segment === "*" ? node.wildcard : node.literal.get(segment);
      if (!next) {
        next = newNode();
        if (segment === "*") node.wildcard = next;
        else node.literal.set(segment, next);
      }
      node = next;
    }
    node.rule = rule;
  }
  return root;
}

const RULE_TREE = buildRuleTree(CONFIG_RULES);

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/** `max_result_chars` → `maxResultChars`. */
export function snakeToCamel(key: string): string {
  return key.replace(/_+([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `["plugins", "entries", "my.plugin", "enabled"]` → `plugins.entries["my.plugin"].enabled`; indexes as `[n]`. */
export function formatKeyPath(path: readonly ConfigPathSegment[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (/^[^\s.[\]"]+$/.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** Own-property write that is safe for keys such as `__proto__`. */
function defineKey(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** The object at `path` below `root`, created (as `{}`) where missing. */
function ensureObject(root: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  let node = root;
  for (const key of path) {
    const existing = Object.hasOwn(node, key) ? node[key] : undefined;
    if (isPlainObject(existing)) {
      node = existing;
    } else {
      const created: Record<string, unknown> = {};
      defineKey(node, key, created);
      node = created;
    }
  }
  return node;
}

function setIn(root: Record<string, unknown>, path: readonly string[], value: unknown): void {
  const parent = ensureObject(root, path.slice(0, -1));
  defineKey(parent, path[path.length - 1]!, value);
}

/** The output path of a rule without `*`, or undefined. */
function literalOutputPath(rule: ConfigRule): string[] | undefined {
  const segments = rule.path.split(".");
  return segments.includes("*") ? undefined : segments.map(snakeToCamel);
}

/** The configuration with nothing set: every section present, defaults filled in. */
export function emptyConfig(): MibyanConfig {
  const config: Record<string, unknown> = {};
  for (const rule of CONFIG_RULES) {
    const segments = rule.path.split(".");
    const firstWildcard = segments.indexOf("*");
    const sectionEnd = firstWildcard === -1 ? segments.length - 1 : firstWildcard;
    ensureObject(config, segments.slice(0, sectionEnd).map(snakeToCamel));
    const out = literalOutputPath(rule);
    if (out && rule.default !== undefined) setIn(config, out, structuredClone(rule.default));
  }
  return config as unknown as MibyanConfig;
}

// ---------------------------------------------------------------------------
// Suggestions for unknown keys
// ---------------------------------------------------------------------------

type Levenshtein = typeof import("fastest-levenshtein");
let levenshtein: Levenshtein | undefined;
/** Loaded on the first unknown key, so a clean config never pays for it. */
function editDistance(a: string, b: string): number {
  levenshtein ??= createRequire(import.meta.url)("fastest-levenshtein") as Levenshtein;
  return levenshtein.distance(a, b);
}

const normalizeKey = (key: string): string => key.toLowerCase().replace(/[-_\s]/g, "");

/** The closest known sibling of `key`, if close enough to be a likely typo. */
function closestKey(key: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const normalized = normalizeKey(key);
  for (const candidate of candidates) {
    // `maxResultChars`, `max-result-chars`, `MAX_RESULT_CHARS` are all `max_result_chars`.
    if (normalizeKey(candidate) === normalized) return candidate;
    const d = editDistance(key, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const threshold = Math.max(2, Math.floor(key.length / 3));
  return bestDistance <= threshold && bestDistance < key.length ? best : undefined;
}

/** Known keys whose last segment matches `key` elsewhere in the tree (a key put in the wrong section). */
function misplacedKey(key: string): string[] {
  const normalized = normalizeKey(key);
  return CONFIG_RULES.filter((rule) => {
    const segments = rule.path.split(".");
    return !segments.includes("*") && normalizeKey(segments[segments.length - 1]!) === normalized;
  }).map((rule) => rule.path);
}

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

export interface SourceLocation {
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
}

/** Finds where the key or the value at `path` sits in the source, if it can. */
export type ConfigLocator = (
  path: readonly ConfigPathSegment[],
  part: "key" | "value",
) => SourceLocation | undefined;

export interface ValidateConfigOptions {
  /** The file the value came from (for messages). */
  file: string;
  locate?: ConfigLocator;
}

export interface ConfigWarning {
  message: string;
  key: string;
  line?: number;
  column?: number;
}

export interface ConfigValidation {
  config: MibyanConfig;
  /** Unknown keys, each with a location and, when one is close, a suggestion. In document order. */
  warnings: ConfigWarning[];
  /** Wrong types and unknown keys of strict sections, in document order. The loader throws the first. */
  errors: ConfigError[];
}

const byPosition = <T extends { line?: number; column?: number }>(a: T, b: T): number =>
  (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? Infinity) - (b.column ?? Infinity);

/**
 * Checks a parsed document (plain JSON-like data) against `CONFIG_RULES` and builds the
 * typed configuration. `null` values count as "not set". Never throws.
 */
export function validateConfig(document: unknown, options: ValidateConfigOptions): ConfigValidation {
  const { file, locate = () => undefined } = options;
  const config = emptyConfig() as unknown as Record<string, unknown>;
  const warnings: ConfigWarning[] = [];
  const errors: ConfigError[] = [];

  const fail = (path: readonly ConfigPathSegment[], kind: "type" | "not_mapping", reason: string): void => {
    const where = locate(path, "value");
    const key = path.length > 0 ? formatKeyPath(path) : undefined;
    errors.push(new ConfigError(reason, { kind, file, line: where?.line, column: where?.column, key }));
  };

  const warnUnknown = (path: readonly string[], siblings: Iterable<string>): void => {
    const key = formatKeyPath(path);
    const last = path[path.length - 1]!;
    const sibling = closestKey(last, siblings);
    let suggestions = sibling !== undefined ? [formatKeyPath([...path.slice(0, -1), sibling])] : misplacedKey(last);
    suggestions = suggestions.filter((s) => s !== key);
    const hint = suggestions.length > 0 ? `; did you mean ${suggestions.join(" or ")}?` : "";
    const where = locate(path, "key");
    if (isStrictKeyPath(path)) {
      // A typo here would silently weaken isolation or the approval gate (strict-sections.ts).
      const reason = `unknown key ${key}${hint} (an unknown key in the ${path[0]} section is an error, not a warning: a misspelt setting there would silently be ignored)`;
      errors.push(new ConfigError(reason, { kind: "unknown_key", file, line: where?.line, column: where?.column, key }));
      return;
    }
    warnings.push({ message: `unknown key ${key}${hint}`, key, line: where?.line, column: where?.column });
  };

  const walk = (
    value: Record<string, unknown>,
    node: RuleNode,
    path: readonly string[],
    outPath: readonly string[],
  ): void => {
    for (const key of Object.keys(value)) {
      const child = node.literal.get(key) ?? node.wildcard;
      const childPath = [...path, key];
      if (!child) {
        warnUnknown(childPath, node.literal.keys());
        continue;
      }
      const childOut = [...outPath, node.literal.has(key) ? snakeToCamel(key) : key];
      const childValue = value[key];

      if (child.rule) {
        if (childValue === null || childValue === undefined) continue;
        const problem = child.rule.type.check(childValue);
        if (problem) {
          const at = [...childPath, ...problem.at];
          fail(at, "type", `${formatKeyPath(at)} must be ${problem.expected} (got ${problem.gotText ?? describeValue(problem.got)})`);
        } else {
          setIn(config, childOut, structuredClone(childValue));
        }
        continue;
      }

      // A section: a mapping of further keys. An empty (`null`) section is an empty mapping.
      if (childValue !== null && childValue !== undefined && !isPlainObject(childValue)) {
        fail(childPath, "type", `${formatKeyPath(childPath)} must be a mapping (got ${describeValue(childValue)})`);
        continue;
      }
      ensureObject(config, childOut);
      if (childValue) walk(childValue, child, childPath, childOut);
    }
  };

  if (document !== null && document !== undefined) {
    if (isPlainObject(document)) {
      walk(document, RULE_TREE, [], []);
    } else {
      fail([], "not_mapping", `the top level must be a mapping of keys (got ${describeValue(document)})`);
    }
  }

  warnings.sort(byPosition);
  errors.sort(byPosition);
  return { config: config as unknown as MibyanConfig, warnings, errors };
}
