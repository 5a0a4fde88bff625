/**
 * What flows through pipes, redirects and substitutions, computed without running
 * anything: the text when it is known, and whether it came from the network or a
 * decoder (see streams.ts for the pure helpers). Substitution outputs feed word
 * resolution, so argument resolution lives here too.
 */
import { parseShell } from "../../shell/index.js";
import type { CompoundCommand, Pipeline, Redirect, Script, SimpleCommand, Word } from "../../shell/types.js";
import { DECODERS, NETWORK_FETCHERS, PASS_THROUGH } from "../rules/programs.js";
import { AnalysisBase, MAX_STREAM_DEPTH, MAX_WRAPPERS, emptyStream, type Ctx } from "./analysis-base.js";
import type { Arg } from "./model.js";
import { parseArgs } from "./parse-args.js";
import { isSecretPath, mayPrintSecret, printsSecret, printsSecretsItself, SECRET_HINT } from "./secrets.js";
import { dateOutput, decode, echoOutput, LINE_FILTERS, mktempOutput, PATH_LISTERS, printfOutput, printsRelativePaths, type Stream } from "./streams.js";
import { basename, DECLARATION_BUILTINS, isAssignmentWord, resolveWord, type Env, type SubstitutionOutput } from "./words.js";
import { unwrapOnce, WRAPPERS, wrapperKey } from "./wrappers.js";

export abstract class StreamAnalysis extends AnalysisBase {
  /** Resolves a command's words, putting in substitution outputs that are known. */
  protected readonly resolver = (ctx: Ctx) => (w: Word): (SubstitutionOutput | null)[] =>
    w.substitutions.map((sub) => (sub.kind === "command" ? this.streamOfScript(sub.script, ctx, null) : null));

  protected resolveArgs(words: readonly Word[], ctx: Ctx): Arg[] {
    const args: Arg[] = [];
    let resolver: ((w: Word) => (SubstitutionOutput | null)[]) | null = null;
    const first = words[0];
    const declaration = first !== undefined && first.static && DECLARATION_BUILTINS.has(first.value);
    for (const w of words) {
      if (w.substitutions.length > 0) resolver ??= this.resolver(ctx);
      resolveWord(w, ctx.env as Env | null, w.substitutions.length > 0 ? resolver : null, args, declaration && w !== first && isAssignmentWord(w));
    }
    return args;
  }

  /** What a command reads on stdin: its own here-string, heredoc or `<` redirect, else the pipe. */
  protected stdinOf(cmd: SimpleCommand, ctx: Ctx, pipeInput: (() => Stream | null) | null): Stream | null {
    for (let i = cmd.redirects.length - 1; i >= 0; i--) {
      const s = this.redirectInput(cmd.redirects[i]!, ctx);
      if (s !== undefined) return s;
    }
    return pipeInput ? pipeInput() : null;
  }

  /** A redirect's input stream; undefined when the redirect is not an input. */
  protected redirectInput(r: Redirect, ctx: Ctx): Stream | null | undefined {
    if (r.operator === "<<<") {
      const out: Arg[] = [];
      const f = resolveWord(r.target, ctx.env, (w) => w.substitutions.map((sub) => (sub.kind === "command" ? this.streamOfScript(sub.script, ctx, null) : null)), out);
      const a = out[0];
      const text = a && a.static ? a.value + "\n" : null;
      const stream: Stream = { text, network: f.network, decoded: f.decoded, origin: "here-string" };
      if (f.secret) stream.secret = true;
      return stream;
    }
    if (r.operator === "<<" || r.operator === "<<-") {
      const stream: Stream = { text: r.heredoc?.body ?? null, network: false, decoded: false, origin: "heredoc" };
      for (const sub of r.heredoc?.substitutions ?? []) {
        const s = this.streamOfScript(sub.script, ctx, null);
        stream.network ||= s.network;
        stream.decoded ||= s.decoded;
        if (s.secret) stream.secret = true;
      }
      return stream;
    }
    if (r.operator === "<" || r.operator === "<>") {
      for (const sub of r.target.substitutions) if (sub.kind === "process_in") return this.streamOfScript(sub.script, ctx, null);
      if (/^\/dev\/(?:tcp|udp)\//.test(r.target.value)) return { text: null, network: true, decoded: false, origin: r.target.value };
      if (isSecretPath(r.target.value, r.target.static)) return { text: null, network: false, decoded: false, origin: r.target.value, secret: true };
      return emptyStream();
    }
    return undefined;
  }

  protected streamOfCommands(p: Pipeline, upto: number, ctx: Ctx, input: (() => Stream | null) | null): Stream | null {
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
      let secret = false;
      let relative = script.pipelines.length > 0;
      const origins: string[] = [];
      for (let i = 0; i < script.pipelines.length; i++) {
        const p = script.pipelines[i]!;
        let s: Stream | null = i === 0 ? input : null;
        for (const c of p.commands) s = this.streamOfCommand(c, s, ctx);
        if (!s) {
          relative = false;
          continue;
        }
        network ||= s.network;
        decoded ||= s.decoded;
        secret ||= s.secret ?? false;
        relative &&= s.relativePaths ?? false;
        if (s.origin) origins.push(s.origin);
        text = text !== null && s.text !== null ? text + s.text : null;
      }
      const out: Stream = { text, network, decoded, origin: origins.join("; ") };
      if (secret) out.secret = true;
      if (relative && text === null) out.relativePaths = true;
      return out;
    } finally {
      this.streamDepth--;
    }
  }

