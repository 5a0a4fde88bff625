/**
 * The shape of `config.yaml` and its validation. Every key the runtime knows is one row
 * of `CONFIG_RULES`; `validateConfig` walks a parsed document against that table, maps
 * the file's snake_case keys onto the camelCase `MibyanConfig`, reports wrong types as
 * errors and unknown keys as warnings (later versions add keys, so an older runtime must
 * not refuse a newer file), except in the sections of strict-sections.ts (`terminal`,
 * `approvals`), where an unknown key is an error. Nothing here knows about YAML: positions come from a
 * `locate` callback supplied by the loader.
 */

import { createRequire } from "node:module";

import type { RuleCategory } from "../approval/types.js";
import { ConfigError } from "./config-error.js";
import { isStrictKeyPath } from "./strict-sections.js";

// ---------------------------------------------------------------------------
// The typed configuration
// ---------------------------------------------------------------------------

/** `plugins.entries.<id>` */
export interface PluginEntryConfig {
  /** Load the plugin (`false` keeps it installed but off). */
  enabled?: boolean;
  /** Let the plugin's tools replace tools of the same name registered earlier. */
  allowToolOverride?: boolean;
}

export interface PluginsConfig {
  /** Per-plugin settings, keyed by plugin id exactly as written. */
  entries: Record<string, PluginEntryConfig>;
}

export interface ToolsetsConfig {
  /** Toolsets to turn on (in addition to the defaults). */
  enabled?: string[];
  /** Toolsets to turn off. */
  disabled?: string[];
}

export interface ToolsConfig {
  /** Results longer than this many characters are truncated before reaching the model. */
  maxResultChars?: number;
  /** Default time limit per tool call, in seconds (0 disables). */
  timeoutSeconds?: number;
  /** How many tool calls of one batch may run at once. */
  maxConcurrency?: number;
  /** How long an availability check's answer is reused, in seconds (0: never cached). */
  availabilityTtlSeconds?: number;
}

export interface TerminalConfig {
  /** Which terminal backend runs commands. */
  backend: string;
  /** Default time limit per command, in seconds. */
  timeoutSeconds?: number;
  /** Command output longer than this many characters is truncated. */
  maxOutputChars?: number;
  /** Working directory for new terminal sessions, as written. */
  cwd?: string;
  /** Seconds an unused task environment is kept before it is closed (0: never). Built-in default 600. */
  idleTimeoutSeconds?: number;
  /** Replace secrets in command output before the model sees it. Default true. */
  redactOutput?: boolean;
  /**
   * Each backend's own options, as written (snake_case keys), checked by the
   * backend when it creates a task's environment (docs/backends/<name>.md).
   * `local` holds the OS sandbox of the local backend (docs/sandbox.md).
   */
  local?: Record<string, unknown>;
  ssh?: Record<string, unknown>;
  docker?: Record<string, unknown>;
  singularity?: Record<string, unknown>;
  modal?: Record<string, unknown>;
  daytona?: Record<string, unknown>;
  vercelSandbox?: Record<string, unknown>;
}

/** `approvals.allowlist[n]`: one approval kept for good (scope `always`). Fields as written in the file. */
export interface ApprovalAllowlistEntryConfig {
  /** Rule id (`recursive-delete`). */
  rule: string;
  /** The normalised command prefix the rule matched (`rm -f -r node_modules`), compared exactly. */
  prefix: string;
  /** Terminal backend the approval holds for; `local` when absent. */
  backend?: string;
  /** When it was added (ISO 8601), informational. */
  added?: string;
}

/** `approvals.deny[n]`: a user deny rule. At least one of `rule`, `prefix`, `category`. */
export interface ApprovalDenyEntryConfig {
  /** Rule id or glob over rule ids (`git-*`). */
  rule?: string;
  /** Glob (`*`, `?`) or word prefix over a match's normalised prefix (and over the command text). */
  prefix?: string;
  /** Rule category (`infrastructure_teardown`). */
  category?: string;
  /** Only on this backend. */
  backend?: string;
  /** Told to the model when the rule denies a command. */
  reason?: string;
}

/** `approvals.smart`: the auxiliary reviewer of smart mode. */
export interface ApprovalsSmartConfig {
  /** OpenAI-compatible base URL (`http://127.0.0.1:11434/v1`). */
  baseUrl?: string;
  model?: string;
  /** Name of the environment variable holding the API key. */
  apiKeyEnv?: string;
  timeoutSeconds?: number;
  /** Consecutive reviewer denials in one session after which smart review stops for that session. */
  breakerThreshold?: number;
}

