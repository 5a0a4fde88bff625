/**
 * The detection engine: walks every part of a parsed command (pipelines,
 * compound bodies, substitutions, heredocs, scripts handed to shells and
 * interpreters), unwraps wrappers, applies the option model and evaluates the
 * rule set (rules/). It holds no rules of its own.
 */
import { parseShell } from "../../shell/index.js";
import type { CompoundCommand, ParseOptions, Pipeline, Redirect, Script, SimpleCommand, Word } from "../../shell/types.js";
import {
  DECODERS,
  EMBEDDED_SCRIPTS,
  EXEC_ENV_VARIABLES,
  FILE_WRITERS,
  INTERPRETERS,
  NETWORK_FETCHERS,
  PASS_THROUGH,
  SHELLS,
  SOURCE_COMMANDS,
  SQL_CLIENTS,
  type PayloadLanguage,
} from "../rules/programs.js";
import type { Rule } from "../rules/types.js";
import type { Detection, RuleMatch } from "../types.js";
import { staticArg, type Arg, type ParsedArgs } from "./model.js";
import { SHELL_OPTIONS } from "./options.js";
import { canonicalPrefix, parseArgs, plainPrefix, quoteForPrefix } from "./parse-args.js";
import { classifyPath, inDirectory, normalisePath } from "./paths.js";
import { analysePayload } from "./payload.js";
import { FINDING_RULES, RULES_BY_ID, WRITE_RULES, matchCommand, matchersFor } from "./rule-index.js";
import { analyseMongo, analyseSql } from "./sql.js";
import { decode, echoOutput, printfOutput, type Stream } from "./streams.js";
import { analyseAwk, analyseSed } from "./tool-scripts.js";
import { basename, resolveWord, type Env, type SubstitutionOutput } from "./words.js";
import { WRAPPERS, unwrapOnce, wrapperKey } from "./wrappers.js";

export interface DetectOptions {
  /** Deepest nesting of scripts re-parsed from strings (`sh -c` in `eval` in `ssh …`). Default 8. */
  maxDepth?: number;
  /** Most scripts parsed for one command, the command itself included. Default 64. */
  maxParses?: number;
  /** Options for each parse (time budget, structural depth, length). */
  parse?: ParseOptions;
  /**
   * Use the cache of recent results (default true). `detect` keeps the results of the last
   * commands it analysed, keyed by the exact command text and these options, because agents
   * check the same command again (before approval, after approval, on retry). A result is
   * the same whether it comes from the cache or not; results cut short by the time budget
   * are never cached. `false` analyses the command afresh (benchmarks, tests).
   */
  cache?: boolean;
}

const DEFAULT_MAX_DEPTH = 8;
const DEFAULT_MAX_PARSES = 64;
const MAX_WRAPPERS = 32;
const MAX_STREAM_DEPTH = 12;
const MAX_LOOP_VALUES = 8;
const MAX_VARIANTS = 8;

interface Ctx {
  depth: number;
  env: Map<string, string> | null;
  /** Wrappers and contexts passed on the way here, for a match's detail. */
  chain: readonly string[];
  /** A wrapper on the way runs as another user. */
  privileged: boolean;
  /** The working directory when a `cd` made it known (relative operands are classified in it). */
  cwd: string | null;
  /** Files written from the network earlier in the command (`curl -o x.sh …; bash x.sh`), normalised. Shared along the walk. */
  netFiles: Set<string> | null;
}

interface Site {
  /** Source text for unanalysable prefixes. */
  text: string;
  /** The pipeline around the command, for prefixes of what flows in (`curl … | sh`). */
  flow: string;
  /** The command's stdin, computed on demand. */
  stdin: (() => Stream | null) | null;
  /** The caller needs the canonical prefix even without a match (the command has write redirects). */
  needPrefix?: boolean;
}

const WRITE_OPERATORS = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&"]);
const DECLARATIONS = new Set(["export", "declare", "typeset", "local", "readonly"]);
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/;
const INTERPRETER_NAME = /^(python|pypy|ruby|perl|php|node|lua|luajit)(?:[0-9]+(?:\.[0-9]+)*)?$/;
const EMBEDDED_BY_PROGRAM = new Map<string, typeof EMBEDDED_SCRIPTS>();
for (const e of EMBEDDED_SCRIPTS) {
  for (const p of e.programs) EMBEDDED_BY_PROGRAM.set(p, [...(EMBEDDED_BY_PROGRAM.get(p) ?? []), e]);
}

function collapse(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > 200 ? t.slice(0, 197) + "..." : t;
}

function interpreterName(program: string): string | undefined {
  if (INTERPRETERS[program]) return program;
  const m = INTERPRETER_NAME.exec(program);
  return m && INTERPRETERS[m[1]!] ? m[1]! : undefined;
}

function emptyStream(): Stream {
  return { text: null, network: false, decoded: false, origin: "" };
}

class Analysis {
  readonly matches: RuleMatch[] = [];
  readonly reasons: string[] = [];
  private readonly keys = new Set<string>();
  private parses = 0;
  /** A parse ran out of its time budget: the result depends on the machine's load, do not cache it. */
  timedOut = false;
  private streamDepth = 0;
  private readonly maxDepth: number;
  private readonly maxParses: number;

  constructor(private readonly options: DetectOptions) {
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.maxParses = options.maxParses ?? DEFAULT_MAX_PARSES;
  }

  // ---------------------------------------------------------------- results

  private push(rule: Rule, prefix: string, detail: string | undefined): void {
    const key = rule.id + "\0" + prefix;
    if (this.keys.has(key)) return;
    this.keys.add(key);
    const m: RuleMatch = { rule: rule.id, description: rule.description, category: rule.category, hardline: rule.hardline, prefix };
    if (detail) m.detail = detail;
    this.matches.push(m);
  }

