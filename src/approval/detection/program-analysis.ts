/**
 * Programs the walk treats specially: shells and interpreters (the script they
 * run: an argument, a file, a stream), database clients (their statements),
 * tools with embedded commands or scripts (`git -c`, `sed`, `awk`, `find -exec`),
 * and the files a writer writes or a download fetches.
 */
import { EMBEDDED_SCRIPTS, FILE_WRITERS, INTERPRETERS, SQL_CLIENTS, type PayloadLanguage } from "../rules/programs.js";
import { collapse, MAX_VARIANTS, type Ctx, type LocalMatches, type Site } from "./analysis-base.js";
import { staticArg, type Arg, type ParsedArgs } from "./model.js";
import { SHELL_OPTIONS } from "./options.js";
import { canonicalPrefix, parseArgs, plainPrefix } from "./parse-args.js";
import { inDirectory, normalisePath } from "./paths.js";
import { analyseForeign, type ForeignLanguage } from "./foreign-code.js";
import { analysePayload } from "./payload.js";
import { forgetAllVariables } from "./shell-state.js";
import { analyseMongo, analyseSql } from "./sql.js";
import { StreamAnalysis } from "./stream-analysis.js";
import type { Stream } from "./streams.js";
import { analyseAwk, analyseSed } from "./tool-scripts.js";
import { basename } from "./words.js";

export const EMBEDDED_BY_PROGRAM = new Map<string, typeof EMBEDDED_SCRIPTS>();
for (const e of EMBEDDED_SCRIPTS) {
  for (const p of e.programs) EMBEDDED_BY_PROGRAM.set(p, [...(EMBEDDED_BY_PROGRAM.get(p) ?? []), e]);
}

/**
 * A command run for every file found under `start` (`find … -exec CMD {} ;`, `fd … -x CMD`):
 * `{}` is each of them, only known when it runs but below `start` (`./$FOUND`). Without a
 * `{}` the files go at the end (`fd -x CMD`).
 */
export function foundArgs(args: readonly Arg[], start: Arg, hasPlaceholder: boolean): Arg[] {
  const found = `${start.value.replace(/\/+$/, "")}/$FOUND`;
  const put = (a: Arg): Arg => (a.value.includes("{}") ? { ...a, value: a.value.split("{}").join(found), static: false } : a);
  const out = args.map(put);
  if (!hasPlaceholder) out.push({ value: found, static: false, splittable: false, word: null });
  return out;
}

/** How a script argument runs (`runScriptArg`). */
export interface ScriptRun {
  /** `$0 $1 …` of the new shell (`sh -c SCRIPT NAME ARGS`). */
  positional?: readonly Arg[];
  /** In this very shell (`eval`): what it sets stays set. */
  sameShell?: boolean;
  /** What the script reads on stdin (`ssh host 'bash -s' < setup.sh`). */
  input?: (() => Stream | null) | null;
}

const FOREIGN: ReadonlySet<PayloadLanguage> = new Set<PayloadLanguage>(["tcl", "powershell", "cmd", "applescript"]);

function isForeign(lang: PayloadLanguage): lang is ForeignLanguage {
  return FOREIGN.has(lang);
}

function joinKnown(a: string | null, b: string | null): string | null {
  return a !== null && b !== null ? a + b : null;
}

export abstract class ProgramAnalysis extends StreamAnalysis {
  protected abstract writeTarget(target: Arg, prefix: string, ctx: Ctx, local: LocalMatches): void;

  /**
   * Runs a script argument: re-parsed when static; otherwise unanalysable, with what its substitutions tell.
   * `sameShell`: the text runs in this shell (`eval`), so what it sets stays set.
   */
  protected runScriptArg(arg: Arg, ctx: Ctx, label: string, siteText: string, how: ScriptRun = {}): void {
    if (arg.network) this.finding("network-to-interpreter", collapse(siteText), ctx, `${label} runs text fetched from the network`);
    if (arg.decoded) this.finding("decode-to-interpreter", collapse(siteText), ctx, `${label} runs decoded text`);
    const sameShell = how.sameShell ?? false;
    if (arg.static) {
      if (arg.value.trim() !== "") this.walkSource(arg.value, sameShell ? this.sameShell(ctx, label) : this.child(ctx, label, how.positional), how.input ?? null);
      return;
    }
    if (sameShell) forgetAllVariables((ctx.env ??= new Map()));
    // Flags already on the argument were reported above.
    if (arg.network === undefined && arg.decoded === undefined) this.reportSubstitutedCode(arg, ctx, label, siteText, "text");
    this.unanalysable(`${label} runs a script that is only known when it runs: ${arg.value.slice(0, 120)}`, siteText, ctx);
  }

