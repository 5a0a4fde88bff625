/**
 * The shell's own state in the walk: scopes (a subshell's changes are dropped, a
 * branch's changes make what they changed unknown), assignments (plain, `+=`,
 * arrays, through namerefs), the builtins that change variables or definitions
 * (`declare`/`export`/`local`, `read`, `mapfile`, `printf -v`, `getopts`, `let`,
 * `set --`, `shift`, `unset`, `alias`, `unalias`, `hash -p`, `enable -f`), and
 * calls of functions and aliases defined earlier in the same command, which are
 * walked with the call's arguments. See shell-state.ts for the rules.
 */
import type { Assignment, CompoundCommand } from "../../shell/types.js";
import type { Ctx, Site } from "./analysis-base.js";
import { arrayKey, DEFAULT_IFS, namerefKey, partialValue, splitByIfs, UNKNOWN_VALUE } from "./expand.js";
import { staticArg, type Arg } from "./model.js";
import { RunnerAnalysis } from "./runner-analysis.js";
import {
  forgetAllVariables,
  forgetPositional,
  forgetVariable,
  invalidateChanges,
  isPositionalKey,
  markSecret,
  setArray,
  setPositional,
  setVariable,
  associativeElements,
  type Variables,
} from "./shell-state.js";
import { printfOutput } from "./streams.js";
import { DECLARATION_BUILTINS } from "./words.js";

/** How a scope's changes reach the scope around it. */
export type ScopeMode =
  /** A subshell, a pipeline element, a substitution, a background job, a function definition: dropped. */
  | "discard"
  /** A branch, a loop body, the right side of `&&`/`||`: what changed is unknown afterwards. */
  | "invalidate";

/** The builtins `shellBuiltin` knows. */
const STATE_BUILTINS: ReadonlySet<string> = new Set([...DECLARATION_BUILTINS, "read", "mapfile", "readarray", "printf", "getopts", "let", "wait", "set", "shift", "unset", "alias", "unalias", "hash", "enable"]);
const DECLARED = /^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(\+?)=([\s\S]*)$/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_NAMEREF_CHAIN = 8;
/** Most function calls walked for one command; beyond, a call is unanalysable. */
const MAX_CALLS = 256;