  /** Adds the matches of one command: a hardline match makes the others redundant, and `overrides` apply. */
  private flush(local: { rule: Rule; prefix: string; detail: string | undefined }[]): void {
    if (local.length === 0) return;
    const hard = local.some((m) => m.rule.hardline);
    const overridden = new Set<string>();
    for (const m of local) for (const id of m.rule.overrides ?? []) overridden.add(id);
    for (const m of local) {
      if (hard && !m.rule.hardline) continue;
      if (overridden.has(m.rule.id)) continue;
      this.push(m.rule, m.prefix, m.detail);
    }
  }

  private finding(name: string, prefix: string, ctx: Ctx, extra?: string): void {
    const rules = FINDING_RULES.get(name);
    if (!rules) return;
    const detail = this.detail(ctx, extra);
    for (const rule of rules) this.push(rule, prefix, detail);
  }

  private unanalysable(reason: string, prefix: string, ctx: Ctx): void {
    const where = ctx.chain.length ? ` (in ${ctx.chain.join(" → ")})` : "";
    const full = reason + where;
    if (!this.reasons.includes(full)) this.reasons.push(full);
    this.finding("unanalysable", collapse(prefix), ctx, reason);
  }

  private detail(ctx: Ctx, extra?: string): string | undefined {
    const via = ctx.chain.length ? `via ${ctx.chain.join(" → ")}` : "";
    if (extra && via) return `${extra}; ${via}`;
    return extra || via || undefined;
  }

  private child(ctx: Ctx, label: string, positional?: readonly Arg[]): Ctx {
    let env: Map<string, string> | null = ctx.env ? new Map(ctx.env) : null;
    if (positional) {
      env ??= new Map();
      for (let i = 1; i <= 9; i++) env.delete(String(i));
      env.delete("@");
      env.delete("*");
      if (positional.every((a) => a.static)) {
        positional.forEach((a, i) => env!.set(String(i), a.value));
        const rest = positional.slice(1).map((a) => a.value).join(" ");
        env.set("@", rest);
        env.set("*", rest);
        env.set("#", String(Math.max(0, positional.length - 1)));
      }
    }
    return { depth: ctx.depth + 1, env, chain: [...ctx.chain, label], privileged: ctx.privileged, cwd: ctx.cwd, netFiles: ctx.netFiles };
  }

  // ---------------------------------------------------------------- walking

  /** Parses shell text and walks it. `ctx.depth` counts the nesting of such re-parses. */
  walkSource(text: string, ctx: Ctx, input: (() => Stream | null) | null = null): void {
    if (ctx.depth > this.maxDepth) {
      this.unanalysable(`nesting deeper than the budget of ${this.maxDepth} re-parsed scripts`, text, ctx);
      return;
    }
    if (++this.parses > this.maxParses) {
      this.unanalysable(`more than ${this.maxParses} nested scripts`, text, ctx);
      return;
    }
    const result = parseShell(text, this.options.parse);
    for (const problem of result.problems) {
      if (problem.includes("time budget")) this.timedOut = true;
      this.unanalysable(problem, text, ctx);
    }
    this.walkScript(result.script, ctx, input);
  }

  walkScript(script: Script, ctx: Ctx, input: (() => Stream | null) | null = null): void {
    for (let i = 0; i < script.pipelines.length; i++) this.walkPipeline(script.pipelines[i]!, ctx, i === 0 ? input : null);
  }

  private walkPipeline(p: Pipeline, ctx: Ctx, input: (() => Stream | null) | null): void {
    for (let i = 0; i < p.commands.length; i++) {
      const cmd = p.commands[i]!;
      const stdin = i === 0 ? input : () => this.streamOfCommands(p, i, ctx, input);
      if (cmd.kind === "simple") this.walkSimple(cmd, ctx, stdin, p.commands.length > 1 ? p.text : undefined);
      else this.walkCompound(cmd, ctx, stdin);
    }
  }

  private walkWordSubs(word: Word, ctx: Ctx): void {
    for (const sub of word.substitutions) this.walkScript(sub.script, ctx);
  }

  private walkRedirectSubs(r: Redirect, ctx: Ctx): void {
    this.walkWordSubs(r.target, ctx);
    if (r.heredoc?.substitutions) for (const sub of r.heredoc.substitutions) this.walkScript(sub.script, ctx);
  }

  private walkCompound(c: CompoundCommand, ctx: Ctx, stdin: (() => Stream | null) | null): void {
    for (const w of c.words) this.walkWordSubs(w, ctx);
    for (const r of c.redirects) this.walkRedirectSubs(r, ctx);
    if (c.type === "function") this.checkForkBomb(c, ctx);
    const loopVar = c.type === "for" ? /^\s*for\s+([A-Za-z_][A-Za-z0-9_]*)\b/.exec(c.text)?.[1] : undefined;
    if (loopVar && c.words.length > 0 && c.words.length <= MAX_LOOP_VALUES && c.words.every((w) => w.static && !w.glob)) {
      for (const w of c.words) {
        const values = w.braceExpansion ? [] : [w.value];
        if (w.braceExpansion) {
          const out: Arg[] = [];
          resolveWord(w, null, null, out);
          for (const a of out) values.push(a.value);
        }
        for (const value of values) {
          const loopCtx: Ctx = { ...ctx, env: new Map(ctx.env ?? []) };
          loopCtx.env!.set(loopVar, value);
          for (const body of c.bodies) this.walkScript(body, loopCtx);
        }
      }
    } else {
      if (loopVar && ctx.env) ctx.env.delete(loopVar);
      for (let i = 0; i < c.bodies.length; i++) this.walkScript(c.bodies[i]!, ctx, i === 0 && (c.type === "subshell" || c.type === "group") ? stdin : null);
    }
    const local: { rule: Rule; prefix: string; detail: string | undefined }[] = [];
    // The prefix (the compound's whole text, collapsed) only when a redirect writes.
    if (c.redirects.some((r) => WRITE_OPERATORS.has(r.operator))) this.redirectWrites(c.redirects, collapse(c.text), ctx, local);
    this.flush(local);
  }