  /** Code made by the argument's substitutions: fetched from the network, or decoded. */
  private reportSubstitutedCode(arg: Arg, ctx: Ctx, label: string, siteText: string, what: "text" | "code"): void {
    let network = false;
    let decoded = false;
    for (const sub of arg.word?.substitutions ?? []) {
      const s = this.streamOfScript(sub.script, ctx, null);
      network ||= s.network;
      decoded ||= s.decoded;
    }
    if (network) this.finding("network-to-interpreter", collapse(siteText), ctx, `${label} runs ${what} fetched from the network`);
    if (decoded) this.finding("decode-to-interpreter", collapse(siteText), ctx, `${label} runs decoded ${what}`);
  }

  /** A shell, interpreter or database client reads its program from `stream`. */
  protected consumeStream(stream: Stream | null, kind: "shell" | "sql" | "mongo" | PayloadLanguage | null, ctx: Ctx, prefix: string): void {
    if (!stream) return;
    const origin = stream.origin ? `input from ${stream.origin}` : undefined;
    if (kind !== "sql" && kind !== "mongo") {
      if (stream.network) this.finding("network-to-interpreter", prefix, ctx, origin);
      if (stream.decoded) this.finding("decode-to-interpreter", prefix, ctx, origin);
    }
    if (stream.text === null) {
      // A shell or interpreter reading code nobody can see (`cat x.sh | bash`, `bash <<< "$S"`) is never safe.
      if (kind !== "sql" && kind !== "mongo" && !stream.network && !stream.decoded) {
        this.unanalysable(`${kind ?? "an interpreter"} runs code read from ${stream.origin || "its input"}, which is only known when it runs`, prefix, ctx);
      }
      return;
    }
    if (stream.text.trim() === "") return;
    if (kind === "shell") this.walkSource(stream.text, this.child(ctx, "stdin script"));
    else if (kind === "sql") this.sqlText({ value: stream.text, static: true, splittable: false, word: null }, "sql", ctx, prefix);
    else if (kind === "mongo") this.sqlText({ value: stream.text, static: true, splittable: false, word: null }, "mongo", ctx, prefix);
    else if (kind) this.payload(stream.text, kind, ctx, prefix);
    else this.unanalysable(`an interpreter runs code in a language that is not analysed, read from ${stream.origin || "its input"}`, prefix, ctx);
  }


  protected fileKey(value: string, ctx: Ctx): string {
    return normalisePath(inDirectory(ctx.cwd, value.replace(/^(?:\.\/)+/, "")));
  }

  protected noteNetFile(value: string, ctx: Ctx): void {
    if (value === "" || value === "-" || value.startsWith("/dev/")) return;
    (ctx.netFiles ??= new Set()).add(this.fileKey(value, ctx));
  }

