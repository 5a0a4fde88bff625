/**
 * From parsed words to arguments: variables known from earlier in the script
 * (`a=r; $a$b`) and positional parameters of `sh -c '…' _ ARGS` are put in,
 * brace expansions are expanded, unquoted expansions are split.
 */
import type { Word } from "../../shell/types.js";
import { expandWord, knownText, type Env, type PartOutput } from "./expand.js";
import type { Arg } from "./model.js";

export type { Env } from "./expand.js";

/** The output of a command substitution, when it can be computed without running anything. */
export type SubstitutionOutput = PartOutput;

export type SubstitutionResolver = (word: Word) => (SubstitutionOutput | null)[] | null;

const VAR_RE = /\$(?:\{([A-Za-z_][A-Za-z0-9_]*|[0-9@*#]|[1-9][0-9]*)\}|([A-Za-z_][A-Za-z0-9_]*|[0-9@*#]))/g;
const MAX_BRACE_WORDS = 64;

/** The program name bash runs: the basename (`/usr/bin/rm`, `./rm` → `rm`). */
export function basename(value: string): string {
  const slash = value.lastIndexOf("/");
  return slash >= 0 && slash < value.length - 1 ? value.slice(slash + 1) : value;
}

function isQuoted(raw: string): boolean {
  return raw.includes('"') || raw.includes("'");
}

/** Expands `{a,b}` and `{1..3}` (bash brace expansion), at most 64 words. */
export function expandBraces(value: string): string[] {
  let depth = 0;
  let open = -1;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch === "\\") {
      i++;
      continue;
    }
    if (ch === "{") {
      if (depth === 0) open = i;
      depth++;
    } else if (ch === "}" && depth > 0) {
      depth--;
      if (depth === 0) {
        const body = value.slice(open + 1, i);
        const alternatives = splitTopLevelCommas(body);
        let items: string[] | null = null;
        if (alternatives.length > 1) items = alternatives;
        else {
          const seq = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(body) ?? /^([a-zA-Z])\.\.([a-zA-Z])()$/.exec(body);
          if (seq) items = sequence(seq[1]!, seq[2]!, seq[3]);
        }
        if (!items) continue;
        const head = value.slice(0, open);
        const tails = expandBraces(value.slice(i + 1));
        const out: string[] = [];
        for (const item of items) {
          for (const expanded of expandBraces(item)) {
            for (const tail of tails) {
              out.push(head + expanded + tail);
              if (out.length >= MAX_BRACE_WORDS) return out;
            }
          }
        }
        return out;
      }
    }
  }
  return [value];
}

function splitTopLevelCommas(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === "\\") i++;
    else if (ch === "{") depth++;
    else if (ch === "}") depth--;
    else if (ch === "," && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

function sequence(from: string, to: string, step?: string): string[] | null {
  const a = Number(from);
  const b = Number(to);
  if (Number.isInteger(a) && Number.isInteger(b)) {
    const s = Math.abs(Number(step) || 1);
    const out: string[] = [];
    for (let n = a; a <= b ? n <= b : n >= b; n += a <= b ? s : -s) {
      out.push(String(n));
      if (out.length >= MAX_BRACE_WORDS) break;
    }
    return out;
  }
  const ca = from.charCodeAt(0);
  const cb = to.charCodeAt(0);
  const out: string[] = [];
  for (let c = ca; ca <= cb ? c <= cb : c >= cb; c += ca <= cb ? 1 : -1) out.push(String.fromCharCode(c));
  return out;
}

/** Finds where a substitution sits in a word's value: `$(TEXT)`, `` `TEXT` `` or `<(TEXT)`. */
function locate(value: string, text: string, from: number): [number, number] | null {
  let at = value.indexOf(text, from);
  while (at >= 0) {
    let s = at - 1;
    while (s >= 0 && (value[s] === " " || value[s] === "\t" || value[s] === "\n")) s--;
    let e = at + text.length;
    while (e < value.length && (value[e] === " " || value[e] === "\t" || value[e] === "\n")) e++;
    if (s >= 0 && value[s] === "`" && value[e] === "`") return [s, e + 1];
    if (s >= 1 && value[s] === "(" && value[e] === ")" && (value[s - 1] === "$" || value[s - 1] === "<" || value[s - 1] === ">")) return [s - 1, e + 1];
    at = value.indexOf(text, at + 1);
  }
  return null;
}

/** Builtins whose `NAME=value` arguments are assignments, so their values are not split (`export x=$(cmd)`). */
export const DECLARATION_BUILTINS: ReadonlySet<string> = new Set(["export", "declare", "typeset", "local", "readonly"]);

const ASSIGNMENT_WORD = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;

/** Is this argument of a declaration builtin an assignment (`x=$(cmd)`, not `"x=$(cmd)"` split by hand)? */
export function isAssignmentWord(word: Word): boolean {
  return ASSIGNMENT_WORD.test(word.raw);
}

/** What substitutions put into a word brought with them: network text, decoded text, secrets. */
export interface Taint {
  network: boolean;
  decoded: boolean;
  secret: boolean;
}

const CLEAN: Taint = Object.freeze({ network: false, decoded: false, secret: false });

/** The flags an argument carries: only those that are set, and nothing when none is. */
function taintOf(flags: Taint): Partial<Taint> | null {
  if (!flags.network && !flags.decoded && !flags.secret) return null;
  const out: Partial<Taint> = {};
  if (flags.network) out.network = true;
  if (flags.decoded) out.decoded = true;
  if (flags.secret) out.secret = true;
  return out;
}

function pushArg(out: Arg[], arg: Arg, taint: Partial<Taint> | null): void {
  out.push(taint ? Object.assign(arg, taint) : arg);
}

/**
 * Resolves one word into the arguments bash would pass. Pushes onto `out`.
 * Returns flags about substitutions whose output was put in. An assignment's value is never split.
 */
export function resolveWord(word: Word, env: Env | null, substitutions: SubstitutionResolver | null, out: Arg[], assignment = false): Taint {
  if (word.static) {
    if (word.braceExpansion && !assignment) {
      for (const v of expandBraces(word.value)) out.push({ value: v, static: true, splittable: false, word });
    } else out.push({ value: word.value, static: true, splittable: false, word });
    return CLEAN;
  }
  const outputs = word.substitutions.length > 0 && substitutions ? substitutions(word) : null;
  const expanded = expandWord(word, env, outputs, assignment);
  if (!expanded) return resolveByValue(word, env, outputs, out);
  const flags: Taint = { network: expanded.network, decoded: expanded.decoded, secret: expanded.secret };
  const taint = taintOf(flags);
  if (expanded.fields) {
    for (const value of expanded.fields) pushArg(out, { value, static: true, splittable: false, word }, taint);
    return flags;
  }
  pushArg(out, { value: partialValue(word, env, outputs), static: false, splittable: expanded.splittable, word }, taint);
  return flags;
}

/** A word only partly known, for display and path classes: known expansions put in, the rest as written. */
function partialValue(word: Word, env: Env | null, outputs: readonly (SubstitutionOutput | null)[] | null): string {
  let value = "";
  for (const part of word.parts ?? []) {
    if (part.kind === "text") value += part.text;
    else if (part.kind === "expansion") {
      const known = env && /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(part.raw) ? knownText(env.get(part.raw.replace(/[${}]/g, ""))) : null;
      value += known ?? part.raw;
    } else {
      const o = outputs?.[part.index];
      value += o && o.text !== null ? o.text.replace(/\n+$/, "") : `$(${word.substitutions[part.index]?.script.text ?? ""})`;
    }
  }
  return value;
}

/** For words without parts (made by hand): known variables put into the value, then split on blanks. */
function resolveByValue(word: Word, env: Env | null, outputs: readonly (SubstitutionOutput | null)[] | null, out: Arg[]): Taint {
  const flags: Taint = { network: false, decoded: false, secret: false };
  let value = word.value;
  let known = true;
  let replaced = false;
  const quoted = isQuoted(word.raw);
  if (word.substitutions.length > 0) {
    let from = 0;
    for (let i = 0; i < word.substitutions.length; i++) {
      const sub = word.substitutions[i]!;
      const output = outputs?.[i] ?? null;
      const where = sub.kind === "command" ? locate(value, sub.script.text, from) : null;
      if (output && output.text !== null && where) {
        const text = output.text.replace(/\n+$/, "");
        value = value.slice(0, where[0]) + text + value.slice(where[1]);
        from = where[0] + text.length;
        replaced = true;
      } else known = false;
      if (output?.network) flags.network = true;
      if (output?.decoded) flags.decoded = true;
      if (output?.secret) flags.secret = true;
    }
  }
  let splitAll = false;
  if (value.includes("$") && ((env && env.size > 0) || value.includes("IFS"))) {
    value = value.replace(VAR_RE, (whole, braced: string | undefined, bare: string | undefined) => {
      const name = braced ?? bare ?? "";
      // An unset IFS splits on blanks: `rm${IFS}-rf${IFS}/` is `rm -rf /`.
      const v = env?.get(name) ?? (name === "IFS" ? " " : undefined);
      if (v === undefined || knownText(v) !== v) return whole;
      replaced = true;
      if (name === "@" || name === "*") splitAll = true;
      return v.replace(/\0/g, " ");
    });
  }
  const taint = taintOf(flags);
  if (known && replaced && !/[$`]/.test(value)) {
    if (!quoted || splitAll) {
      for (const part of value.split(/[ \t\n]+/)) if (part !== "") pushArg(out, { value: part, static: true, splittable: false, word }, taint);
    } else pushArg(out, { value, static: true, splittable: false, word }, taint);
    return flags;
  }
  pushArg(out, { value, static: false, splittable: !quoted && /\$|`/.test(word.raw), word }, taint);
  return flags;
}