  private checkForkBomb(c: CompoundCommand, ctx: Ctx): void {
    const name = c.name ?? /^\s*(?:function\s+)?([^\s(){}]+)/.exec(c.text)?.[1];
    if (!name) return;
    let calls = 0;
    const count = (s: Script): void => {
      for (const p of s.pipelines) {
        for (const cmd of p.commands) {
          if (cmd.kind === "simple") {
            if (cmd.argv[0]?.value === name) calls++;
          } else for (const b of cmd.bodies) count(b);
        }
      }
    };
    for (const b of c.bodies) count(b);
    const background = new RegExp(`(?:^|[\\s;|&{(])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*&(?!&)`).test(c.text.slice(c.text.indexOf("{") + 1 || c.text.indexOf("(") + 1));
    if (calls >= 2 || (calls >= 1 && background)) this.finding("fork-bomb", collapse(c.text), ctx);
  }

  /** Resolves a command's words, putting in substitution outputs that are known. */
  private readonly resolver = (ctx: Ctx) => (w: Word): (SubstitutionOutput | null)[] =>
    w.substitutions.map((sub) => (sub.kind === "command" ? this.streamOfScript(sub.script, ctx, null) : null));

  private resolveArgs(words: readonly Word[], ctx: Ctx): Arg[] {
    const args: Arg[] = [];
    let resolver: ((w: Word) => (SubstitutionOutput | null)[]) | null = null;
    for (const w of words) {
      if (w.substitutions.length > 0) resolver ??= this.resolver(ctx);
      resolveWord(w, ctx.env as Env | null, w.substitutions.length > 0 ? resolver : null, args);
    }
    return args;
  }

  private walkSimple(cmd: SimpleCommand, ctx: Ctx, pipeInput: (() => Stream | null) | null, flow?: string): void {
    for (const a of cmd.assignments) this.walkWordSubs(a.value, ctx);
    for (const w of cmd.argv) this.walkWordSubs(w, ctx);
    for (const r of cmd.redirects) this.walkRedirectSubs(r, ctx);
    for (const w of cmd.argv) {
      for (const sub of w.substitutions) {
        // `tee >(sh)`: the process substitution reads what the command writes.
        if (sub.kind === "process_out") this.walkScript(sub.script, ctx, () => this.stdinOf(cmd, ctx, pipeInput));
      }
    }
    const local: { rule: Rule; prefix: string; detail: string | undefined }[] = [];
    for (const a of cmd.assignments) {
      const out: Arg[] = [];
      resolveWord(a.value, ctx.env, a.value.substitutions.length > 0 ? this.resolver(ctx) : null, out);
      const value = out.length === 1 ? out[0]! : { value: a.value.value, static: false, splittable: false, word: a.value };
      this.checkEnvVariable(a.name, value, ctx);
      if (cmd.argv.length === 0) {
        ctx.env ??= new Map();
        if (value.static) ctx.env.set(a.name, value.value);
        else ctx.env.delete(a.name);
      }
    }
    if (cmd.argv.length === 0) {
      this.redirectWrites(cmd.redirects, "", ctx, local);
      this.flush(local);
      return;
    }
    let writes = false;
    for (const r of cmd.redirects) if (WRITE_OPERATORS.has(r.operator)) writes = true;
    const site: Site = { text: cmd.text, flow: flow ?? cmd.text, stdin: () => this.stdinOf(cmd, ctx, pipeInput), needPrefix: writes };
    const args = this.resolveArgs(cmd.argv, ctx);
    const prefix = this.evalArgs(args, ctx, site);
    if (!writes) return;
    this.redirectWrites(cmd.redirects, prefix ?? (args[0] ? plainPrefix(args[0].value, args.slice(1)) : collapse(cmd.text)), ctx, local);
    const head = args[0]?.static ? basename(args[0].value) : "";
    if (pipeInput || NETWORK_FETCHERS.has(head) || WRAPPERS[head]) {
      for (const r of cmd.redirects) {
        // `curl … > x.sh`: the file now holds text from the network.
        if ((r.operator === ">" || r.operator === ">>" || r.operator === ">|" || r.operator === "&>") && (r.fd === undefined || r.fd === 1) && r.target.static) {
          const out = this.streamOfCommand(cmd, pipeInput ? pipeInput() : null, ctx);
          if (out.network) this.noteNetFile(r.target.value, ctx);
        }
      }
    }
    this.flush(local);
  }

  private checkEnvVariable(name: string, value: Arg, ctx: Ctx): void {
    const spec = EXEC_ENV_VARIABLES[name];
    if (!spec) return;
    const prefix = `${name}=${quoteForPrefix(value.value, value.static)}`;
    if (spec.flag) this.finding("exec-env", prefix, ctx);
    else if (value.static && value.value.trim() !== "") this.walkSource(value.value, this.child(ctx, `${name}=`));
  }

  private redirectWrites(redirects: readonly Redirect[], commandPrefix: string, ctx: Ctx, local: { rule: Rule; prefix: string; detail: string | undefined }[]): void {
    for (const r of redirects) {
      if (!WRITE_OPERATORS.has(r.operator)) continue;
      const t = r.target;
      if (r.operator === ">&" && /^(?:\d+|-)$/.test(t.value)) continue;
      const target = `${r.operator} ${quoteForPrefix(t.value, t.static)}`;
      this.writeTarget({ value: t.value, static: t.static, splittable: false, word: t }, commandPrefix ? `${commandPrefix} ${target}` : target, ctx, local);
    }
  }

  private writeTarget(target: Arg, prefix: string, ctx: Ctx, local: { rule: Rule; prefix: string; detail: string | undefined }[]): void {
    const bits = classifyPath(target.static ? inDirectory(ctx.cwd, target.value) : target.value, target.static);
    if (bits === 0) return;
    for (const w of WRITE_RULES) if ((w.bits & bits) !== 0) local.push({ rule: w.rule, prefix, detail: this.detail(ctx) });
  }

  // ---------------------------------------------------------------- commands

