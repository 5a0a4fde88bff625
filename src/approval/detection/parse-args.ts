/**
 * Applies the option model (options.ts) to a command's arguments: canonical
 * options and operands, and a canonical prefix string for approval keys.
 */
import type { Arg, ParsedArgs } from "./model.js";
import { PROGRAM_OPTIONS, type OptionSpec, type OptionStyle } from "./options.js";

const FLAG = 0;
const VALUE = 1;
const OPTIONAL = 2;
type Kind = typeof FLAG | typeof VALUE | typeof OPTIONAL;

interface Compiled {
  style: OptionStyle;
  shortKinds: Map<string, Kind>;
  longKinds: Map<string, Kind>;
  canonical: Readonly<Record<string, string>>;
  numeric: boolean;
  subs: Map<string, Compiled> | null;
  subDefault: Compiled | null;
  parent: Compiled | null;
}

const EMPTY_CANONICAL: Readonly<Record<string, string>> = Object.freeze({});

function compile(spec: OptionSpec, parent: Compiled | null): Compiled {
  const shortKinds = new Map<string, Kind>();
  for (const c of spec.flags ?? "") shortKinds.set(c, FLAG);
  for (const c of spec.values ?? "") shortKinds.set(c, VALUE);
  for (const c of spec.optionalValues ?? "") shortKinds.set(c, OPTIONAL);
  const longKinds = new Map<string, Kind>();
  for (const name of spec.long ?? []) longKinds.set(name, FLAG);
  for (const name of spec.longValues ?? []) longKinds.set(name, VALUE);
  for (const name of spec.longOptional ?? []) longKinds.set(name, OPTIONAL);
  const compiled: Compiled = {
    style: spec.style ?? parent?.style ?? "gnu",
    shortKinds,
    longKinds,
    canonical: spec.canonical ?? EMPTY_CANONICAL,
    numeric: spec.numeric ?? false,
    subs: null,
    subDefault: null,
    parent,
  };
  // A subcommand's own parsing is GNU-like unless it says otherwise (git push takes options after operands).
  if (compiled.style === "posix" && parent === null && spec.subcommands) {
    // the parent stays posix: its first operand is the subcommand.
  }
  if (spec.subcommands) {
    compiled.subs = new Map();
    for (const [word, sub] of Object.entries(spec.subcommands)) {
      const child = compile({ style: sub.style ?? (compiled.style === "posix" ? "gnu" : compiled.style), ...sub }, compiled);
      if (word === "*") compiled.subDefault = child;
      else compiled.subs.set(word, child);
    }
  }
  return compiled;
}

const compiledByProgram = new Map<string, Compiled>();
const compiledBySpec = new WeakMap<OptionSpec, Compiled>();
const DEFAULT_SPEC: OptionSpec = {};

function compiledFor(program: string, spec?: OptionSpec): Compiled {
  if (spec) {
    let c = compiledBySpec.get(spec);
    if (!c) {
      c = compile(spec, null);
      compiledBySpec.set(spec, c);
    }
    return c;
  }
  let c = compiledByProgram.get(program);
  if (!c) {
    c = compile(PROGRAM_OPTIONS[program] ?? DEFAULT_SPEC, null);
    compiledByProgram.set(program, c);
  }
  return c;
}

function canonicalOf(c: Compiled, written: string): string {
  for (let level: Compiled | null = c; level; level = level.parent) {
    const canon = level.canonical[written];
    if (canon !== undefined) return canon;
  }
  return written;
}

function shortKind(c: Compiled, ch: string): Kind | undefined {
  for (let level: Compiled | null = c; level; level = level.parent) {
    const k = level.shortKinds.get(ch);
    if (k !== undefined) return k;
  }
  return undefined;
}

