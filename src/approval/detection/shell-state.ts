/**
 * What the walk knows about the shell it reads, beyond the program that runs:
 * variables (their keys are described in expand.ts), functions, aliases (and
 * `hash -p` entries) and namerefs, and how the changes made in a scope reach
 * the scope around it. Pure functions over plain maps; the walk decides when
 * to call them (shell-analysis.ts).
 *
 * The rule that keeps this sound: a value is known only when every way bash can
 * reach a point sets it to that value. What a subshell changes is dropped (as
 * bash does); what a branch, a loop body or an `&&`/`||` operand changes becomes
 * unknown after it; what `source`, a computed `eval` or an unknown nameref can
 * change makes every variable unknown.
 */
import type { CompoundCommand } from "../../shell/types.js";
import { arrayKey, UNKNOWN_VALUE } from "./expand.js";
import type { Arg } from "./model.js";

export interface Definitions {
  /** Functions by name: a call walks the body with the call's arguments as `$1 …`. */
  functions: Map<string, CompoundCommand>;
  /** Alias (or `hash -p`) name → the text that replaces it; null when that text is only known when it runs. */
  aliases: Map<string, string | null>;
  /** Nameref (`declare -n`) → the variable it names; null when that is only known when it runs. */
  namerefs: Map<string, string | null>;
}

export function newDefinitions(): Definitions {
  return { functions: new Map(), aliases: new Map(), namerefs: new Map() };
}

/** A new shell process starts with what the parent defined (exported functions, inherited values): a copy. */
export function copyDefinitions(d: Definitions): Definitions {
  return { functions: new Map(d.functions), aliases: new Map(d.aliases), namerefs: new Map(d.namerefs) };
}

export type Variables = Map<string, string>;

const POSITIONAL_KEYS: readonly string[] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "#", "@"];

export function isPositionalKey(key: string): boolean {
  return POSITIONAL_KEYS.includes(key) || /^[1-9][0-9]+$/.test(key);
}

export function forgetPositional(env: Variables): void {
  for (const key of [...env.keys()]) if (isPositionalKey(key) && key !== "0") env.delete(key);
}

/** `$0 $1 …` from `sh -c SCRIPT NAME ARGS`, a function call or `set --` (the first element is `$0`). */
export function setPositional(env: Variables, positional: readonly Arg[]): void {
  forgetPositional(env);
  env.delete("0");
  if (!positional.every((a) => a.static)) return;
  positional.forEach((a, i) => env.set(String(i), a.value));
  env.set("@", positional.slice(1).map((a) => a.value).join("\0"));
  env.set("#", String(Math.max(0, positional.length - 1)));
}

/** The variable now holds something only known when it runs. */
export function forgetVariable(env: Variables, name: string): void {
  if (name === "IFS") env.set("IFS", UNKNOWN_VALUE);
  else env.delete(name);
  env.delete(arrayKey(name));
}

/** Anything may have changed (`source FILE`, `eval "$X"`): every variable is unknown, IFS too. */
export function forgetAllVariables(env: Variables): void {
  env.clear();
  env.set("IFS", UNKNOWN_VALUE);
}

export function setVariable(env: Variables, name: string, value: string | null): void {
  if (value === null) forgetVariable(env, name);
  else {
    env.set(name, value);
    env.delete(arrayKey(name));
  }
}

export function setArray(env: Variables, name: string, elements: readonly string[] | null): void {
  if (elements === null) forgetVariable(env, name);
  else {
    env.set(arrayKey(name), elements.join("\0"));
    if (elements.length > 0) env.set(name, elements[0]!);
    else env.delete(name);
  }
}

/**
 * After a scope that may not have run, or run more than once (a branch, a loop body, the
 * right side of `&&`): every variable it changed is unknown in `outer`. Positional
 * parameters are left alone when `keepPositional` (a function call has its own).
 */
export function invalidateChanges(outer: Variables, inner: ReadonlyMap<string, string> | null, keepPositional = false): void {
  const keys = new Set<string>([...outer.keys(), ...(inner?.keys() ?? [])]);
  for (const key of keys) {
    if (keepPositional && isPositionalKey(key)) continue;
    if (outer.get(key) === inner?.get(key)) continue;
    const bracket = key.indexOf("[");
    forgetVariable(outer, bracket > 0 ? key.slice(0, bracket) : key);
  }
}
