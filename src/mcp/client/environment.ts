/**
 * What an MCP server entry's values and a stdio server's process environment become.
 *
 * `${VAR}` and Cursor's `${env:VAR}` are expanded in every string of an entry (hermes
 * `_interpolate_env_vars`): config files are shared and committed, secrets live in the environment.
 * An unset variable keeps its literal placeholder, so a missing secret shows up as `${GITHUB_TOKEN}`
 * in the server's own error instead of silently becoming an empty header.
 *
 * A stdio server is a program someone else wrote, often fetched by `npx -y` at start: it gets a
 * minimal environment (hermes `_build_safe_env`), never the parent's API keys and tokens. What it
 * needs beyond the baseline is named in the entry's `env`.
 */
import type { EnvVars } from "../../util/env-vars.js";

/** `${NAME}` or `${env:NAME}`; NAME as POSIX shells spell variable names. */
const PLACEHOLDER = /\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Nesting beyond this is left as it is: config values are shallow, and a hostile value must not exhaust the stack. */
const MAX_DEPTH = 32;

/**
 * `value` with every `${VAR}` / `${env:VAR}` in its strings replaced by `env[VAR]`, recursively
 * through plain objects and arrays (keys are not expanded). Unset variables keep the placeholder.
 * Returns new objects and arrays; the input is not modified.
 */
export function expandEnvVars<T>(value: T, env: EnvVars): T {
  return expand(value, env, 0) as T;
}

function expand(value: unknown, env: EnvVars, depth: number): unknown {
  if (typeof value === "string") return expandString(value, env);
  if (depth >= MAX_DEPTH || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => expand(item, env, depth + 1));
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    // defineProperty: a key named __proto__ stays an own property, as the config parser made it.
    Object.defineProperty(out, key, { value: expand(item, env, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function expandString(text: string, env: EnvVars): string {
  if (!text.includes("${")) return text;
  // One pass: a variable's value is never itself expanded (`A='${B}'` stays `${B}`).
  return text.replace(PLACEHOLDER, (whole, name: string) => {
    const found = Object.prototype.hasOwnProperty.call(env, name) ? env[name] : undefined;
    return found === undefined ? whole : found;
  });
}

/** Variables a stdio server inherits from the parent (hermes `_build_safe_env`, POSIX part). */
export const STDIO_BASELINE_VARS: readonly string[] = Object.freeze(["PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM", "SHELL", "TMPDIR"]);

/**
 * The environment of a stdio server: the baseline variables and every `XDG_*` present in
 * `parent`, then `configured` on top (an entry may override PATH or HOME). Nothing else of the
 * parent's environment is passed, so `OPENAI_API_KEY`, `AWS_SECRET_ACCESS_KEY` and the like stay out.
 *
 * The SDK's `StdioClientTransport` uses its own `getDefaultEnvironment()` only when `env` is not
 * given; pass this result as `env` so its list (which lacks LANG, TMPDIR, XDG_*) is not used.
 */
export function stdioEnvironment(configured: Readonly<Record<string, string>> | undefined, parent: EnvVars): Record<string, string> {
  const env: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const name of STDIO_BASELINE_VARS) {
    const value = ownValue(parent, name);
    if (value !== undefined) env[name] = value;
  }
  for (const name of Object.keys(parent)) {
    if (!name.startsWith("XDG_")) continue;
    const value = ownValue(parent, name);
    if (value !== undefined) env[name] = value;
  }
  if (configured !== undefined) {
    for (const [name, value] of Object.entries(configured)) if (typeof value === "string") env[name] = value;
  }
  return { ...env };
}

function ownValue(env: EnvVars, name: string): string | undefined {
  if (!Object.prototype.hasOwnProperty.call(env, name)) return undefined;
  const value = env[name];
  return typeof value === "string" ? value : undefined;
}