/** Exact long name, else the unique name it is a prefix of (GNU getopt_long), else undefined. */
function resolveLong(c: Compiled, name: string): { name: string; kind: Kind } | undefined {
  for (let level: Compiled | null = c; level; level = level.parent) {
    const k = level.longKinds.get(name);
    if (k !== undefined) return { name, kind: k };
  }
  let found: { name: string; kind: Kind } | undefined;
  let ambiguous = false;
  for (let level: Compiled | null = c; level; level = level.parent) {
    for (const [candidate, kind] of level.longKinds) {
      if (candidate.startsWith(name)) {
        if (found && found.name !== candidate) ambiguous = true;
        found = { name: candidate, kind };
      }
    }
  }
  return ambiguous ? undefined : found;
}

function addOption(out: ParsedArgs, name: string, value: Arg | null): void {
  let values = out.options.get(name);
  if (!values) {
    values = [];
    out.options.set(name, values);
  }
  if (value) values.push(value);
}

function valueArg(source: Arg, value: string): Arg {
  return { value, static: source.static, splittable: false, word: source.word };
}

const FIND_LEADING = new Set(["-H", "-L", "-P"]);
/** `find` primaries that take one argument. */
const FIND_ONE_ARG = new Set([
  "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname", "-ilname",
  "-type", "-xtype", "-user", "-group", "-uid", "-gid", "-perm", "-size", "-mtime", "-atime", "-ctime", "-mmin",
  "-amin", "-cmin", "-newer", "-anewer", "-cnewer", "-maxdepth", "-mindepth", "-links", "-inum", "-samefile",
  "-used", "-fstype", "-context", "-regextype", "-fprint", "-fprint0", "-fls", "-printf", "-files0-from",
  "-newerma", "-newermm", "-newermc", "-newerat", "-newerct", "-newermt", "-neweraa", "-newerac",
]);
const FIND_EXEC = new Set(["-exec", "-execdir", "-ok", "-okdir"]);

function parseFind(args: readonly Arg[], out: ParsedArgs): void {
  let i = 0;
  while (i < args.length) {
    const v = args[i]!.value;
    if (FIND_LEADING.has(v) || /^-O\d$/.test(v)) {
      addOption(out, v, null);
      i++;
    } else if (v === "-D" && i + 1 < args.length) {
      addOption(out, v, args[i + 1]!);
      i += 2;
    } else break;
  }
  while (i < args.length) {
    const a = args[i]!;
    const v = a.value;
    if ((v.startsWith("-") && v.length > 1 && a.static) || v === "(" || v === "!" || v === ")" || v === ",") break;
    out.operands.push(a);
    i++;
  }
  while (i < args.length) {
    const a = args[i]!;
    const v = a.value;
    if (FIND_EXEC.has(v)) {
      const clause: Arg[] = [];
      i++;
      while (i < args.length) {
        const w = args[i]!.value;
        if (w === ";" || (w === "+" && clause.length > 0 && clause[clause.length - 1]!.value === "{}")) break;
        clause.push(args[i]!);
        i++;
      }
      i++;
      out.execs.push({ primary: v, args: clause });
      addOption(out, v, { value: clause.map((c) => c.value).join(" "), static: clause.every((c) => c.static), splittable: false, word: null });
    } else if (v === "-fprintf") {
      // -fprintf FILE FORMAT
      addOption(out, v, args[i + 1] ?? null);
      i += 3;
    } else if (FIND_ONE_ARG.has(v) || /^-newer[amcBt]{2}$/.test(v)) {
      addOption(out, v, args[i + 1] ?? null);
      i += 2;
    } else {
      if (v.startsWith("-") && v.length > 1) addOption(out, v, null);
      else if (!a.static && a.splittable) out.dynamic = true;
      i++;
    }
  }
}

const SIGNAL_NUMBERS: Readonly<Record<string, string>> = { "1": "HUP", "2": "INT", "3": "QUIT", "6": "ABRT", "9": "KILL", "15": "TERM", "19": "STOP", "18": "CONT" };