function quoteWord(a: Arg): string {
  if (!a.static) return a.word?.raw ?? a.value;
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(a.value) ? a.value : `'${a.value.replace(/'/g, `'\\''`)}'`;
}

/** Splits `-abc`/`+abc` option words from the start of a builtin's arguments. */
function leadingFlags(args: readonly Arg[], valueLetters = ""): { flags: Set<string>; values: Map<string, Arg>; rest: Arg[] } {
  const flags = new Set<string>();
  const values = new Map<string, Arg>();
  let i = 1;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (!a.static || !/^[-+][A-Za-z]+$/.test(a.value)) {
      if (a.static && a.value === "--") i++;
      break;
    }
    for (let k = 1; k < a.value.length; k++) {
      const letter = a.value[k]!;
      if (valueLetters.includes(letter)) {
        const attached = a.value.slice(k + 1);
        const value = attached !== "" ? staticArg(attached) : args[++i];
        if (value) values.set(letter, value);
        break;
      }
      flags.add(a.value[0] === "+" ? `+${letter}` : letter);
    }
  }
  return { flags, values, rest: args.slice(i) };
}

export abstract class ShellAnalysis extends RunnerAnalysis {
  /** Functions and aliases being walked at a call: not walked again inside themselves. */
  private readonly active = new Set<string>();
  /** Functions defined in the command, with the context they were defined in. */
  private readonly functions: { fn: CompoundCommand; ctx: Ctx }[] = [];
  /** Functions walked at a call (with the call's arguments). */
  private readonly called = new Set<CompoundCommand>();
  /** Calls walked so far (each walks the function's body). */
  private calls = 0;

  /** A function definition: its body is walked at its calls, or at the end if it is never called. */
  protected defined(fn: CompoundCommand, ctx: Ctx): void {
    this.functions.push({ fn, ctx: { ...ctx, env: ctx.env ? new Map(ctx.env) : null } });
  }

  /**
   * Bodies of functions the command defines but never calls are code all the same (a later
   * command may call them): walked with unknown arguments.
   */
  walkUncalledFunctions(): void {
    for (let i = 0; i < this.functions.length; i++) {
      const { fn, ctx } = this.functions[i]!;
      if (this.called.has(fn)) continue;
      this.called.add(fn);
      const inner: Ctx = { ...ctx, chain: [...ctx.chain, `function ${fn.name ?? ""}`.trim()] };
      if (inner.env) for (const key of [...inner.env.keys()]) if (isPositionalKey(key)) inner.env.delete(key);
      for (const body of fn.bodies) this.walkScript(body, inner);
    }
  }

  protected inScope(ctx: Ctx, mode: ScopeMode, walk: (inner: Ctx) => void): void {
    const inner: Ctx = { ...ctx, env: ctx.env ? new Map(ctx.env) : null };
    walk(inner);
    if (mode === "discard") return;
    if (inner.env || ctx.env) invalidateChanges((ctx.env ??= new Map()), inner.env);
    if (inner.cwd !== ctx.cwd) ctx.cwd = null;
  }

  private env(ctx: Ctx): Variables {
    return (ctx.env ??= new Map());
  }

  /** The variable a name stands for, through namerefs; null when a nameref's target is unknown. */
  private target(ctx: Ctx, name: string): string | null {
    let current = name;
    for (let i = 0; i < MAX_NAMEREF_CHAIN && ctx.defs.namerefs.has(current); i++) {
      const next = ctx.defs.namerefs.get(current);
      if (next === null || next === undefined) return null;
      current = next;
    }
    return current;
  }

  /** `NAME=value`, `NAME+=value`, `NAME=(…)`, `NAME[i]=value` as a statement of its own. */
  protected assign(ctx: Ctx, a: Assignment, value: Arg): void {
    const env = this.env(ctx);
    const bracket = a.name.indexOf("[");
    const target = this.target(ctx, bracket > 0 ? a.name.slice(0, bracket) : a.name);
    if (target === null) {
      forgetAllVariables(env);
      return;
    }
    if (value.secret) markSecret(env, target);
    if (bracket > 0) {
      // `BASH_ALIASES[x]=…` defines an alias, `BASH_CMDS[x]=…` a hashed command path.
      const key = /^\[['"]?([^\]'"]+)['"]?\]$/.exec(a.name.slice(bracket))?.[1];
      if ((target === "BASH_ALIASES" || target === "BASH_CMDS") && key !== undefined) {
        ctx.defs.aliases.set(key, value.static ? (target === "BASH_CMDS" ? quoteWord(value) : value.value) : null);
      }
      forgetVariable(env, target);
      return;
    }
    if (a.elements) {
      const elements = this.resolveArgs(a.elements, ctx);
      if (elements.some((e) => e.secret)) markSecret(env, target);
      let values: string[] | null = elements.every((e) => e.static) ? elements.map((e) => e.value) : null;
      if (values && a.append) {
        const old = env.get(arrayKey(target)) ?? (env.has(target) ? env.get(target) : undefined);
        values = old === undefined || old === UNKNOWN_VALUE ? null : [...(old === "" ? [] : old.split("\0")), ...values];
      }
      setArray(env, target, values);
      return;
    }
    if (a.append) {
      const old = env.get(target);
      setVariable(env, target, old !== undefined && old !== UNKNOWN_VALUE && value.static ? old + value.value : null);
      return;
    }
    // Partly known (`out="reports/$NAME.txt"`): kept for where it points, never as a value.
    setVariable(env, target, value.static ? value.value : target === "IFS" ? null : partialValue(value.value));
  }

  /**
   * Builtins that change variables or definitions. Returns true when `program` is one of them
   * and was handled (it runs no program of its own); false to go on with the usual analysis.
   */
  protected shellBuiltin(program: string, args: Arg[], ctx: Ctx, site: Site): boolean {
    if (!STATE_BUILTINS.has(program)) return false;
    if (DECLARATION_BUILTINS.has(program)) {
      this.declare(args, ctx);
      return true;
    }
    switch (program) {
      case "read": {
        const { flags, values, rest } = leadingFlags(args, "adinNptu");
        const names = rest.map((a) => a.value);
        const array = values.get("a");
        if (names.length === 0 && !array) names.push("REPLY");
        if (!this.readLiteral(names, array?.value, flags.has("r") && !values.has("d") && !values.has("n") && !values.has("N"), ctx, site)) {
          for (const n of [...names, ...(array ? [array.value] : [])]) this.forgetName(ctx, n);
        }
        return true;
      }
      case "mapfile":
      case "readarray": {
        const { values, rest } = leadingFlags(args, "dnOsuCc");
        const callback = values.get("C");
        // `-C CALLBACK`: bash runs CALLBACK with the index and the line as arguments.
        if (callback) this.runScriptArg(callback.static ? { ...callback, value: `${callback.value} 0 line` } : callback, ctx, `${program} -C`, site.text);
        this.forgetName(ctx, rest[0]?.value ?? "MAPFILE");
        return true;
      }
      case "printf": {
        if (args[1]?.static && args[1].value === "-v" && args[2]) {
          const rest = args.slice(3);
          const text = rest.every((a) => a.static) ? printfOutput(rest.map((a) => a.value)) : null;
          const target = this.target(ctx, args[2].value);
          if (target === null) forgetAllVariables(this.env(ctx));
          else setVariable(this.env(ctx), target, text);
          return true;
        }
        return false;
      }
      case "getopts":
        for (const n of [args[2]?.value, "OPTARG", "OPTIND"]) if (n) this.forgetName(ctx, n);
        return true;
      case "let":
        for (const a of args.slice(1)) for (const n of a.value.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []) this.forgetName(ctx, n);
        return true;
      case "wait": {
        const p = leadingFlags(args, "p").values.get("p");
        if (p) this.forgetName(ctx, p.value);
        return false;
      }
      case "set":
        if (args.some((a, i) => a.value === "+o" && args[i + 1]?.value === "history")) this.finding("history-disable", "set +o history", ctx);
        if (args.some((a, i) => /^-[a-zA-Z]*a[a-zA-Z]*$/.test(a.value) || (a.value === "-o" && args[i + 1]?.value === "allexport"))) this.allExport = true;
        this.setBuiltin(args, ctx);
        return false;
      case "shift": {
        const env = this.env(ctx);
        const all = env.get("@");
        const n = args[1]?.static ? Number(args[1].value) : args[1] ? NaN : 1;
        if (all === undefined || !Number.isInteger(n) || n < 0) forgetPositional(env);
        else setPositional(env, [staticArg(env.get("0") ?? "sh"), ...(all === "" ? [] : all.split("\0")).slice(n).map(staticArg)]);
        return true;
      }
      case "unset": {
        const { flags, rest } = leadingFlags(args);
        for (const a of rest) {
          if (flags.has("f")) ctx.defs.functions.delete(a.value);
          else if (flags.has("n")) ctx.defs.namerefs.delete(a.value);
          else if (a.value === "IFS") this.env(ctx).delete("IFS");
          else if (a.value === "HISTFILE") this.finding("history-disable", `unset ${a.value}`, ctx);
          else this.forgetName(ctx, a.value);
        }
        return true;
      }
      case "alias":
        for (const a of args.slice(1)) {
          const m = /^([^=]+)=([\s\S]*)$/.exec(a.value);
          if (!m) continue;
          ctx.defs.aliases.set(m[1]!, a.static ? m[2]! : null);
          // Scanned where it is defined too: the text is shell code whether it is called here or later.
          this.runScriptArg({ ...a, value: m[2]! }, ctx, `alias ${m[1]}`, site.text);
        }
        return true;
      case "unalias": {
        const { flags, rest } = leadingFlags(args);
        if (flags.has("a")) ctx.defs.aliases.clear();
        for (const a of rest) ctx.defs.aliases.delete(a.value);
        return true;
      }
      case "hash": {
        const { values, rest } = leadingFlags(args, "pdt");
        const path = values.get("p");
        // `hash -p /bin/rm ls`: from now on `ls` runs /bin/rm.
        if (path) for (const a of rest) ctx.defs.aliases.set(a.value, path.static ? quoteWord(path) : null);
        return true;
      }
      case "enable": {
        const { values } = leadingFlags(args, "f");
        if (values.has("f")) this.unanalysable(`enable -f loads a builtin from a shared library: ${values.get("f")!.value}`, site.text, ctx);
        return true;
      }
      default:
        return false;
    }
  }

  /**
   * `read -r [-a ARR] NAMES <<< "literal"`: the line is known, so are the values, split by the IFS
   * in force for `read` (`IFS=';' read -ra steps <<< "npm ci;npm test"`). Returns false when the
   * line is not known (a pipe, a file, an expansion) or the options make it hard to follow.
   */
  private readLiteral(names: string[], array: string | undefined, plain: boolean, ctx: Ctx, site: Site): boolean {
    if (!plain) return false;
    const text = site.stdin?.()?.text;
    if (text === null || text === undefined) return false;
    const env = this.env(ctx);
    const ifs = site.prefixEnv?.get("IFS") ?? env.get("IFS") ?? DEFAULT_IFS;
    if (ifs === UNKNOWN_VALUE) return false;
    const fields = splitByIfs(text.split("\n")[0] ?? "", ifs);
    if (array) {
      const target = this.target(ctx, array);
      if (target === null) return false;
      setArray(env, target, fields);
    }
    names.forEach((n, i) => {
      const target = this.target(ctx, n);
      if (target === null) return;
      // The last name takes the rest of the line (rejoined with the first IFS character).
      const value = i === names.length - 1 ? fields.slice(i).join(ifs.charAt(0) || " ") : (fields[i] ?? "");
      setVariable(env, target, value);
    });
    return true;
  }

  private forgetName(ctx: Ctx, name: string): void {
    if (!NAME.test(name)) return;
    const target = this.target(ctx, name);
    if (target === null) forgetAllVariables(this.env(ctx));
    else forgetVariable(this.env(ctx), target);
  }

  /** `declare`, `export`, `local`, `typeset`, `readonly`. */
  private declare(args: Arg[], ctx: Ctx): void {
    const { flags, rest } = leadingFlags(args);
    if (flags.has("f") || flags.has("F") || flags.has("p")) return;
    const nameref = flags.has("n");
    const exported = args[0]!.value === "export" || flags.has("x") || this.allExport;
    for (const a of rest) {
      const m = DECLARED.exec(a.value);
      if (!m) {
        if (!NAME.test(a.value)) continue;
        // `LD_PRELOAD=…; export LD_PRELOAD`: it reaches programs now, whatever its value.
        if (exported && !nameref) this.checkEnvVariable(a.value, { ...a, value: this.env(ctx).get(a.value) ?? `$${a.value}`, static: false }, ctx, true);
        if (nameref) {
          ctx.defs.namerefs.set(a.value, null);
          forgetVariable(this.env(ctx), a.value);
        } else if (DECLARATION_BUILTINS.has(args[0]!.value) && args[0]!.value !== "export" && args[0]!.value !== "readonly") {
          // `local x`, `declare x`: a new (empty) variable in the function's scope.
          this.forgetName(ctx, a.value);
        }
        continue;
      }
      const [, name, subscript, plus, value] = m as unknown as [string, string, string | undefined, string, string];
      this.checkEnvVariable(name, { ...a, value }, ctx, exported);
      if (nameref) {
        const target = a.static && NAME.test(value) ? value : null;
        ctx.defs.namerefs.set(name, target);
        forgetVariable(this.env(ctx), name);
        if (target !== null) this.env(ctx).set(namerefKey(name), target);
        continue;
      }
      const looksLikeArray = value.startsWith("(") && value.endsWith(")");
      if (subscript || looksLikeArray) {
        this.forgetName(ctx, name);
        // `declare -A tools=([lint]=eslint [fmt]="prettier --check")`: literal keys and values are followed.
        const elements = flags.has("A") && !subscript && a.word ? associativeElements(a.word.raw) : null;
        const target = elements ? this.target(ctx, name) : null;
        if (elements && target) for (const [key, v] of elements) this.env(ctx).set(`${target}[${key}]`, v);
        continue;
      }
      this.assign(ctx, plus ? { name, value: a.word!, append: true } : { name, value: a.word! }, { ...a, value });
    }
  }

  /** `set -- ARGS` (or `set ARGS`) sets the positional parameters. */
  private setBuiltin(args: Arg[], ctx: Ctx): void {
    const dd = args.findIndex((a, i) => i > 0 && a.static && a.value === "--");
    let values: Arg[] | null = null;
    if (dd > 0) values = args.slice(dd + 1);
    else if (args.length > 1 && !(args[1]!.static && /^[-+]/.test(args[1]!.value))) values = args.slice(1);
    if (!values) return;
    const env = this.env(ctx);
    setPositional(env, [staticArg(env.get("0") ?? "sh"), ...values]);
  }

  /**
   * A call of an alias or function defined earlier in the command: the alias text replaces
   * the word, the function body runs with the call's arguments. Returns true when handled.
   */
  protected callDefinition(args: Arg[], ctx: Ctx, site: Site): boolean {
    if (ctx.defs.aliases.size === 0 && ctx.defs.functions.size === 0) return false;
    const first = args[0]!;
    if (!first.static) return false;
    const name = first.value;
    // Aliases apply to a command word written plainly (`\ls` and `'ls'` skip them).
    if (first.word?.static && first.word.raw === name && ctx.defs.aliases.has(name) && !this.active.has(`alias ${name}`)) {
      const text = ctx.defs.aliases.get(name);
      if (text === null || text === undefined) {
        this.unanalysable(`${name} stands for a command that is only known when it runs (alias or hash -p)`, site.text, ctx);
        return true;
      }
      this.active.add(`alias ${name}`);
      try {
        this.walkSource([text, ...args.slice(1).map(quoteWord)].join(" "), this.sameShell(ctx, `alias ${name}`));
      } finally {
        this.active.delete(`alias ${name}`);
      }
      return true;
    }
    const fn = name.includes("/") ? undefined : ctx.defs.functions.get(name);
    if (!fn || this.active.has(`function ${name}`)) return false;
    if (++this.calls > MAX_CALLS) {
      this.unanalysable(`more than ${MAX_CALLS} calls of functions defined in the command`, site.text, ctx);
      return true;
    }
    const inner: Ctx = { ...ctx, depth: ctx.depth + 1, chain: [...ctx.chain, `function ${name}`], env: new Map(ctx.env ?? []) };
    setPositional(inner.env!, args);
    this.called.add(fn);
    this.active.add(`function ${name}`);
    try {
      for (const body of fn.bodies) this.walkScript(body, inner);
    } finally {
      this.active.delete(`function ${name}`);
    }
    invalidateChanges(this.env(ctx), inner.env, true);
    return true;
  }

  /** `exported`: the variable reaches the programs the command runs (a prefix assignment, `export`, `set -a`). */
  protected abstract checkEnvVariable(name: string, value: Arg, ctx: Ctx, exported: boolean): void;

  /** `set -a` (allexport) was seen: every assignment is exported from then on. */
  protected allExport = false;
}

