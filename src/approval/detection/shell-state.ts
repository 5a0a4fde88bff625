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
import type { CompoundCommand, SimpleCommand } from "../../shell/types.js";
import { alternativesValue, arrayKey, isAlternatives, possibleValues, SECRETS_HELD, secretKey, UNKNOWN_VALUE } from "./expand.js";
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
  // The elements of an associative array (`tools[lint]`).
  const element = `${name}[`;
  for (const key of env.keys()) if (key.startsWith(element)) env.delete(key);
}

/** `declare -A name=([key]=value …)`: the elements, when every key and value is literal; null otherwise. */
export function associativeElements(raw: string): [string, string][] | null {
  const body = /^[A-Za-z_][A-Za-z0-9_]*=\(([\s\S]*)\)$/.exec(raw)?.[1];
  if (body === undefined || /[$`]/.test(body)) return null;
  const out: [string, string][] = [];
  const re = /\s*\[([^\]]+)\]=(?:"([^"]*)"|'([^']*)'|([^\s"']*))\s*/gy;
  let end = 0;
  for (let m = re.exec(body); m; m = re.exec(body)) {
    out.push([m[1]!.replace(/^["']|["']$/g, ""), m[2] ?? m[3] ?? m[4] ?? ""]);
    end = re.lastIndex;
    if (end >= body.length) break;
  }
  return end === body.length || body.trim() === "" ? out : null;
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
 * The variable was given secrets. The mark stays when it is given something else later:
 * a false alarm on a reused name costs a question, a lost mark costs a leaked credential.
 */
export function markSecret(env: Variables, name: string): void {
  env.set(secretKey(name), "1");
  env.set(SECRETS_HELD, "1");
}

/** Secret marks made in a scope that may have run stay after it. */
function isSecretMark(key: string): boolean {
  return key.charCodeAt(0) === 33; // "!"
}

/** Most literal values a variable is followed with across branches; more makes it unknown. */
const MAX_ALTERNATIVES = 4;

/** `outer[key]` may be any of `values` (each a stored value): alternatives, or unknown when too many or any unknown. */
function setPossible(outer: Variables, key: string, stored: readonly (string | undefined)[]): void {
  const bracket = key.indexOf("[");
  const name = bracket > 0 ? key.slice(0, bracket) : key;
  const all: string[] = [];
  for (const v of stored) {
    const values = possibleValues(v);
    if (values === null) return forgetVariable(outer, name);
    for (const x of values) if (!all.includes(x)) all.push(x);
  }
  // Arrays, the IFS, namerefs and positional parameters are not followed as alternatives.
  if (all.length === 0 || all.length > MAX_ALTERNATIVES || bracket > 0 || key === "IFS" || key.startsWith("&") || isPositionalKey(key)) return forgetVariable(outer, name);
  outer.set(key, all.length === 1 ? all[0]! : alternativesValue(all));
}

/**
 * After a scope that may not have run, or run more than once (a branch, a loop body, the
 * right side of `&&`): a variable it changed holds its old or its new value afterwards
 * (alternatives when both are literal), else it is unknown. Positional parameters are left
 * alone when `keepPositional` (a function call has its own).
 */
export function invalidateChanges(outer: Variables, inner: ReadonlyMap<string, string> | null, keepPositional = false): void {
  const keys = new Set<string>([...outer.keys(), ...(inner?.keys() ?? [])]);
  for (const key of keys) {
    if (keepPositional && isPositionalKey(key)) continue;
    if (outer.get(key) === inner?.get(key)) continue;
    if (isSecretMark(key)) {
      outer.set(key, "1");
      continue;
    }
    setPossible(outer, key, [outer.get(key), inner?.get(key)]);
  }
}

/** After `if … else …`: exactly one branch ran, so a variable holds what one of them left. */
export function mergeBranches(outer: Variables, branches: readonly (ReadonlyMap<string, string> | null)[]): void {
  const keys = new Set<string>(outer.keys());
  for (const b of branches) for (const k of b?.keys() ?? []) keys.add(k);
  for (const key of keys) {
    const values = branches.map((b) => b?.get(key));
    if (values.every((v) => v === outer.get(key))) continue;
    if (isSecretMark(key)) {
      outer.set(key, "1");
      continue;
    }
    setPossible(outer, key, values);
  }
}

const VARIABLE_USE = /\$\{?#?([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * The combinations of values to walk `cmd` with when its words use variables that hold
 * alternatives (each a list of [name, value]); null when none does. At most `MAX_VARIANTS`
 * combinations: beyond that the variables stay unknown.
 */
export function alternativeCombinations(cmd: SimpleCommand, env: ReadonlyMap<string, string>, max = 8): [string, string][][] | null {
  let any = false;
  for (const v of env.values()) if (isAlternatives(v)) any = true;
  if (!any) return null;
  const names = new Set<string>();
  const words = [...cmd.argv, ...cmd.redirects.map((r) => r.target)];
  for (const w of words) {
    for (const part of w.parts ?? []) {
      if (part.kind !== "expansion") continue;
      for (const m of part.raw.matchAll(VARIABLE_USE)) if (isAlternatives(env.get(m[1]!))) names.add(m[1]!);
    }
  }
  if (names.size === 0) return null;
  let combos: [string, string][][] = [[]];
  for (const name of names) {
    const values = possibleValues(env.get(name))!;
    const next: [string, string][][] = [];
    for (const combo of combos) for (const v of values) next.push([...combo, [name, v]]);
    if (next.length > max) return null;
    combos = next;
  }
  return combos;
}