export function normaliseSignal(sig: string): string {
  const s = sig.toUpperCase().replace(/^SIG/, "");
  return SIGNAL_NUMBERS[s] ?? s;
}

function parseKill(args: readonly Arg[], out: ParsedArgs): void {
  let i = 0;
  const first = args[0];
  if (first && first.static) {
    const v = first.value;
    if ((v === "-s" || v === "-n" || v === "--signal") && args.length > 1) {
      addOption(out, "-s", valueArg(args[1]!, normaliseSignal(args[1]!.value)));
      i = 2;
    } else if (v === "-l" || v === "-L" || v === "--list" || v === "--table") {
      addOption(out, "-l", null);
      i = 1;
    } else if (v.startsWith("-") && v !== "--" && v.length > 1 && args.length > 1) {
      addOption(out, "-s", valueArg(first, normaliseSignal(v.slice(1))));
      i = 1;
    }
  }
  let sawDashDash = false;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a.value === "--" && !sawDashDash) {
      sawDashDash = true;
      continue;
    }
    if (!a.static && a.splittable) out.dynamic = true;
    out.operands.push(a);
  }
}

function parseDd(args: readonly Arg[], out: ParsedArgs): void {
  for (const a of args) {
    const eq = a.value.indexOf("=");
    if (eq > 0) addOption(out, a.value.slice(0, eq), valueArg(a, a.value.slice(eq + 1)));
    else if (a.value.startsWith("-")) addOption(out, a.value, null);
    else out.operands.push(a);
  }
}

function newParsed(program: string): ParsedArgs {
  return { program, subcommands: [], options: new Map(), operands: [], dynamic: false, rest: -1, execs: [] };
}

/**
 * Parses `args` (the words after the program name) with the option model of
 * `program` (or `spec` when given).
 */
/** Programs whose first word may be an option bundle without a dash (`tar xzf a.tgz`, `ps aux`). */
const DASHLESS_BUNDLES: ReadonlySet<string> = new Set(["tar", "gtar", "bsdtar"]);