/** `approvals`: the dangerous-command approval flow (see docs/approvals.md). */
export interface ApprovalsConfig {
  mode: "manual" | "smart" | "off";
  allowlist?: ApprovalAllowlistEntryConfig[];
  deny?: ApprovalDenyEntryConfig[];
  /** What a run without a person to ask does with a command that needs approval. */
  nonInteractive: "deny" | "allow";
  /** Terminal prompt time limit, seconds. */
  timeoutSeconds: number;
  /** How long a gateway (chat / web) approval stays pending, seconds. */
  gatewayTimeoutSeconds: number;
  isolatedBackendsNeedApproval: boolean;
  smart: ApprovalsSmartConfig;
}

/** The validated configuration. Sections are always present; keys not set in the file are absent unless they have a default. */
/** `processes`: the background process registry (docs/processes.md). */
export interface ProcessesConfig {
  results?: {
    /** Receipts of ended processes older than this many days are removed. Default 7. */
    maxAgeDays?: number;
    /** At most this many receipts are kept (the newest). Default 1,000. */
    maxCount?: number;
  };
}

export interface MibyanConfig {
  plugins: PluginsConfig;
  toolsets: ToolsetsConfig;
  tools: ToolsConfig;
  terminal: TerminalConfig;
  approvals: ApprovalsConfig;
  processes: ProcessesConfig;
}

// ---------------------------------------------------------------------------
// Value types
// ---------------------------------------------------------------------------

/** One step of a path through the document: a mapping key or a list index. */
export type ConfigPathSegment = string | number;

/** What a value type reports when a value does not fit. */
export interface ConfigTypeProblem {
  /** Where below the checked value the problem is (`[]` for the value itself, `[2]` for a list's third item). */
  at: ConfigPathSegment[];
  /** `a boolean`, `a positive integer`, ... */
  expected: string;
  got: unknown;
  /** What arrived, when `describeValue(got)` would not say what is wrong (`a mapping without \`prefix\``). */
  gotText?: string;
}

export interface ConfigValueType {
  /** How the type reads in messages and docs: `a boolean`, `a list of strings`. */
  readonly expected: string;
  /** `undefined` when `value` fits. */
  check(value: unknown): ConfigTypeProblem | undefined;
}

function scalarType(expected: string, test: (value: unknown) => boolean): ConfigValueType {
  return { expected, check: (value) => (test(value) ? undefined : { at: [], expected, got: value }) };
}

const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isNonEmptyString = (v: unknown): v is string => typeof v === "string" && v.length > 0;

/** The value types config rules may use. */
export const ConfigTypes = {
  boolean: scalarType("a boolean", (v) => typeof v === "boolean"),
  string: scalarType("a non-empty string", isNonEmptyString),
  positiveInteger: scalarType("a positive integer", (v) => Number.isSafeInteger(v) && (v as number) > 0),
  positiveNumber: scalarType("a positive number", (v) => isNumber(v) && v > 0),
  nonNegativeNumber: scalarType("a non-negative number", (v) => isNumber(v) && v >= 0),
  /** A mapping whose keys are checked elsewhere (a backend's own options). */
  mapping: scalarType("a mapping", (v) => isPlainObject(v)),
  stringList: {
    expected: "a list of strings",
    check(value) {
      if (!Array.isArray(value)) return { at: [], expected: "a list of strings", got: value };
      const bad = value.findIndex((item) => !isNonEmptyString(item));
      return bad === -1 ? undefined : { at: [bad], expected: "a non-empty string", got: value[bad] };
    },
  },
} satisfies Record<string, ConfigValueType>;

// ---------------------------------------------------------------------------
// The `approvals` section (docs/approvals.md)
// ---------------------------------------------------------------------------

/** A string out of a fixed set. */
function oneOfType(values: readonly string[]): ConfigValueType {
  const expected = `one of ${values.join(", ")}`;
  return scalarType(expected, (v) => typeof v === "string" && values.includes(v));
}

