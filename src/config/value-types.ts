/**
 * The value types config rules use (config-rules.ts): each checks one value and says what it
 * expected, so the validator can report a located, readable error.
 */

import type { RuleCategory } from "../approval/types.js";

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

export function scalarType(expected: string, test: (value: unknown) => boolean): ConfigValueType {
  return { expected, check: (value) => (test(value) ? undefined : { at: [], expected, got: value }) };
}

export const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
export const isNonEmptyString = (v: unknown): v is string => typeof v === "string" && v.length > 0;

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

/** A whole number from `min` to `max` (both included). */
export function integerRangeType(min: number, max: number): ConfigValueType {
  const expected = `a whole number from ${min} to ${max}`;
  return scalarType(expected, (v) => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max);
}

// ---------------------------------------------------------------------------
// The `approvals` section (docs/approvals.md)
// ---------------------------------------------------------------------------

/** A string out of a fixed set. */
export function oneOfType(values: readonly string[]): ConfigValueType {
  const expected = `one of ${values.join(", ")}`;
  return scalarType(expected, (v) => typeof v === "string" && values.includes(v));
}

/** An absolute http(s) URL. */
export const httpUrlType = scalarType("an http(s) URL", (v) => {
  if (!isNonEmptyString(v)) return false;
  try {
    const url = new URL(v);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
});

/**
 * An MCP server's `url`: an http(s) URL, or one with `${VAR}` in it, which is judged after the variables
 * are expanded when the server starts (`https://${HOST}/mcp` is no URL until then).
 */
export const mcpUrlType = scalarType("an http(s) URL (may contain ${VAR})", (v) => httpUrlType.check(v) === undefined || (isNonEmptyString(v) && v.includes("${")));

/** The rule categories of `src/approval/types.ts` (deny rules may name one). */
export const RULE_CATEGORIES = [
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
  "plugin_request",
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
export const envNameType = scalarType("an environment variable name", (v) => typeof v === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(v));

/**
 * A list of mappings with known string fields. Unknown fields are kept and ignored (a newer
 * release may add some); `anyOf` lists fields of which at least one must be present.
 */
export function recordListType(spec: {
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

/** A mapping of names to strings (`env`, `headers`); numbers are not coerced, so `PORT: 8080` asks for quotes. */
export const stringMapType: ConfigValueType = {
  expected: "a mapping of names to strings",
  check(value) {
    if (!isPlainObject(value)) return { at: [], expected: "a mapping of names to strings", got: value };
    for (const [key, item] of Object.entries(value)) {
      if (typeof item !== "string") return { at: [key], expected: "a string (quote numbers and booleans)", got: item };
    }
    return undefined;
  },
};

/** One name or a list of names (`tools.include: search` is `[search]`). */
export const stringOrListType: ConfigValueType = {
  expected: "a string or a list of strings",
  check(value) {
    if (isNonEmptyString(value)) return undefined;
    const problem = ConfigTypes.stringList.check(value);
    return problem && problem.at.length === 0 ? { ...problem, expected: "a string or a list of strings" } : problem;
  },
};

const TRUE_WORDS = ["true", "yes", "on", "1"];
const FALSE_WORDS = ["false", "no", "off", "0"];

/** A boolean, or one of the words people write for one (`yes`, `off`, `1`, ...; any case). */
export const boolishType = scalarType(
  `a boolean (or one of ${[...TRUE_WORDS, ...FALSE_WORDS].join(", ")})`,
  (v) => typeof v === "boolean" || v === 1 || v === 0 || (typeof v === "string" && [...TRUE_WORDS, ...FALSE_WORDS].includes(v.trim().toLowerCase())),
);

/** The boolean a value of `boolishType` means. */
export function boolishValue(value: boolean | string | number): boolean {
  if (typeof value === "boolean") return value;
  return TRUE_WORDS.includes(String(value).trim().toLowerCase());
}

/** A list of shell hooks: mappings with a `command`, an optional `matcher` (a valid regular expression) and `timeout` (seconds). */
export const shellHookListType: ConfigValueType = {
  expected: "a list of mappings with `command`",
  check(value) {
    if (!Array.isArray(value)) return { at: [], expected: "a list of mappings with `command`", got: value };
    for (const [index, item] of value.entries()) {
      if (!isPlainObject(item)) return { at: [index], expected: "a mapping with `command`", got: item };
      if (!isNonEmptyString(item.command)) return { at: [index, "command"], expected: "a non-empty string", got: item.command };
      if (item.matcher !== undefined && item.matcher !== null) {
        if (!isNonEmptyString(item.matcher)) return { at: [index, "matcher"], expected: "a regular expression", got: item.matcher };
        try {
          new RegExp(item.matcher);
        } catch (err) {
          return { at: [index, "matcher"], expected: "a valid regular expression", got: item.matcher, gotText: `${describeValue(item.matcher)}: ${(err as Error).message}` };
        }
      }
      if (item.timeout !== undefined && item.timeout !== null && !(isNumber(item.timeout) && item.timeout > 0)) {
        return { at: [index, "timeout"], expected: "a positive number of seconds", got: item.timeout };
      }
    }
    return undefined;
  },
};
