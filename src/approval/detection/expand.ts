/**
 * Parameter expansion and word splitting over a word's parts (`Word.parts`), the
 * way bash does them: known values are put in, only unquoted expansions are split,
 * on the characters of `IFS` in force. `IFS=:; x="rm:-rf:/"; $x` is `rm -rf /`;
 * `"$x"` stays one word; `$x""` is split and the empty quoted text joins the last word.
 *
 * What the walk knows about variables lives in one map (`Env`), with these keys:
 * - `NAME`: a variable's value (for an array, its first element);
 * - `NAME[@]`: an array's elements, joined by NUL (NUL cannot occur in a bash value);
 * - `1`…`9`, `#`, `@`: positional parameters (`@` NUL-joined);
 * - `IFS`: absent means the default (space, tab, newline); `UNKNOWN_VALUE` means it was set
 *   to something only known when it runs, so no unquoted expansion can be split here;
 * - `!NAME`: the variable was given secrets (`T=$(cat ~/.netrc)`), so what it expands to
 *   carries them; `!` alone: some variable was (checked first, so most words pay nothing).
 * A name that is absent is unknown (it may come from the environment), never empty.
 */
import type { Word, WordPart } from "../../shell/types.js";
import { patternSource } from "./glob.js";

/** Variables whose values are known (static) at this point of the walk. */
export type Env = ReadonlyMap<string, string>;

/** The key marking that variable `name` was given secrets. */
export function secretKey(name: string): string {
  return `!${name}`;
}

/** The key marking that some variable was given secrets. */
export const SECRETS_HELD = "!";