  /** `curl -o FILE`, `curl -O URL`, `wget [-O FILE] URL`: the files now hold text from the network. */
  protected noteDownloads(program: string, parsed: ParsedArgs, ctx: Ctx): void {
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

  /**
   * Files written earlier in the command by a redirect (`printf '…' > /tmp/c.sh`), with what was
   * written, worked out only when one of them is run. Keyed like downloads (`fileKey`).
   */
  private readonly writtenFiles: { file: string; cwd: string | null; append: boolean; content: () => string | null }[] = [];

  /** Notes what a redirect writes to `file` (`append`: after what was there). Keys are worked out only when a file is run. */
  protected noteWrittenFile(file: string, ctx: Ctx, append: boolean, content: () => string | null): void {
    if (file === "" || file.startsWith("/dev/")) return;
    this.writtenFiles.push({ file, cwd: ctx.cwd, append, content });
  }

  /** What the command wrote to `file` earlier: the text, null when only known at run time, undefined when it did not write it. */
  protected writtenContent(file: Arg, ctx: Ctx): string | null | undefined {
    if (!file.static || this.writtenFiles.length === 0) return undefined;
    const key = this.fileKey(file.value, ctx);
    let text: string | null | undefined;
    for (const w of this.writtenFiles) {
      if (this.fileKey(w.file, { ...ctx, cwd: w.cwd }) !== key) continue;
      text = w.append && text !== undefined ? joinKnown(text, w.content()) : w.content();
    }
    return text;
  }

  protected runWrittenFile(file: Arg, kind: "shell" | PayloadLanguage | null, ctx: Ctx, site: Site): boolean {
    const text = this.writtenContent(file, ctx);
    if (text === undefined) return false;
    if (text === null) this.unanalysable(`${file.value} was written earlier in the command, with content only known when it runs, and is run`, site.text, ctx);
    else this.consumeStream({ text, network: false, decoded: false, origin: file.value }, kind, this.child(ctx, `${file.value} (written earlier)`), collapse(site.text));
    return true;
  }

  /** Was this file downloaded earlier in the command? */
  protected isNetFile(a: Arg, ctx: Ctx): boolean {
    return a.static && ctx.netFiles !== null && ctx.netFiles.has(this.fileKey(a.value, ctx));
  }

  protected writerTargets(program: string, parsed: ParsedArgs): Arg[] {
    const spec = FILE_WRITERS[program]!;
    if (spec.when && !parsed.options.has(spec.when)) return [];
    if (spec.unless?.some((o) => parsed.options.has(o))) return [];
    const out: Arg[] = [];
    let operands = parsed.operands;
    if ((program === "sed" || program === "perl") && !parsed.options.has("-e") && !parsed.options.has("-f")) operands = operands.slice(1);
    if (spec.operands === "all") out.push(...operands);
    const options = spec.option === undefined ? [] : typeof spec.option === "string" ? [spec.option] : spec.option;
    if (spec.operands === "last" && operands.length >= (spec.minOperands ?? 1) && !options.some((o) => parsed.options.has(o))) out.push(operands[operands.length - 1]!);
    for (const o of options) out.push(...(parsed.options.get(o) ?? []));
    return out;
  }

  protected shell(program: string, args: Arg[], ctx: Ctx, site: Site): string {
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
      if (script) this.runScriptArg(script, ctx, `${program} -c`, site.text, { positional: parsed.operands.slice(1), input: site.stdin });
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
  protected scriptFile(file: Arg, kind: "shell" | PayloadLanguage | null, ctx: Ctx, site: Site): void {
    if (this.isNetFile(file, ctx)) this.finding("network-to-interpreter", collapse(site.text), ctx, `${file.value} was downloaded earlier in the command`);
    this.runWrittenFile(file, kind, ctx, site);
    const subs = file.word?.substitutions ?? [];
    for (const sub of subs) {
      if (sub.kind === "process_in" || sub.kind === "command") {
        const s = this.streamOfScript(sub.script, ctx, null);
        this.consumeStream(s, kind, ctx, collapse(site.text));
      }
    }
    if (subs.length === 0 && (file.value === "/dev/stdin" || file.value === "-") && site.stdin) this.consumeStream(site.stdin(), kind, ctx, collapse(site.flow));
  }

  protected interpreter(name: string, args: Arg[], ctx: Ctx, site: Site): string {
    const spec = INTERPRETERS[name]!;
    const parsed = parseArgs(name, args.slice(1));
    const prefix = canonicalPrefix({ ...parsed, program: basename(args[0]!.value) });
    const codes: Arg[] = [];
    for (const o of spec.codeOptions) codes.push(...(parsed.options.get(o) ?? []));
    const lang = spec.language;
    if (lang === "powershell") {
      // `-Command` takes the rest of the line; `-EncodedCommand` is base64 of UTF-16LE text.
      if (codes.length > 0) codes.push(...parsed.operands);
      for (const enc of parsed.options.get("-ec") ?? []) {
        this.finding("decode-to-interpreter", collapse(site.text), ctx, "PowerShell -EncodedCommand");
        if (enc.static && /^[A-Za-z0-9+/=]+$/.test(enc.value)) this.payload(Buffer.from(enc.value, "base64").toString("utf16le"), lang, this.child(ctx, "powershell -EncodedCommand"), collapse(site.text));
      }
    }
    if (codes.length > 0) {
      const label = `${name} ${spec.codeOptions.join("/")}`;
      if (codes.every((c) => c.static)) {
        const code = codes.map((c) => c.value).join(lang === "powershell" ? " " : "\n");
        if (lang) this.payload(code, lang, this.child(ctx, label), collapse(site.text));
        else this.unanalysable(`${label} runs ${name} code, which is not analysed: ${code.slice(0, 80)}`, site.text, ctx);
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

  protected runScriptArgAsPayload(arg: Arg, ctx: Ctx, label: string, siteText: string): void {
    this.reportSubstitutedCode(arg, ctx, label, siteText, "code");
    this.unanalysable(`${label} runs code that is only known when it runs: ${arg.value.slice(0, 120)}`, siteText, ctx);
  }

  /** Interpreter payload: shell-outs are scanned as scripts, equivalent commands go through the rules. */
  protected payload(code: string, lang: PayloadLanguage, ctx: Ctx, prefix: string): void {
    const a = isForeign(lang) ? analyseForeign(code, lang) : analysePayload(code, lang);
    for (const f of a.findings) this.finding(f.finding, prefix, ctx, f.via);
    for (const reason of a.unanalysable) this.unanalysable(reason, prefix, ctx);
    for (const s of a.scripts) this.walkSource(s.text, this.child(ctx, s.via));
    for (const v of a.argvs) {
      const argv: Arg[] = v.argv.map((value, i) => ({ value, static: !v.dynamic[i], splittable: false, word: null }));
      this.evalArgs(argv, this.child(ctx, v.via), { text: v.argv.join(" "), flow: v.argv.join(" "), stdin: null });
    }
  }

  protected sqlText(text: Arg, dialect: "sql" | "mongo", ctx: Ctx, prefix: string): void {
    if (!text.static && /^\s*(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*\)|`.*`)\s*$/s.test(text.value)) {
      this.unanalysable(`a database client runs statements that are only known when it runs: ${text.value.slice(0, 120)}`, prefix, ctx);
      return;
    }
    const result = dialect === "mongo" ? analyseMongo(text.value) : analyseSql(text.value);
    for (const f of result.findings) this.finding(f, prefix, ctx);
    for (const cmd of result.shellCommands) this.walkSource(cmd, this.child(ctx, "database client shell escape"));
  }

  protected sqlClient(program: string, parsed: ParsedArgs, ctx: Ctx, site: Site, prefix: string): void {
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

  protected embedded(program: string, parsed: ParsedArgs, entries: typeof EMBEDDED_SCRIPTS, ctx: Ctx, site: Site): void {
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

  protected textTool(program: string, parsed: ParsedArgs, ctx: Ctx, local: LocalMatches, prefix: string): void {
    const sed = program === "sed" || program === "gsed";
    const scripts: Arg[] = [...(parsed.options.get("-e") ?? [])];
    if (scripts.length === 0 && !parsed.options.has("-f") && parsed.operands[0]) scripts.push(parsed.operands[0]);
    for (const s of scripts) {
      const analysis = sed ? analyseSed(s.value) : analyseAwk(s.value);
      if (analysis.exec) this.finding(sed ? "sed-exec" : "awk-exec", prefix, ctx);
      // What the command reads (awk's output for `print | "cmd"`) is only known when it runs.
      for (const cmd of analysis.commands) this.walkSource(cmd, this.child(ctx, sed ? "sed e" : "awk system()"), () => ({ text: null, network: false, decoded: false, origin: program }));
      for (const file of analysis.writes) this.writeTarget(staticArg(file), prefix, ctx, local);
      for (const head of analysis.computedWrites ?? []) this.writeTarget({ value: `${head}$AWK_FILE`, static: false, splittable: false, word: null }, prefix, ctx, local);
    }
  }

  protected findExecs(parsed: ParsedArgs, ctx: Ctx, site: Site): void {
    if (parsed.execs.length === 0) return;
    const starts = parsed.operands.length > 0 ? parsed.operands.slice(0, MAX_VARIANTS) : [staticArg(".")];
    for (const e of parsed.execs) {
      if (e.args.length === 0) continue;
      const next = this.child(ctx, `find ${e.primary}`);
      next.depth = ctx.depth;
      const placeholder = e.args.some((a) => a.value.includes("{}"));
      for (const start of starts) {
        // find visits each start path itself first, then what is below it.
        if (placeholder) this.evalArgs(e.args.map((a) => (a.value.includes("{}") ? { ...a, value: a.value.split("{}").join(start.value), static: a.static && start.static } : a)), next, { text: site.text, flow: site.text, stdin: null });
        this.evalArgs(foundArgs(e.args, start, placeholder), next, { text: site.text, flow: site.text, stdin: null });
      }
    }
  }


}