  /** Unwraps wrappers, then analyses the command. Returns the final command's canonical prefix. */
  evalArgs(initial: Arg[], ctx: Ctx, site: Site): string | undefined {
    let args = initial;
    let chain = ctx.chain;
    let privileged = ctx.privileged;
    let stdin = site.stdin;
    for (let step = 0; ; step++) {
      if (args.length === 0) return undefined;
      const here: Ctx = chain === ctx.chain && privileged === ctx.privileged ? ctx : { ...ctx, chain, privileged };
      if (step > MAX_WRAPPERS) {
        this.unanalysable(`more than ${MAX_WRAPPERS} nested wrappers`, site.text, here);
        return undefined;
      }
      const name = args[0]!;
      if (name.network) this.finding("network-to-interpreter", collapse(site.text), here, "the command comes from the network");
      if (name.decoded) this.finding("decode-to-interpreter", collapse(site.text), here, "the command comes from decoded text");
      if (!name.static) {
        this.unanalysable(`the command name is only known when it runs: ${name.value}`, site.text, here);
        return undefined;
      }
      if (name.word?.glob && /[*?[]/.test(name.value)) {
        this.unanalysable(`the command name is a glob pattern: ${name.value}`, site.text, here);
        return undefined;
      }
      const program = basename(name.value);
      if (program === "") return undefined;
      if (name.value.includes("/") && this.isNetFile(name, here)) this.finding("network-to-interpreter", collapse(site.text), here, `${name.value} was downloaded earlier in the command`);
      const key = wrapperKey(program, args);
      if (key && EMBEDDED_BY_PROGRAM.has(program) && WRAPPERS[program]) {
        // `ssh -o ProxyCommand=…`: options of a wrapper that run a command locally.
        this.embedded(program, parseArgs(program, args.slice(1), WRAPPERS[program]!.options), EMBEDDED_BY_PROGRAM.get(program)!, here, site);
      }
      if (!key) return this.evalCommand(program, args, here, { ...site, stdin });
      const unwrapped = unwrapOnce(key, args);
      for (const a of unwrapped.assignments) {
        const m = ASSIGNMENT.exec(a.value);
        if (m) this.checkEnvVariable(m[1]!, { ...a, value: m[2]! }, here);
      }
      chain = [...chain, unwrapped.label];
      privileged = privileged || unwrapped.privileged;
      const next: Ctx = { ...ctx, chain, privileged };
      if (unwrapped.kind === "none") {
        if (unwrapped.rootShell) this.finding("root-shell", collapse(site.text), next);
        if (unwrapped.stdinShell && stdin) this.consumeStream(stdin(), "shell", next, collapse(site.flow));
        return undefined;
      }
      if (unwrapped.kind === "script") {
        // runScriptArg adds the label to the chain itself.
        this.runScriptArg(unwrapped.script, { ...ctx, chain: chain.slice(0, -1), privileged }, unwrapped.label, site.text);
        return undefined;
      }
      if (unwrapped.xargs) {
        const variants = this.xargsVariants(unwrapped.args, unwrapped.xargs.replace, stdin);
        stdin = null;
        if (variants.length > 1) {
          let prefix: string | undefined;
          for (const v of variants) prefix = this.evalArgs(v, next, { ...site, stdin: null }) ?? prefix;
          return prefix;
        }
        args = variants[0] ?? [];
      } else args = unwrapped.args;
    }
  }

  /** `xargs CMD`: the input is appended (or put in place of `-I` text); unknown input is one dynamic operand. */
  private xargsVariants(args: Arg[], replace: string | null, stdin: (() => Stream | null) | null): Arg[][] {
    const s = stdin?.() ?? null;
    const items = s?.text != null ? s.text.split(/\s+/).filter(Boolean).slice(0, 64) : null;
    if (replace !== null) {
      const values = items && items.length > 0 ? items.slice(0, MAX_VARIANTS) : null;
      if (!values) return [args.map((a) => (a.value.includes(replace) ? { value: a.value, static: false, splittable: false, word: a.word } : a))];
      return values.map((item) => args.map((a) => (a.value.includes(replace) ? { ...a, value: a.value.split(replace).join(item) } : a)));
    }
    if (items) return [[...args, ...items.map(staticArg)]];
    return [[...args, { value: "$XARGS_INPUT", static: false, splittable: false, word: null }]];
  }

  /** Runs a script argument: re-parsed when static; otherwise unanalysable, with what its substitutions tell. */
  private runScriptArg(arg: Arg, ctx: Ctx, label: string, siteText: string, positional?: readonly Arg[]): void {
    if (arg.network) this.finding("network-to-interpreter", collapse(siteText), ctx, `${label} runs text fetched from the network`);
    if (arg.decoded) this.finding("decode-to-interpreter", collapse(siteText), ctx, `${label} runs decoded text`);
    if (arg.static) {
      if (arg.value.trim() !== "") this.walkSource(arg.value, this.child(ctx, label, positional));
      return;
    }
    let network = false;
    let decoded = false;
    if (arg.network === undefined && arg.decoded === undefined) {
      for (const sub of arg.word?.substitutions ?? []) {
        const s = this.streamOfScript(sub.script, ctx, null);
        network ||= s.network;
        decoded ||= s.decoded;
      }
    }
    if (network) this.finding("network-to-interpreter", collapse(siteText), ctx, `${label} runs text fetched from the network`);
    if (decoded) this.finding("decode-to-interpreter", collapse(siteText), ctx, `${label} runs decoded text`);
    this.unanalysable(`${label} runs a script that is only known when it runs: ${arg.value.slice(0, 120)}`, siteText, ctx);
  }

  /** A shell, interpreter or database client reads its program from `stream`. */
  private consumeStream(stream: Stream | null, kind: "shell" | "sql" | "mongo" | PayloadLanguage | null, ctx: Ctx, prefix: string): void {
    if (!stream) return;
    const origin = stream.origin ? `input from ${stream.origin}` : undefined;
    if (kind !== "sql" && kind !== "mongo") {
      if (stream.network) this.finding("network-to-interpreter", prefix, ctx, origin);
      if (stream.decoded) this.finding("decode-to-interpreter", prefix, ctx, origin);
    }
    if (stream.text === null || stream.text.trim() === "") return;
    if (kind === "shell") this.walkSource(stream.text, this.child(ctx, "stdin script"));
    else if (kind === "sql") this.sqlText({ value: stream.text, static: true, splittable: false, word: null }, "sql", ctx, prefix);
    else if (kind === "mongo") this.sqlText({ value: stream.text, static: true, splittable: false, word: null }, "mongo", ctx, prefix);
    else if (kind) this.payload(stream.text, kind, ctx, prefix);
  }

  private evalCommand(program: string, args: Arg[], ctx: Ctx, site: Site): string | undefined {
    // Builtins that change what later words mean.
    if (DECLARATIONS.has(program)) {
      for (const a of args.slice(1)) {
        const m = ASSIGNMENT.exec(a.value);
        if (!m) continue;
        const value: Arg = { ...a, value: m[2]! };
        this.checkEnvVariable(m[1]!, value, ctx);
        ctx.env ??= new Map();
        if (a.static) ctx.env.set(m[1]!, m[2]!);
        else ctx.env.delete(m[1]!);
      }
      return undefined;
    }
    if (program === "cd" || program === "pushd") {
      const dir = args.slice(1).find((a) => !(a.static && /^-[LPe@]+$/.test(a.value)));
      if (!dir) ctx.cwd = "~";
      else if (dir.static && dir.value !== "-") ctx.cwd = normalisePath(inDirectory(ctx.cwd, dir.value));
      else ctx.cwd = null;
      return undefined;
    }
    if (program === "unset") {
      for (const a of args.slice(1)) ctx.env?.delete(a.value);
      return undefined;
    }
    if (program === "alias") {
      for (const a of args.slice(1)) {
        const m = ASSIGNMENT.exec(a.value) ?? /^([^=]+)=([\s\S]*)$/.exec(a.value);
        if (m) this.runScriptArg({ ...a, value: m[2]! }, ctx, `alias ${m[1]}`, site.text);
      }
      return undefined;
    }
    if (program === "trap") {
      const action = args[1];
      if (action && action.value !== "-" && !action.value.startsWith("-")) this.runScriptArg(action, ctx, "trap", site.text);
      return undefined;
    }
    if (SHELLS.has(program)) return this.shell(program, args, ctx, site);
    if (SOURCE_COMMANDS.has(program)) {
      const file = args[1];
      if (file) this.scriptFile(file, "shell", ctx, site);
      return plainPrefix(program, args.slice(1));
    }
    const interpreter = interpreterName(program);
    if (interpreter) return this.interpreter(interpreter, args, ctx, site);

    const matchers = matchersFor(program);
    const sql = SQL_CLIENTS[program];
    const writer = FILE_WRITERS[program];
    const embedded = EMBEDDED_BY_PROGRAM.get(program);
    const textTool = program === "sed" || program === "gsed" || program === "awk" || program === "gawk" || program === "mawk" || program === "nawk";
    if (!matchers && !sql && !writer && !embedded && !textTool && program !== "find") return undefined;

    const parsed = parseArgs(program, args.slice(1));
    let prefix: string | null = null;
    const getPrefix = (): string => (prefix ??= canonicalPrefix(parsed));
    const local: { rule: Rule; prefix: string; detail: string | undefined }[] = [];
    if (matchers) for (const m of matchers) if (matchCommand(m, parsed, ctx.cwd)) local.push({ rule: m.rule, prefix: getPrefix(), detail: this.detail(ctx) });
    if (program === "curl" || program === "wget" || program === "aria2c") this.noteDownloads(program, parsed, ctx);
    if (writer) for (const t of this.writerTargets(program, parsed)) this.writeTarget(t, getPrefix(), ctx, local);
    if (sql) this.sqlClient(program, parsed, ctx, site, getPrefix());
    if (embedded) this.embedded(program, parsed, embedded, ctx, site);
    if (textTool) this.textTool(program, parsed, ctx, local, getPrefix());
    if (program === "find") this.findExecs(parsed, ctx, site);
    this.flush(local);
    return prefix ?? (local.length > 0 || site.needPrefix ? getPrefix() : undefined);
  }

  /** Normalised form of a file path for the downloaded-files set. */
  private fileKey(value: string, ctx: Ctx): string {
    return normalisePath(inDirectory(ctx.cwd, value.replace(/^(?:\.\/)+/, "")));
  }

  private noteNetFile(value: string, ctx: Ctx): void {
    if (value === "" || value === "-" || value.startsWith("/dev/")) return;
    (ctx.netFiles ??= new Set()).add(this.fileKey(value, ctx));
  }

  /** `curl -o FILE`, `curl -O URL`, `wget [-O FILE] URL`: the files now hold text from the network. */
  private noteDownloads(program: string, parsed: ParsedArgs, ctx: Ctx): void {
    const outputs = parsed.options.get(program === "wget" ? "-O" : "-o") ?? [];
    for (const o of outputs) if (o.static) this.noteNetFile(o.value, ctx);
    const remoteName = program === "wget" ? outputs.length === 0 : parsed.options.has("-O");
    if (remoteName) {
      for (const u of parsed.operands) {
        const m = /^[a-z][a-z0-9+.-]*:\/\/[^?#]*\/([^/?#]+)(?:[?#].*)?$/i.exec(u.value);
        if (u.static && m) this.noteNetFile(decodeURIComponent(m[1]!), ctx);
      }
    }
  }

  /** Was this file downloaded earlier in the command? */
  private isNetFile(a: Arg, ctx: Ctx): boolean {
    return a.static && ctx.netFiles !== null && ctx.netFiles.has(this.fileKey(a.value, ctx));
  }

  private writerTargets(program: string, parsed: ParsedArgs): Arg[] {
    const spec = FILE_WRITERS[program]!;
    if (spec.when && !parsed.options.has(spec.when)) return [];
    const out: Arg[] = [];
    let operands = parsed.operands;
    if ((program === "sed" || program === "perl") && !parsed.options.has("-e") && !parsed.options.has("-f")) operands = operands.slice(1);
    if (spec.operands === "all") out.push(...operands);
    const options = spec.option === undefined ? [] : typeof spec.option === "string" ? [spec.option] : spec.option;
    if (spec.operands === "last" && operands.length >= (spec.minOperands ?? 1) && !options.some((o) => parsed.options.has(o))) out.push(operands[operands.length - 1]!);
    for (const o of options) out.push(...(parsed.options.get(o) ?? []));
    return out;
  }

  private shell(program: string, args: Arg[], ctx: Ctx, site: Site): string {
    // `+o opt`, `+x` turn options off: drop them before the option model.
    const rest: Arg[] = [];
    for (let i = 1; i < args.length; i++) {
      const a = args[i]!;
      if (a.static && /^\+[A-Za-z]+$/.test(a.value)) {
        if (/[oO]$/.test(a.value)) i++;
        continue;
      }
      rest.push(a);
    }
    const parsed = parseArgs(program, rest, SHELL_OPTIONS);
    const prefix = plainPrefix(program, args.slice(1));
    if (parsed.options.has("-c")) {
      const script = parsed.operands[0];
      if (script) this.runScriptArg(script, ctx, `${program} -c`, site.text, parsed.operands.slice(1));
      return prefix;
    }
    const first = parsed.operands[0];
    if (parsed.options.has("-s") || !first || (first.static && (first.value === "-" || first.value === "/dev/stdin"))) {
      const input = site.stdin ? site.stdin() : null;
      if (input) this.consumeStream(input, "shell", ctx, collapse(site.flow));
      else if (ctx.privileged) this.finding("root-shell", collapse(site.text), ctx);
      return prefix;
    }
    this.scriptFile(first, "shell", ctx, site);
    return prefix;
  }

  /** A script file operand: a process substitution (`bash <(curl …)`) or `/dev/tcp/…` is a stream; a plain file cannot be seen. */
  private scriptFile(file: Arg, kind: "shell" | PayloadLanguage | null, ctx: Ctx, site: Site): void {
    if (this.isNetFile(file, ctx)) this.finding("network-to-interpreter", collapse(site.text), ctx, `${file.value} was downloaded earlier in the command`);
    const subs = file.word?.substitutions ?? [];
    for (const sub of subs) {
      if (sub.kind === "process_in" || sub.kind === "command") {
        const s = this.streamOfScript(sub.script, ctx, null);
        this.consumeStream(s, kind, ctx, collapse(site.text));
      }
    }
    if (subs.length === 0 && (file.value === "/dev/stdin" || file.value === "-") && site.stdin) this.consumeStream(site.stdin(), kind, ctx, collapse(site.flow));
  }

  private interpreter(name: string, args: Arg[], ctx: Ctx, site: Site): string {
    const spec = INTERPRETERS[name]!;
    const parsed = parseArgs(name, args.slice(1));
    const prefix = canonicalPrefix({ ...parsed, program: basename(args[0]!.value) });
    const codes: Arg[] = [];
    for (const o of spec.codeOptions) codes.push(...(parsed.options.get(o) ?? []));
    const lang = spec.language;
    if (name === "pwsh" || name === "powershell") {
      if (parsed.options.has("-ec")) this.finding("decode-to-interpreter", collapse(site.text), ctx, "PowerShell -EncodedCommand");
    }
    if (codes.length > 0) {
      const label = `${name} ${spec.codeOptions.join("/")}`;
      if (codes.every((c) => c.static)) {
        if (lang) this.payload(codes.map((c) => c.value).join("\n"), lang, this.child(ctx, label), collapse(site.text));
      } else {
        for (const c of codes) if (!c.static) this.runScriptArgAsPayload(c, ctx, label, site.text);
      }
      return prefix;
    }
    if (parsed.options.has("-m")) return prefix;
    const first = parsed.operands[0];
    if (!first || (first.static && (first.value === "-" || first.value === "/dev/stdin"))) {
      const input = site.stdin ? site.stdin() : null;
      if (input) this.consumeStream(input, lang, ctx, collapse(site.flow));
      return prefix;
    }
    this.scriptFile(first, lang, ctx, site);
    return prefix;
  }

  private runScriptArgAsPayload(arg: Arg, ctx: Ctx, label: string, siteText: string): void {
    let network = false;
    let decoded = false;
    for (const sub of arg.word?.substitutions ?? []) {
      const s = this.streamOfScript(sub.script, ctx, null);
      network ||= s.network;
      decoded ||= s.decoded;
    }
    if (network) this.finding("network-to-interpreter", collapse(siteText), ctx, `${label} runs code fetched from the network`);
    if (decoded) this.finding("decode-to-interpreter", collapse(siteText), ctx, `${label} runs decoded code`);
    this.unanalysable(`${label} runs code that is only known when it runs: ${arg.value.slice(0, 120)}`, siteText, ctx);
  }

  /** Interpreter payload: shell-outs are scanned as scripts, equivalent commands go through the rules. */
  private payload(code: string, lang: PayloadLanguage, ctx: Ctx, prefix: string): void {
    const a = analysePayload(code, lang);
    for (const f of a.findings) this.finding(f.finding, prefix, ctx, f.via);
    for (const reason of a.unanalysable) this.unanalysable(reason, prefix, ctx);
    for (const s of a.scripts) this.walkSource(s.text, this.child(ctx, s.via));
    for (const v of a.argvs) {
      const argv: Arg[] = v.argv.map((value, i) => ({ value, static: !v.dynamic[i], splittable: false, word: null }));
      this.evalArgs(argv, this.child(ctx, v.via), { text: v.argv.join(" "), flow: v.argv.join(" "), stdin: null });
    }
  }

  private sqlText(text: Arg, dialect: "sql" | "mongo", ctx: Ctx, prefix: string): void {
    if (!text.static && /^\s*(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*\)|`.*`)\s*$/s.test(text.value)) {
      this.unanalysable(`a database client runs statements that are only known when it runs: ${text.value.slice(0, 120)}`, prefix, ctx);
      return;
    }
    const result = dialect === "mongo" ? analyseMongo(text.value) : analyseSql(text.value);
    for (const f of result.findings) this.finding(f, prefix, ctx);
    for (const cmd of result.shellCommands) this.walkSource(cmd, this.child(ctx, "database client shell escape"));
  }

  private sqlClient(program: string, parsed: ParsedArgs, ctx: Ctx, site: Site, prefix: string): void {
    const spec = SQL_CLIENTS[program]!;
    const dialect = spec.dialect ?? "sql";
    const texts: Arg[] = [];
    for (const o of spec.codeOptions) texts.push(...(parsed.options.get(o) ?? []));
    if (spec.operandsFrom !== undefined) texts.push(...parsed.operands.slice(spec.operandsFrom));
    if (program === "redis-cli") return;
    for (const t of texts) this.sqlText(t, dialect, ctx, prefix);
    if (texts.length === 0 && !parsed.options.has("-f") && !parsed.options.has("--file") && site.stdin) {
      this.consumeStream(site.stdin(), dialect, ctx, site.flow === site.text ? prefix : collapse(site.flow));
    }
  }

  private embedded(program: string, parsed: ParsedArgs, entries: typeof EMBEDDED_SCRIPTS, ctx: Ctx, site: Site): void {
    for (const e of entries) {
      if (e.subcommands) {
        const ok = e.subcommands.every((alts, i) => alts.split("|").includes(parsed.subcommands[i] ?? "\0"));
        if (!ok) continue;
      }
      for (const v of parsed.options.get(e.option) ?? []) {
        let script = v.value;
        if (e.value) {
          e.value.lastIndex = 0;
          const m = e.value.exec(v.value);
          if (!m) continue;
          script = m[1] ?? v.value;
        }
        this.runScriptArg({ ...v, value: script }, ctx, `${program} ${e.option}`, site.text);
      }
    }
  }

  private textTool(program: string, parsed: ParsedArgs, ctx: Ctx, local: { rule: Rule; prefix: string; detail: string | undefined }[], prefix: string): void {
    const sed = program === "sed" || program === "gsed";
    const scripts: Arg[] = [...(parsed.options.get("-e") ?? [])];
    if (scripts.length === 0 && !parsed.options.has("-f") && parsed.operands[0]) scripts.push(parsed.operands[0]);
    for (const s of scripts) {
      const analysis = sed ? analyseSed(s.value) : analyseAwk(s.value);
      if (analysis.exec) this.finding(sed ? "sed-exec" : "awk-exec", prefix, ctx);
      for (const cmd of analysis.commands) this.walkSource(cmd, this.child(ctx, sed ? "sed e" : "awk system()"));
      for (const file of analysis.writes) this.writeTarget(staticArg(file), prefix, ctx, local);
    }
  }

  private findExecs(parsed: ParsedArgs, ctx: Ctx, site: Site): void {
    if (parsed.execs.length === 0) return;
    const starts = parsed.operands.length > 0 ? parsed.operands.slice(0, MAX_VARIANTS) : [staticArg(".")];
    for (const e of parsed.execs) {
      if (e.args.length === 0) continue;
      const next = this.child(ctx, `find ${e.primary}`);
      next.depth = ctx.depth;
      for (const start of starts) {
        const argv = e.args.map((a) => (a.value.includes("{}") ? { ...a, value: a.value.split("{}").join(start.value), static: a.static && start.static } : a));
        this.evalArgs(argv, next, { text: site.text, flow: site.text, stdin: null });
      }
    }
  }

  // ---------------------------------------------------------------- streams

  /** What a command reads on stdin: its own here-string, heredoc or `<` redirect, else the pipe. */
  private stdinOf(cmd: SimpleCommand, ctx: Ctx, pipeInput: (() => Stream | null) | null): Stream | null {
    for (let i = cmd.redirects.length - 1; i >= 0; i--) {
      const s = this.redirectInput(cmd.redirects[i]!, ctx);
      if (s !== undefined) return s;
    }
    return pipeInput ? pipeInput() : null;
  }

  /** A redirect's input stream; undefined when the redirect is not an input. */
  private redirectInput(r: Redirect, ctx: Ctx): Stream | null | undefined {
    if (r.operator === "<<<") {
      const out: Arg[] = [];
      const f = resolveWord(r.target, ctx.env, (w) => w.substitutions.map((sub) => (sub.kind === "command" ? this.streamOfScript(sub.script, ctx, null) : null)), out);
      const a = out[0];
      const text = a && a.static ? a.value + "\n" : null;
      return { text, network: f.network, decoded: f.decoded, origin: "here-string" };
    }
    if (r.operator === "<<" || r.operator === "<<-") {
      let network = false;
      let decoded = false;
      for (const sub of r.heredoc?.substitutions ?? []) {
        const s = this.streamOfScript(sub.script, ctx, null);
        network ||= s.network;
        decoded ||= s.decoded;
      }
      return { text: r.heredoc?.body ?? null, network, decoded, origin: "heredoc" };
    }
    if (r.operator === "<" || r.operator === "<>") {
      for (const sub of r.target.substitutions) if (sub.kind === "process_in") return this.streamOfScript(sub.script, ctx, null);
      if (/^\/dev\/(?:tcp|udp)\//.test(r.target.value)) return { text: null, network: true, decoded: false, origin: r.target.value };
      return emptyStream();
    }
    return undefined;
  }

  private streamOfCommands(p: Pipeline, upto: number, ctx: Ctx, input: (() => Stream | null) | null): Stream | null {
    let s: Stream | null = input ? input() : null;
    for (let j = 0; j < upto; j++) s = this.streamOfCommand(p.commands[j]!, s, ctx);
    return s;
  }

  streamOfScript(script: Script, ctx: Ctx, input: Stream | null): Stream {
    if (this.streamDepth > MAX_STREAM_DEPTH) return emptyStream();
    this.streamDepth++;
    try {
      let text: string | null = "";
      let network = false;
      let decoded = false;
      const origins: string[] = [];
      for (let i = 0; i < script.pipelines.length; i++) {
        const p = script.pipelines[i]!;
        let s: Stream | null = i === 0 ? input : null;
        for (const c of p.commands) s = this.streamOfCommand(c, s, ctx);
        if (!s) continue;
        network ||= s.network;
        decoded ||= s.decoded;
        if (s.origin) origins.push(s.origin);
        text = text !== null && s.text !== null ? text + s.text : null;
      }
      return { text, network, decoded, origin: origins.join("; ") };
    } finally {
      this.streamDepth--;
    }
  }

  private streamOfCommand(cmd: SimpleCommand | CompoundCommand, input: Stream | null, ctx: Ctx): Stream {
    if (cmd.kind === "compound") {
      let network = input?.network ?? false;
      let decoded = input?.decoded ?? false;
      let text: string | null = null;
      for (const b of cmd.bodies) {
        const s = this.streamOfScript(b, ctx, input);
        network ||= s.network;
        decoded ||= s.decoded;
        if (cmd.bodies.length === 1 && (cmd.type === "subshell" || cmd.type === "group")) text = s.text;
      }
      return { text, network, decoded, origin: "" };
    }
    let own: Stream | null | undefined;
    for (let i = cmd.redirects.length - 1; i >= 0 && own === undefined; i--) own = this.redirectInput(cmd.redirects[i]!, ctx);
    if (own !== undefined) input = own;
    if (cmd.argv.length === 0) return emptyStream();
    let args = this.resolveArgs(cmd.argv, ctx);
    // Wrappers (sudo curl …, env …, timeout …).
    for (let step = 0; step < MAX_WRAPPERS && args.length > 0 && args[0]!.static; step++) {
      const program = basename(args[0]!.value);
      const key = wrapperKey(program, args);
      if (!key) break;
      if (program === "ssh") return { text: null, network: true, decoded: input?.decoded ?? false, origin: "ssh" };
      const u = unwrapOnce(key, args);
      if (u.kind === "command") args = u.args;
      else if (u.kind === "script" && u.script.static && this.parses < this.maxParses) {
        this.parses++;
        const parsed = parseShell(u.script.value, this.options.parse);
        for (const problem of parsed.problems) if (problem.includes("time budget")) this.timedOut = true;
        return this.streamOfScript(parsed.script, ctx, input);
      } else return { text: null, network: input?.network ?? false, decoded: input?.decoded ?? false, origin: "" };
    }
    if (args.length === 0) return emptyStream();
    const head = args[0]!;
    const inNet = input?.network ?? false;
    const inDec = input?.decoded ?? false;
    const inOrigin = input?.origin ?? "";
    if (!head.static) return { text: null, network: inNet || (head.network ?? false), decoded: inDec || (head.decoded ?? false), origin: inOrigin };
    const program = basename(head.value);
    const origin = inOrigin ? `${inOrigin} | ${program}` : program;
    const values = args.slice(1);
    const allStatic = values.every((a) => a.static);
    if (program === "echo" || program === "printf") {
      const network = values.some((a) => a.network);
      const decoded = values.some((a) => a.decoded);
      const text = allStatic ? (program === "echo" ? echoOutput(values.map((a) => a.value)) : printfOutput(values.map((a) => a.value))) : null;
      return { text, network, decoded, origin };
    }
    if (NETWORK_FETCHERS.has(program)) return { text: null, network: true, decoded: inDec, origin };
    if (program === "cat" || program === "tac") {
      const files = values.filter((a) => !(a.static && a.value.startsWith("-") && a.value !== "-"));
      if (files.length === 0 || (files.length === 1 && files[0]!.value === "-")) {
        return { text: program === "cat" ? (input?.text ?? null) : null, network: inNet, decoded: inDec, origin: inOrigin || "cat" };
      }
      let network = inNet;
      let decoded = inDec;
      const texts: (string | null)[] = [];
      for (const f of files) {
        const subs = f.word?.substitutions ?? [];
        if (subs.length === 0) {
          if (/^\/dev\/(?:tcp|udp)\//.test(f.value)) network = true;
          texts.push(null);
        }
        for (const sub of subs) {
          const s = this.streamOfScript(sub.script, ctx, null);
          network ||= s.network;
          decoded ||= s.decoded;
          texts.push(s.text);
        }
      }
      return { text: texts.every((t) => t !== null) ? texts.join("") : null, network, decoded, origin };
    }
    const decoders = DECODERS[program];
    if (decoders) {
      const parsed = parseArgs(program, values);
      for (const d of decoders) {
        if (d.subcommands && !d.subcommands.every((s, i) => parsed.subcommands[i] === s)) continue;
        if (d.anyOptions && d.anyOptions.length > 0 && !d.anyOptions.some((o) => parsed.options.has(o))) continue;
        const text = input?.text != null ? decode(d.decode, input.text, d.decode === "tr" ? parsed.operands.map((o) => o.value) : undefined) : null;
        return { text, network: inNet, decoded: true, origin };
      }
    }
    if (PASS_THROUGH.has(program)) return { text: program === "tee" ? (input?.text ?? null) : null, network: inNet, decoded: inDec, origin };
    return { text: null, network: inNet, decoded: inDec || (input?.text != null && input.text !== ""), origin };
  }
}

/** Analyses a command (the parser must be initialised). */
export function analyse(command: string, options: DetectOptions = {}): Detection {
  return analyseTimed(command, options).detection;
}

/** `analyse`, also telling whether a parse ran out of its time budget (such a result must not be cached). */
export function analyseTimed(command: string, options: DetectOptions = {}): { detection: Detection; timedOut: boolean } {
  const a = new Analysis(options);
  a.walkSource(command, { depth: 0, env: null, chain: [], privileged: false, cwd: null, netFiles: new Set() });
  const hardline = a.matches.some((m) => m.hardline);
  const detection: Detection = {
    command,
    analysable: a.reasons.length === 0,
    unanalysable: a.reasons,
    matches: a.matches,
    hardline,
    dangerous: a.matches.length > 0,
  };
  return { detection, timedOut: a.timedOut };
}

export { RULES_BY_ID };