const VARIABLE_NAMES = /\$\{?[#!]?([A-Za-z_][A-Za-z0-9_]*)/g;

/** Does this expansion (`$T`, `${T:-x}`, `${#T}`) use a variable that was given secrets? */
function expandsSecret(raw: string, env: Env): boolean {
  for (const m of raw.matchAll(VARIABLE_NAMES)) if (env.has(secretKey(dereference(m[1]!, env)))) return true;
  return false;
}

/** Marks a variable (IFS) whose value is only known when it runs. */
export const UNKNOWN_VALUE = "\u0000";

/**
 * A variable that holds one of a few literal values, depending on a branch
 * (`if …; then s=rg; else s=grep; fi`): `ALTERNATIVES` then the values, NUL-separated.
 * Expansion treats it as unknown; the walk evaluates a command once per value (shell-analysis.ts).
 */
const ALTERNATIVES = "\u0000|";

export function alternativesValue(values: readonly string[]): string {
  return ALTERNATIVES + values.join("\u0000");
}

/** The possible values of a variable's stored value: one when plain, several for alternatives, null when unknown. */
export function possibleValues(stored: string | undefined): string[] | null {
  if (stored === undefined || stored === UNKNOWN_VALUE || isPartial(stored)) return null;
  return stored.startsWith(ALTERNATIVES) ? stored.slice(ALTERNATIVES.length).split("\u0000") : [stored];
}

export function isAlternatives(stored: string | undefined): boolean {
  return stored !== undefined && stored.startsWith(ALTERNATIVES);
}

/**
 * A variable whose value is only partly known: `PARTIAL` then the value as far as it is known,
 * the rest as written (`out="reports/cov-${SHA:0:7}.txt"`, `f` looping over `git ls-files`).
 * Expansion treats it as unknown, but the known head still says where a path points
 * (`reports/…` stays in the project), so it takes part in path classes.
 */
const PARTIAL = "\u0000~";

export function partialValue(text: string): string {
  return PARTIAL + text;
}

/** What a stored value says about itself when written into a word: the value, the partial text, or null. */
export function knownText(stored: string | undefined): string | null {
  if (stored === undefined || stored === UNKNOWN_VALUE || isAlternatives(stored)) return null;
  return stored.startsWith(PARTIAL) ? stored.slice(PARTIAL.length) : stored;
}

function isPartial(stored: string | undefined): boolean {
  return stored !== undefined && stored.startsWith(PARTIAL);
}

/** The key of an array's elements in `Env`. */
export function arrayKey(name: string): string {
  return `${name}[@]`;
}

export const DEFAULT_IFS = " \t\n";

/** What a substitution printed, when that is known without running anything. */
export interface PartOutput {
  text: string | null;
  network: boolean;
  decoded: boolean;
  /** It carries secrets (`$(cat ~/.git-credentials)`). */
  secret?: boolean;
}

export interface Expanded {
  /** The words bash would pass, or null when some part is only known when it runs. */
  fields: string[] | null;
  /** Some known output put in came from the network / was decoded. */
  network: boolean;
  decoded: boolean;
  /** Some output put in carries secrets. */
  secret: boolean;
  /** An unquoted expansion or substitution is part of the word (it may split into several words). */
  splittable: boolean;
}

const SIMPLE = /^\$(?:([A-Za-z_][A-Za-z0-9_]*)|([0-9@*#!?$-]))$/;
const INDIRECT = /^\$\{!([A-Za-z_][A-Za-z0-9_]*)\}$/;
const MAX_NAMEREF_CHAIN = 8;

/** The key under which a nameref (`declare -n ref=x`) records the variable it names (`&ref` → `x`). */
export function namerefKey(name: string): string {
  return `&${name}`;
}

/** The variable `name` stands for, through namerefs. */
function dereference(name: string, env: Env | null): string {
  let current = name;
  for (let i = 0; i < MAX_NAMEREF_CHAIN; i++) {
    const next = env?.get(namerefKey(current));
    if (next === undefined) break;
    current = next;
  }
  return current;
}
const BRACED = /^\$\{(#)?([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#!?$-])(?:\[([@*]|[A-Za-z0-9_.-]+)\])?\}$/;
/** `${name OP WORD}`: the operators worked out here when NAME and WORD are known. */
const OPERATOR = /^\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9]+)(%%|%|##|#|:-|-|:\+|\+|:\?|\?|:=|=|\/\/|\/|\^\^|,,|\^|,|:(?=\d))([\s\S]*)\}$/;


/** `${name%pat}`, `${name##pat}`, `${name/pat/rep}`, `${name:-word}`, `${name^^}`, `${name:1:3}`. */
function operate(value: string | undefined, op: string, word: string): string | null {
  // `${x:?msg}` and `${x?msg}` stop the command when x is unset (or empty); otherwise they are x.
  if (op === ":?" || op === "?" || op === ":=" || op === "=") return value !== undefined && (value !== "" || op.length === 1) ? value : null;
  if (op === ":-") return value !== undefined && value !== "" ? value : word;
  if (op === "-") return value !== undefined ? value : word;
  if (op === ":+") return value !== undefined && value !== "" ? word : "";
  if (op === "+") return value !== undefined ? word : "";
  if (value === undefined) return null;
  switch (op) {
    case "%":
    case "%%": {
      // The shortest (%) or longest (%%) suffix that matches goes.
      const re = new RegExp(`^${patternSource(word, false)}$`);
      const starts = [...Array(value.length + 1).keys()];
      for (const i of op === "%" ? starts.reverse() : starts) if (re.test(value.slice(i))) return value.slice(0, i);
      return value;
    }
    case "#":
    case "##": {
      // The shortest (#) or longest (##) prefix that matches goes.
      const re = new RegExp(`^${patternSource(word, false)}$`);
      const ends = [...Array(value.length + 1).keys()];
      for (const i of op === "#" ? ends : ends.reverse()) if (re.test(value.slice(0, i))) return value.slice(i);
      return value;
    }
    case "/":
    case "//": {
      const slash = word.search(/(?<!\\)\//);
      const pattern = slash < 0 ? word : word.slice(0, slash);
      const replacement = slash < 0 ? "" : word.slice(slash + 1);
      if (pattern === "") return value;
      return value.replace(new RegExp(patternSource(pattern, false), op === "//" ? "g" : ""), () => replacement);
    }
    case "^^":
      return value.toUpperCase();
    case ",,":
      return value.toLowerCase();
    case "^":
      return value.charAt(0).toUpperCase() + value.slice(1);
    case ",":
      return value.charAt(0).toLowerCase() + value.slice(1);
    case ":": {
      const m = /^(\d+)(?::(\d+))?$/.exec(word);
      if (!m) return null;
      return m[2] === undefined ? value.slice(Number(m[1])) : value.slice(Number(m[1]), Number(m[1]) + Number(m[2]));
    }
    default:
      return null;
  }
}

/** Variables bash fills with digits only (`$$`, `$RANDOM`, …). */
const DIGITS_ONLY: ReadonlySet<string> = new Set(["$", "BASHPID", "RANDOM", "SRANDOM", "SECONDS", "EPOCHSECONDS", "LINENO", "UID", "EUID"]);

/** `$!`: the pid of the last background job, which the command itself started. Kept as written. */
const BACKGROUND_PID = "$!";

/**
 * The value(s) of a parameter expansion as written (`$x`, `${x}`, `${a[@]}`, `${a[1]}`,
 * `${#x}`, `$@`): one string, a list (`"$@"`, `"${a[@]}"`), or null when unknown.
 */
function lookup(raw: string, env: Env | null): string | string[] | null {
  let name: string;
  let index: string | undefined;
  let length = false;
  const indirect = INDIRECT.exec(raw);
  if (indirect) {
    // `${!ptr}`: the value of the variable whose name is the value of ptr.
    const target = lookup(`$${indirect[1]}`, env);
    return typeof target === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(target) ? lookup(`$${target}`, env) : null;
  }
  const simple = SIMPLE.exec(raw);
  if (simple) name = simple[1] ?? simple[2]!;
  else {
    const braced = BRACED.exec(raw);
    if (!braced) {
      const op = OPERATOR.exec(raw);
      // WORD with expansions of its own is not worked out here.
      if (!op || /[$`]/.test(op[3]!)) return null;
      const stored = env?.get(dereference(op[1]!, env));
      if (stored === UNKNOWN_VALUE || isAlternatives(stored) || isPartial(stored)) return null;
      // A variable the command did not set may come from the environment: unknown, whatever the operator.
      if (stored === undefined) return null;
      return operate(stored, op[2]!, op[3]!.replace(/^(["'])([\s\S]*)\1$/, "$2"));
    }
    length = braced[1] !== undefined;
    name = braced[2]!;
    index = braced[3];
  }
  if (name === "!") return BACKGROUND_PID;
  name = dereference(name, env);
  const stored = env?.get(name);
  if (stored === undefined && index === undefined) {
    // Only digits, whatever they are: enough to tell that `/tmp/ci-$$` stays in /tmp.
    if (DIGITS_ONLY.has(name)) return length ? "4" : "4242";
    // The home directory of the environment the command starts in (`HOME=… cmd` sets it first).
    if (name === "HOME") return length ? "1" : "~";
  }
  if (name === "IFS" && index === undefined) {
    const ifs = env?.get("IFS");
    if (ifs === UNKNOWN_VALUE) return null;
    return length ? String((ifs ?? DEFAULT_IFS).length) : (ifs ?? DEFAULT_IFS);
  }
  if (name === "@" || name === "*") {
    const all = env?.get("@");
    if (all === undefined) return null;
    return all === "" ? [] : all.split("\0");
  }
  if (index === "@" || index === "*") {
    const all = env?.get(arrayKey(name));
    if (all === undefined) return null;
    const list = all === "" ? [] : all.split("\0");
    return length ? String(list.length) : list;
  }
  let value: string | undefined;
  const element = index !== undefined ? env?.get(`${name}[${index}]`) : undefined;
  if (element !== undefined) value = element;
  else if (index !== undefined && !/^[0-9]+$/.test(index)) return null;
  else if (index !== undefined && index !== "0") value = env?.get(arrayKey(name))?.split("\0")[Number(index)];
  else value = env?.get(name);
  if (value === undefined || value === UNKNOWN_VALUE || isAlternatives(value) || isPartial(value)) return null;
  return length ? String(value.length) : value;
}

/** Splits words the way bash does after expansion, into `fields`. */
class Splitter {
  readonly fields: string[] = [];
  private current = "";
  /** The current word exists even if empty (quoted text, `""`). */
  private exists = false;
  /** IFS white space was seen: the next character starts a new word. */
  private pendingBreak = false;

  constructor(private readonly ifs: string) {}

  private startIfPending(): void {
    if (!this.pendingBreak) return;
    if (this.current !== "" || this.exists) this.fields.push(this.current);
    this.current = "";
    this.exists = false;
    this.pendingBreak = false;
  }

  /** Text that is not split (literal, or a quoted expansion). */
  text(t: string): void {
    this.startIfPending();
    this.current += t;
    this.exists = true;
  }

  /** `"$@"`: every element a word of its own; the first joins what came before, the last what follows. */
  quotedList(list: readonly string[]): void {
    if (list.length === 0) return;
    this.startIfPending();
    list.forEach((item, i) => {
      if (i > 0) {
        this.fields.push(this.current);
        this.current = "";
      }
      this.current += item;
      this.exists = true;
    });
  }

  /** Ends the current word, if there is one (between the elements of an unquoted `$@`). */
  boundary(): void {
    if (this.current !== "" || this.exists) this.pendingBreak = true;
  }

  /** An unquoted expansion's text: split on IFS characters. */
  split(t: string): void {
    for (const c of t) {
      if (this.ifs.includes(c)) {
        if (c === " " || c === "\t" || c === "\n") {
          if (this.current !== "" || this.exists) this.pendingBreak = true;
        } else {
          // A non-blank IFS character always ends a word, even an empty one.
          this.fields.push(this.current);
          this.current = "";
          this.exists = false;
          this.pendingBreak = false;
        }
        continue;
      }
      this.startIfPending();
      this.current += c;
    }
  }

  finish(): string[] {
    if (this.current !== "" || this.exists) this.fields.push(this.current);
    return this.fields;
  }
}

/** `text` split into fields by `ifs`, as `read` and unquoted expansions do. */
export function splitByIfs(text: string, ifs: string): string[] {
  const s = new Splitter(ifs);
  s.split(text);
  return s.finish();
}

/**
 * Expands a word from its parts. `outputs[i]` is what `word.substitutions[i]` printed, when known.
 * Returns null when the word has no parts to work from (the caller falls back to its value).
 * The value of an assignment (`x=$(…)`) is one word: nothing in it is split, and a list is
 * joined with spaces, as bash does.
 */
export function expandWord(word: Word, env: Env | null, outputs: readonly (PartOutput | null)[] | null, assignment = false): Expanded | null {
  const parts: readonly WordPart[] | undefined = word.parts;
  if (!parts) return null;
  const ifsValue = env?.get("IFS");
  const ifs = ifsValue === undefined ? DEFAULT_IFS : ifsValue;
  const splitter = new Splitter(ifs === UNKNOWN_VALUE ? "" : ifs);
  let known = true;
  let network = false;
  let decoded = false;
  let secret = false;
  let splittable = false;
  for (const part of parts) {
    if (part.kind === "text") {
      splitter.text(part.text);
      continue;
    }
    const quoted = part.quoted || assignment;
    if (!quoted) splittable = true;
    let value: string | string[] | null;
    if (part.kind === "expansion") {
      value = lookup(part.raw, env);
      if (env?.has(SECRETS_HELD) && expandsSecret(part.raw, env)) secret = true;
    } else {
      const out = outputs?.[part.index] ?? null;
      if (out?.network) network = true;
      if (out?.decoded) decoded = true;
      if (out?.secret) secret = true;
      // Command substitution drops the trailing newlines of the output.
      value = out && out.text !== null ? out.text.replace(/\n+$/, "") : null;
    }
    if (value === null) {
      known = false;
      continue;
    }
    if (!quoted && ifs === UNKNOWN_VALUE) {
      known = false;
      continue;
    }
    if (Array.isArray(value)) {
      if (assignment) splitter.text(value.join(" "));
      else if (quoted) splitter.quotedList(value);
      else
        for (const item of value) {
          splitter.boundary();
          splitter.split(item);
          splitter.boundary();
        }
    } else if (quoted) splitter.text(value);
    else splitter.split(value);
  }
  return { fields: known ? splitter.finish() : null, network, decoded, secret, splittable };
}