  /** What `cmd` writes to stdout, given what it reads; secrets in stay secrets out. */
  protected streamOfCommand(cmd: SimpleCommand | CompoundCommand, input: Stream | null, ctx: Ctx): Stream {
    const s = this.streamOf(cmd, input, ctx);
    if (s.secret || !(input?.secret || (cmd.kind === "simple" && this.printsSecret(cmd, ctx)))) return s;
    return { ...s, secret: true };
  }

  /** Reads the command's own arguments (behind sudo/env/…): does it print a secret? */
  private printsSecret(cmd: SimpleCommand, ctx: Ctx): boolean {
    const first = cmd.argv[0];
    // Cheap tests first: a program that neither reads files nor prints secrets, nor runs another;
    // a reader whose words name nothing that could be a secret.
    if (!first || (first.static && !mayPrintSecret(basename(first.value)) && !WRAPPERS[basename(first.value)])) return false;
    if (first.static && !printsSecretsItself(basename(first.value)) && !SECRET_HINT.test(cmd.text)) return false;
    let args = this.resolveArgs(cmd.argv, ctx);
    for (let step = 0; step < MAX_WRAPPERS && args[0]?.static; step++) {
      const program = basename(args[0].value);
      // `env` alone prints the environment; `sudo cat ~/.ssh/id_rsa` prints what cat reads.
      if (mayPrintSecret(program) && printsSecret(parseArgs(program, args.slice(1)))) return true;
      const key = wrapperKey(program, args);
      if (!key) return false;
      const u = unwrapOnce(key, args);
      if (u.kind !== "command") return false;
      args = u.args;
    }
    return false;
  }

  private streamOf(cmd: SimpleCommand | CompoundCommand, input: Stream | null, ctx: Ctx): Stream {
    if (cmd.kind === "compound") {
      let network = input?.network ?? false;
      let decoded = input?.decoded ?? false;
      let secret = input?.secret ?? false;
      let text: string | null = null;
      for (const b of cmd.bodies) {
        const s = this.streamOfScript(b, ctx, input);
        network ||= s.network;
        decoded ||= s.decoded;
        secret ||= s.secret ?? false;
        if (cmd.bodies.length === 1 && (cmd.type === "subshell" || cmd.type === "group")) text = s.text;
      }
      const out: Stream = { text, network, decoded, origin: "" };
      if (secret) out.secret = true;
      return out;
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
      const out: Stream = { text, network, decoded, origin };
      if (values.some((a) => a.secret)) out.secret = true;
      return out;
    }
    if (NETWORK_FETCHERS.has(program)) return { text: null, network: true, decoded: inDec, origin };
    if (program === "mktemp" && allStatic) return { text: mktempOutput(values.map((a) => a.value)), network: false, decoded: false, origin };
    if (program === "date") return { text: dateOutput(values.map((a) => a.value)), network: false, decoded: false, origin };
    if ((PATH_LISTERS.has(program) && printsRelativePaths(program, values)) || (input?.relativePaths && LINE_FILTERS.has(program) && !values.some((a) => a.value === "-o" || a.value === "--only-matching"))) {
      return { text: null, network: inNet, decoded: inDec, origin, relativePaths: true };
    }
    if (program === "cat" || program === "tac") {
      const files = values.filter((a) => !(a.static && a.value.startsWith("-") && a.value !== "-"));
      if (files.length === 0 || (files.length === 1 && files[0]!.value === "-")) {
        return { text: program === "cat" ? (input?.text ?? null) : null, network: inNet, decoded: inDec, origin: inOrigin || "cat" };
      }
      let network = inNet;
      let decoded = inDec;
      let secret = false;
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
          secret ||= s.secret ?? false;
          texts.push(s.text);
        }
      }
      const out: Stream = { text: texts.every((t) => t !== null) ? texts.join("") : null, network, decoded, origin };
      if (secret) out.secret = true;
      return out;
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