/** An absolute http(s) URL. */
const httpUrlType = scalarType("an http(s) URL", (v) => {
  if (!isNonEmptyString(v)) return false;
  try {
    const url = new URL(v);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
});

/** The rule categories of `src/approval/types.ts` (deny rules may name one). */
const RULE_CATEGORIES = [
  "recursive_delete",
  "filesystem_destruction",
  "sql_destruction",
  "system_file_write",
  "credential_file_write",
  "shell_rc_write",
  "service_control",
  "power_control",
  "process_kill",
  "fork_bomb",
  "remote_code_execution",
  "code_execution",
  "permission_change",
  "privilege_escalation",
  "git_history_destruction",
  "infrastructure_teardown",
  "data_deletion",
  "secret_exfiltration",
  "security_disable",
  "history_tampering",
  "unanalysable",
] as const satisfies readonly RuleCategory[];
// Fails to compile when a category is added to RuleCategory but not above.
const everyCategoryListed: Exclude<RuleCategory, (typeof RULE_CATEGORIES)[number]> extends never ? true : never = true;
void everyCategoryListed;

/** An environment variable name. */
const envNameType = scalarType("an environment variable name", (v) => typeof v === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(v));

/**
 * A list of mappings with known string fields. Unknown fields are kept and ignored (a newer
 * release may add some); `anyOf` lists fields of which at least one must be present.
 */
function recordListType(spec: {
  required?: readonly string[];
  optional?: readonly string[];
  anyOf?: readonly string[];
  /** Fields whose value must be one of these strings. */
  oneOf?: Readonly<Record<string, readonly string[]>>;
}): ConfigValueType {
  const required = spec.required ?? [];
  const known = [...required, ...(spec.optional ?? [])];
  const needs = [
    ...required.map((f) => `\`${f}\``),
    ...(spec.anyOf ? [`one of ${spec.anyOf.map((f) => `\`${f}\``).join(", ")}`] : []),
  ];
  const itemExpected = `a mapping${needs.length > 0 ? ` with ${needs.join(" and ")}` : ""}`;
  const expected = `a list of mappings${needs.length > 0 ? ` with ${needs.join(" and ")}` : ""}`;
  return {
    expected,
    check(value) {
      if (!Array.isArray(value)) return { at: [], expected, got: value };
      for (const [index, item] of value.entries()) {
        if (!isPlainObject(item)) return { at: [index], expected: itemExpected, got: item };
        for (const field of known) {
          if (Object.hasOwn(item, field) && item[field] !== null && !isNonEmptyString(item[field])) {
            return { at: [index, field], expected: "a non-empty string", got: item[field] };
          }
          const allowed = spec.oneOf?.[field];
          if (allowed && isNonEmptyString(item[field]) && !allowed.includes(item[field])) {
            return { at: [index, field], expected: `one of ${allowed.join(", ")}`, got: item[field] };
          }
        }
        const present = (f: string): boolean => isNonEmptyString(item[f]);
        const missing = required.filter((f) => !present(f));
        if (missing.length > 0) {
          return { at: [index], expected: itemExpected, got: item, gotText: `a mapping ${withoutFields(item, missing)}` };
        }
        if (spec.anyOf && !spec.anyOf.some(present)) {
          const keys = Object.keys(item).filter((k) => item[k] !== null);
          const has = keys.length === 0 ? "an empty mapping" : `a mapping with none of them (only ${keys.map((k) => `\`${k}\``).join(", ")})`;
          return { at: [index], expected: itemExpected, got: item, gotText: has };
        }
      }
      return undefined;
    },
  };
}

/** `without \`prefix\``, `without \`rule\` and with \`prefix\` null`: which required fields an entry lacks. */
function withoutFields(item: Record<string, unknown>, missing: readonly string[]): string {
  const absent = missing.filter((f) => !Object.hasOwn(item, f));
  const empty = missing.filter((f) => Object.hasOwn(item, f));
  const names = (fields: readonly string[]) => fields.map((f) => `\`${f}\``).join(" and ");
  const parts = [...(absent.length > 0 ? [`without ${names(absent)}`] : []), ...(empty.length > 0 ? [`with ${names(empty)} null`] : [])];
  return parts.join(" and ");
}

// ---------------------------------------------------------------------------
// The rule table
// ---------------------------------------------------------------------------

export interface ConfigRule {
  /** Dotted key path as written in the file; `*` stands for any one key (a plugin id). */
  readonly path: string;
  readonly type: ConfigValueType;
  /** Filled in when the key is absent. Only for paths without `*`. */
  readonly default?: unknown;
  readonly description: string;
}

/**
 * Every key `config.yaml` understands. Sections (`plugins`, `plugins.entries.*`, ...) are
 * implied by the leaves below them and must be mappings. The typed key is the camelCase
 * form of each literal segment; `*` segments are kept as written.
 */
export const CONFIG_RULES: readonly ConfigRule[] = [
  { path: "plugins.entries.*.enabled", type: ConfigTypes.boolean, description: "Load this plugin." },
  {
    path: "plugins.entries.*.allow_tool_override",
    type: ConfigTypes.boolean,
    description: "Let this plugin's tools replace tools of the same name.",
  },
  { path: "toolsets.enabled", type: ConfigTypes.stringList, description: "Toolsets to turn on." },
  { path: "toolsets.disabled", type: ConfigTypes.stringList, description: "Toolsets to turn off." },
  {
    path: "tools.max_result_chars",
    type: ConfigTypes.positiveInteger,
    description: "Truncate tool results longer than this.",
  },
  {
    path: "tools.timeout_seconds",
    type: ConfigTypes.nonNegativeNumber,
    description: "Default per-call time limit (0 disables).",
  },
  {
    path: "tools.max_concurrency",
    type: ConfigTypes.positiveInteger,
    description: "Tool calls of one batch run at once.",
  },
  {
    path: "tools.availability_ttl_seconds",
    type: ConfigTypes.nonNegativeNumber,
    description: "Reuse availability answers this long (0: never).",
  },
  { path: "terminal.backend", type: ConfigTypes.string, default: "local", description: "Terminal backend." },
  {
    path: "terminal.timeout_seconds",
    type: ConfigTypes.positiveNumber,
    description: "Default per-command time limit.",
  },
  {
    path: "terminal.max_output_chars",
    type: ConfigTypes.positiveInteger,
    description: "Truncate command output longer than this.",
  },
  { path: "terminal.cwd", type: ConfigTypes.string, description: "Working directory for new sessions." },
  {
    path: "terminal.idle_timeout_seconds",
    type: ConfigTypes.nonNegativeNumber,
    description: "Close a task's environment after this long unused (0: never; default 600).",
  },
  {
    path: "terminal.redact_output",
    type: ConfigTypes.boolean,
    description: "Replace secrets (API keys, tokens, passwords, private keys) in command output with [REDACTED] (default true).",
  },
  // Each backend's options; the backend checks their keys when it starts a task (docs/backends/).
  ...["local", "ssh", "docker", "singularity", "modal", "daytona", "vercel_sandbox"].map((backend) => ({
    path: `terminal.${backend}`,
    type: ConfigTypes.mapping,
    description: `Options of the ${backend} backend (docs/backends/${backend.replace("_", "-")}.md).`,
  })),
  // processes: the background process registry (docs/processes.md)
  {
    path: "processes.results.max_age_days",
    type: ConfigTypes.positiveNumber,
    description: "Remove receipts of ended background processes older than this many days (default 7).",
  },
  {
    path: "processes.results.max_count",
    type: ConfigTypes.positiveInteger,
    description: "Keep at most this many receipts of ended background processes, the newest (default 1000).",
  },
  // approvals: the dangerous-command approval flow (docs/approvals.md)
  {
    path: "approvals.mode",
    type: oneOfType(["manual", "smart", "off"]),
    default: "manual",
    description: "manual: ask a person; smart: an auxiliary model reviews first; off: no approval (hardline rules still block).",
  },
  {
    path: "approvals.allowlist",
    type: recordListType({ required: ["rule", "prefix"], optional: ["backend", "added"] }),
    description: "Approvals kept for good: (rule, prefix, backend) keys.",
  },
  {
    path: "approvals.deny",
    type: recordListType({
      optional: ["rule", "prefix", "category", "backend", "reason"],
      anyOf: ["rule", "prefix", "category"],
      oneOf: { category: RULE_CATEGORIES },
    }),
    description: "User deny rules, checked right after the hardline rules.",
  },
  {
    path: "approvals.non_interactive",
    type: oneOfType(["deny", "allow"]),
    default: "deny",
    description: "What a run with nobody to ask does with a command that needs approval.",
  },
  {
    path: "approvals.timeout_seconds",
    type: ConfigTypes.positiveNumber,
    default: 60,
    description: "Terminal prompt time limit; no answer denies.",
  },
  {
    path: "approvals.gateway_timeout_seconds",
    type: ConfigTypes.positiveNumber,
    default: 300,
    description: "How long a gateway approval stays pending; expiry denies.",
  },
  {
    path: "approvals.isolated_backends_need_approval",
    type: ConfigTypes.boolean,
    default: false,
    description: "Also ask for commands on isolated sandboxes (hardline rules block there regardless).",
  },
  { path: "approvals.smart.base_url", type: httpUrlType, description: "OpenAI-compatible endpoint of the reviewer." },
  { path: "approvals.smart.model", type: ConfigTypes.string, description: "Reviewer model." },
  { path: "approvals.smart.api_key_env", type: envNameType, description: "Environment variable holding the reviewer's API key." },
  {
    path: "approvals.smart.timeout_seconds",
    type: ConfigTypes.positiveNumber,
    description: "Reviewer time limit; a timeout escalates to a person.",
  },
  {
    path: "approvals.smart.breaker_threshold",
    type: ConfigTypes.positiveInteger,
    description: "Consecutive reviewer denials in a session that stop smart review for it.",
  },
];


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

/** How a wrong value reads in a message: `"yes"`, `3`, `a list`, `a mapping`, `null`. */
export function describeValue(value: unknown): string {
  if (typeof value === "string") {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return JSON.stringify(shown);
  }
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return String(value);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
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