export function parseArgs(program: string, args: readonly Arg[], spec?: OptionSpec): ParsedArgs {
  if (!spec && DASHLESS_BUNDLES.has(program) && args[0]?.static && /^[A-Za-z]+$/.test(args[0].value)) {
    args = [{ ...args[0], value: `-${args[0].value}` }, ...args.slice(1)];
  }
  const out = newParsed(program);
  let c = compiledFor(program, spec);
  if (c.style === "find") {
    parseFind(args, out);
    return out;
  }
  if (c.style === "kill") {
    parseKill(args, out);
    return out;
  }
  if (c.style === "dd") {
    parseDd(args, out);
    return out;
  }
  let endOfOptions = false;
  let operandsSinceSub = 0;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const v = a.value;
    if (!endOfOptions && a.static && v === "--") {
      endOfOptions = true;
      continue;
    }
    const optionLike = !endOfOptions && v.length > 1 && v.charCodeAt(0) === 45; /* - */
    if (!optionLike) {
      if (!endOfOptions && !a.static && a.splittable) out.dynamic = true;
      if (operandsSinceSub === 0 && (c.subs || c.subDefault) && !endOfOptions) {
        const sub = c.subs?.get(v) ?? c.subDefault;
        if (sub && a.static) {
          out.subcommands.push(v);
          c = sub;
          continue;
        }
      }
      out.operands.push(a);
      operandsSinceSub++;
      if (c.style === "posix" || c.style === "go") {
        out.rest = i;
        for (let j = i + 1; j < args.length; j++) out.operands.push(args[j]!);
        return out;
      }
      continue;
    }
    if (c.style === "go" || c.style === "dash-long") {
      const body = v.startsWith("--") ? v.slice(2) : v.slice(1);
      const eq = body.indexOf("=");
      const name = eq >= 0 ? body.slice(0, eq) : body;
      // PowerShell-style names are case-insensitive; try the lower-case spelling second.
      const resolved = resolveLong(c, name) ?? resolveLong(c, name.toLowerCase());
      const canon = canonicalOf(c, "-" + (resolved?.name ?? name));
      if (eq >= 0) {
        const val = body.slice(eq + 1);
        if (resolved?.kind === FLAG) {
          if (!/^(?:false|0|f|F|FALSE|False)$/.test(val)) addOption(out, canon, null);
        } else addOption(out, canon, valueArg(a, val));
      } else if (resolved?.kind === VALUE && i + 1 < args.length) {
        addOption(out, canon, args[++i]!);
      } else addOption(out, canon, null);
      continue;
    }
    if (v.startsWith("--")) {
      const eq = v.indexOf("=");
      const name = eq >= 0 ? v.slice(2, eq) : v.slice(2);
      const resolved = resolveLong(c, name);
      const full = "--" + (resolved?.name ?? name);
      const canon = canonicalOf(c, full);
      if (eq >= 0) addOption(out, canon, valueArg(a, v.slice(eq + 1)));
      else if (resolved?.kind === VALUE && i + 1 < args.length) addOption(out, canon, args[++i]!);
      else addOption(out, canon, null);
      continue;
    }
    // Short options: a bundle.
    if (c.numeric && /^-\d+$/.test(v)) {
      addOption(out, "-#", valueArg(a, v.slice(1)));
      continue;
    }
    if (!a.static) {
      // `-$X`: an option whose letters are unknown.
      out.dynamic = true;
      addOption(out, v, null);
      continue;
    }
    for (let j = 1; j < v.length; j++) {
      const ch = v[j]!;
      const kind = shortKind(c, ch);
      const canon = canonicalOf(c, "-" + ch);
      if (kind === VALUE) {
        if (j + 1 < v.length) addOption(out, canon, valueArg(a, v.slice(j + 1)));
        else if (i + 1 < args.length) addOption(out, canon, args[++i]!);
        else addOption(out, canon, null);
        break;
      }
      if (kind === OPTIONAL) {
        addOption(out, canon, j + 1 < v.length ? valueArg(a, v.slice(j + 1)) : null);
        break;
      }
      addOption(out, canon, null);
    }
  }
  return out;
}

const SAFE_WORD = /^[A-Za-z0-9_\-.,/:=@%+^~]+$/;

/** Quotes a value for a canonical prefix so that the string is unambiguous. */
export function quoteForPrefix(value: string, isStatic = true): string {
  if (!isStatic) return value;
  if (value === "") return "''";
  if (SAFE_WORD.test(value)) return value;
  return "'" + value.replace(/'/g, "'\\''") + "'";
}

/**
 * The canonical prefix: program, subcommands, options sorted by canonical name
 * (each value kept), `--` when an operand starts with `-`, then operands in order.
 * `rm -fr ./a`, `rm -r -f ./a` and `rm --recursive --force ./a` all give `rm -f -r ./a`.
 */
export function canonicalPrefix(parsed: ParsedArgs): string {
  const parts: string[] = [parsed.program, ...parsed.subcommands];
  const names = [...parsed.options.keys()].sort();
  for (const name of names) {
    const values = parsed.options.get(name)!;
    if (values.length === 0) parts.push(name);
    else {
      const sorted = values.map((v) => quoteForPrefix(v.value, v.static));
      for (const v of sorted) parts.push(name.startsWith("--") || parsed.program === "dd" ? `${name}=${v}` : `${name} ${v}`);
    }
  }
  if (parsed.operands.some((o) => o.value.startsWith("-"))) parts.push("--");
  for (const o of parsed.operands) parts.push(quoteForPrefix(o.value, o.static));
  return parts.join(" ");
}

/** The canonical prefix of an argv without an option model applied (program + words). */
export function plainPrefix(program: string, args: readonly Arg[]): string {
  const parts = [program];
  for (const a of args) parts.push(quoteForPrefix(a.value, a.static));
  return parts.join(" ");
}
