/**
 * Programs that run other commands in ways the wrapper table (wrappers.ts) cannot
 * describe: GNU `parallel` (a command template filled from `:::` arguments or
 * command lines read from its input), `fd -x/-X` (a command per file found),
 * debuggers (`gdb --args`, `lldb --`), `at`/`batch` (commands read from the
 * input), containers started with host files mounted (`docker run -v "$PWD":/src
 * … rm -rf node_modules` deletes host files), and cmd.exe / PowerShell commands
 * written at the bash prompt (`del /s /q`, `Remove-Item -Recurse`).
 */
import { FILE_SENDERS, STDIN_SENDERS } from "../rules/programs.js";
import { collapse, MAX_VARIANTS, type Ctx, type Site } from "./analysis-base.js";
import { staticArg, type Arg } from "./model.js";
import { parseArgs } from "./parse-args.js";
import { foundArgs, ProgramAnalysis } from "./program-analysis.js";
import { isSecretPath, sentByCommand } from "./secrets.js";

/** GNU parallel options that take a value (the next word unless attached). */
const PARALLEL_VALUES = new Set(["-j", "-J", "-S", "-d", "-I", "-a", "-E", "-L", "-l", "-N", "-n", "-P", "-s", "-X", "--jobs", "--delay", "--timeout", "--sshlogin", "--arg-file", "--colsep", "--results", "--joblog", "--tagstring", "--workdir", "--basefile", "--return", "--transferfile", "--env", "--memfree", "--load", "--max-args", "--max-replace-args", "--halt", "--retries", "--max-procs", "--delimiter", "--shebang-wrap", "--tmpdir"]);
const PARALLEL_SEPARATORS = new Set([":::", "::::", ":::+", "::::+"]);

/** fd options with a value; `-x/--exec` and `-X/--exec-batch` take the rest of the line. */
const FD_VALUES = new Set(["-e", "--extension", "-t", "--type", "-d", "--max-depth", "--min-depth", "--exact-depth", "-E", "--exclude", "-S", "--size", "--changed-within", "--changed-before", "-c", "--color", "-j", "--threads", "--base-directory", "--search-path", "--ignore-file", "--max-results", "-o", "--owner", "--format", "--path-separator"]);
const FD_EXEC = new Set(["-x", "--exec", "-X", "--exec-batch"]);

/** Programs that may send files or their input to another machine (secrets.ts says which arguments). */
const SENDERS: ReadonlySet<string> = new Set([...STDIN_SENDERS, ...FILE_SENDERS, "curl", "curlie", "wget", "wget2"]);

/** The programs `otherCommands` handles by name (the switch below, the Windows words, the listeners). */
const RUNNERS: ReadonlySet<string> = new Set(["parallel", "fd", "fdfind", "gdb", "lldb", "valgrind", "at", "batch", "docker", "podman", "nerdctl", "cmd", "cmd.exe", "less", "more", "most", "vim", "vi", "nvim", "view", "ex", "ed", "red", "make", "gmake", "man", "rmdir", "nc", "ncat", "netcat", "socat", "del", "erase", "rd", "format", "taskkill"]);

/** Network programs that can run a program on what they receive. */
const LISTENERS: ReadonlySet<string> = new Set(["nc", "ncat", "netcat", "socat"]);

/** cmd.exe builtins typed at a bash prompt. */
const CMD_WORDS = new Set(["del", "erase", "rd", "format", "taskkill", "DEL", "ERASE", "RD", "FORMAT", "TASKKILL", "Del", "Rd", "Format"]);
/** PowerShell cmdlets: Verb-Noun. */
const CMDLET = /^[A-Z][a-z]+-[A-Z][A-Za-z]+$/;

function quote(value: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

export abstract class RunnerAnalysis extends ProgramAnalysis {
  /** Commands `program` runs besides itself (its own rules are evaluated by the caller). */
  protected otherCommands(program: string, args: Arg[], ctx: Ctx, site: Site): void {
    // Cheap test first: most programs run nothing else (a PowerShell cmdlet starts with a capital).
    if (!RUNNERS.has(program) && !SENDERS.has(program) && program.charCodeAt(0) > 90) return;
    if (SENDERS.has(program)) this.sendsSecrets(program, args, ctx, site);
    if (LISTENERS.has(program)) this.remoteShell(program, args, ctx, site);
    switch (program) {
      case "parallel":
        return this.parallel(args, ctx, site);
      case "fd":
      case "fdfind":
        return this.fdExec(args, ctx, site);
      case "gdb":
      case "lldb":
      case "valgrind": {
        const at = args.findIndex((a, i) => i > 0 && a.static && (a.value === "--args" || (program !== "gdb" && a.value === "--")));
        if (at > 0 && at + 1 < args.length) this.evalArgs(args.slice(at + 1), this.child(ctx, `${program} ${args[at]!.value}`), { ...site, stdin: null });
        return;
      }
      case "at":
      case "batch":
        if (!args.some((a) => a.static && /^-[a-zA-Z]*f/.test(a.value)) && site.stdin) this.consumeStream(site.stdin(), "shell", this.child(ctx, program), collapse(site.flow));
        return;
      case "docker":
      case "podman":
      case "nerdctl":
        return this.containerWithHostFiles(program, args, ctx, site);
      case "less":
      case "more":
      case "most":
      case "vim":
      case "vi":
      case "nvim":
      case "view":
      case "ex":
        // `less +'!cmd'`, `vim +'!cmd'`: a start-up command that escapes to the shell.
        for (const a of args.slice(1)) {
          const m = a.static ? /^\+:?\s*!([\s\S]+)$/.exec(a.value) : null;
          if (m) this.walkSource(m[1]!, this.child(ctx, `${program} +!`));
        }
        if (program === "ex") this.edScript(program, ctx, site);
        return;
      case "ed":
      case "red":
        return this.edScript(program, ctx, site);
      case "make":
      case "gmake":
        return this.makefileFromInput(args, ctx, site);
      case "man": {
        // `man -P CMD`, `man --pager=CMD`: the pager is a command line.
        const parsed = parseArgs(program, args.slice(1), { style: "gnu", values: "PMLSmpet", longValues: ["pager", "manpath", "locale", "sections"], canonical: { "--pager": "-P" } });
        for (const pager of parsed.options.get("-P") ?? []) this.runScriptArg(pager, ctx, "man -P", site.text);
        return;
      }
      case "cmd":
      case "cmd.exe": {
        const at = args.findIndex((a) => a.static && /^\/[ck]$/i.test(a.value));
        if (at > 0) this.payload(args.slice(at + 1).map((a) => a.value).join(" "), "cmd", this.child(ctx, "cmd /c"), collapse(site.text));
        return;
      }
      default:
        if (CMD_WORDS.has(program) || (program === "rmdir" && args.some((a) => /^\/s$/i.test(a.value)))) {
          this.payload(args.map((a) => a.value).join(" "), "cmd", this.child(ctx, "cmd"), collapse(site.text));
        } else if (program.charCodeAt(0) <= 90 && CMDLET.test(program)) {
          // A cmdlet in a pipeline (`Get-ChildItem … | Remove-Item`) is read with the whole pipeline.
          const text = site.flow !== site.text ? site.flow : args.map((a) => quote(a.value)).join(" ");
          this.payload(text, "powershell", this.child(ctx, "powershell"), collapse(site.text));
        }
    }
  }

  /**
   * `make -f /dev/stdin <<< …`, `make -f -`, or `-f FILE` written earlier in the command: the recipes
   * (lines that start with a tab) are shell commands. The project's own Makefile is not read (see Known limits).
   */
  private makefileFromInput(args: Arg[], ctx: Ctx, site: Site): void {
    const parsed = parseArgs("make", args.slice(1), { style: "gnu", values: "fCIjlo W", longValues: ["file", "makefile", "directory", "include-dir", "jobs", "load-average", "old-file", "what-if", "eval"], canonical: { "--file": "-f", "--makefile": "-f", "--directory": "-C" } });
    for (const f of parsed.options.get("-f") ?? []) {
      const text = f.static && (f.value === "-" || f.value === "/dev/stdin") ? (site.stdin?.()?.text ?? null) : this.writtenContent(f, ctx);
      if (text === undefined) continue;
      if (text === null) {
        this.unanalysable("make reads a makefile that is only known when it runs", site.text, ctx);
        continue;
      }
      const recipes = text.split("\n").filter((l) => l.startsWith("\t")).map((l) => l.slice(1).replace(/^[@+-]+/, ""));
      if (recipes.length > 0) this.walkSource(recipes.join("\n"), this.child(ctx, "make recipe"));
    }
  }

  /** ed/ex read their script on stdin: `!cmd` lines run commands; a script nobody can see may run anything. */
  private edScript(program: string, ctx: Ctx, site: Site): void {
    const input = site.stdin?.();
    if (!input) return;
    if (input.text === null) {
      this.unanalysable(`${program} runs an editing script read from ${input.origin || "its input"}, which is only known when it runs (it may escape to the shell with !)`, site.text, ctx);
      return;
    }
    for (const line of input.text.split("\n")) {
      const m = /^\s*!([\s\S]+)$/.exec(line);
      if (m) this.walkSource(m[1]!, this.child(ctx, `${program} !`));
    }
  }

  /**
   * Bind and reverse shells: `nc -l 4444 -e /bin/sh`, `ncat --sh-exec …`, `socat TCP-LISTEN:4444 EXEC:/bin/bash`:
   * a program run on whatever the network sends.
   */
  private remoteShell(program: string, args: Arg[], ctx: Ctx, site: Site): void {
    const values = args.slice(1).map((a) => a.value);
    const execs = program === "socat" ? values.some((v) => /^(?:EXEC|SYSTEM):/i.test(v)) && values.some((v) => /^(?:TCP|UDP|SCTP|OPENSSL|SSL|TCP4|TCP6|UDP4|UDP6)[-:]/i.test(v)) : values.some((v) => /^(?:-[a-zA-Z]*[ec]|--exec|--sh-exec|--lua-exec)(?:=|$)/.test(v));
    if (execs) this.finding("network-to-interpreter", collapse(site.text), ctx, `${program} runs a program on what the network sends`);
  }

  /** A network program given a secret file, or reading a stream that carries secrets. */
  private sendsSecrets(program: string, args: Arg[], ctx: Ctx, site: Site): void {
    const sending = sentByCommand(parseArgs(program, args.slice(1)));
    const file = sending.files.find((a) => isSecretPath(a.value, a.static));
    if (file) this.finding("secret-to-network", collapse(site.flow), ctx, `sends ${file.value}`);
    else if (args.some((a) => a.secret)) this.finding("secret-to-network", collapse(site.flow), ctx, "sends secrets given as arguments");
    else if (sending.stdin && site.stdin?.()?.secret) this.finding("secret-to-network", collapse(site.flow), ctx, "sends what it reads, which holds secrets");
  }

  /** GNU parallel: `parallel [opts] CMD ::: ARGS`, `parallel < cmds`, `cmds | parallel`. */
  private parallel(args: Arg[], ctx: Ctx, site: Site): void {
    let i = 1;
    let fromFile = false;
    for (; i < args.length; i++) {
      const v = args[i]!.value;
      if (!v.startsWith("-") || PARALLEL_SEPARATORS.has(v)) break;
      if (v === "--dry-run" || v === "--dryrun") return;
      if (v === "-a" || v === "--arg-file" || v.startsWith("--arg-file=")) fromFile = true;
      if (PARALLEL_VALUES.has(v)) i++;
    }
    const sep = args.findIndex((a, k) => k >= i && PARALLEL_SEPARATORS.has(a.value));
    const template = args.slice(i, sep < 0 ? args.length : sep);
    const inputs: Arg[] = [];
    let unknownInput = fromFile;
    if (sep >= 0) {
      for (let k = sep; k < args.length; k++) {
        const a = args[k]!;
        if (PARALLEL_SEPARATORS.has(a.value)) {
          if (a.value.startsWith("::::")) unknownInput = true;
          continue;
        }
        if (a.static) inputs.push(a);
        else unknownInput = true;
      }
    } else unknownInput = true;
    const next = this.child(ctx, "parallel");
    if (template.length === 0) {
      // The inputs are the command lines.
      for (const line of inputs.slice(0, MAX_VARIANTS)) this.walkSource(line.value, next);
      if (sep < 0 && site.stdin) this.consumeStream(site.stdin(), "shell", next, collapse(site.flow));
      else if (unknownInput && sep >= 0) this.unanalysable("parallel runs command lines read from a file", site.text, ctx);
      return;
    }
    // parallel joins the command words with spaces and runs the line with a shell; {} is each input.
    const text = template.map((a) => a.value).join(" ");
    const values = [...inputs.slice(0, MAX_VARIANTS).map((a) => quote(a.value)), ...(unknownInput || inputs.length === 0 ? ['"$PARALLEL_INPUT"'] : [])];
    for (const v of values) this.walkSource(/\{[^}]*\}/.test(text) ? text.replace(/\{[^}]*\}/g, v) : `${text} ${v}`, next);
  }

  /** `fd PATTERN [PATH] -x CMD [ARGS]`: CMD for every file found (`{}` the file, else appended). */
  private fdExec(args: Arg[], ctx: Ctx, site: Site): void {
    const positional: Arg[] = [];
    for (let i = 1; i < args.length; i++) {
      const a = args[i]!;
      if (FD_EXEC.has(a.value)) {
        let end = args.findIndex((x, k) => k > i && x.static && x.value === ";");
        if (end < 0) end = args.length;
        const command = args.slice(i + 1, end);
        if (command.length === 0) return;
        const start = positional[1] ?? staticArg(".");
        this.evalArgs(foundArgs(command, start, command.some((x) => x.value.includes("{}"))), this.child(ctx, `fd ${a.value}`), { text: site.text, flow: site.text, stdin: null });
        i = end;
        continue;
      }
      if (a.value === "--search-path" && args[i + 1]) positional[1] = args[++i]!;
      else if (FD_VALUES.has(a.value)) i++;
      else if (!a.value.startsWith("-")) positional.push(a);
    }
  }

  /**
   * `docker run -v "$PWD":/src IMAGE CMD`: a command in a fresh container is left alone, but not
   * when host directories are mounted into it; then what it does to them is done to the host.
   */
  private containerWithHostFiles(program: string, args: Arg[], ctx: Ctx, site: Site): void {
    const parsed = parseArgs(program, args.slice(1));
    const sub = parsed.subcommands[0] === "container" ? parsed.subcommands[1] : parsed.subcommands[0];
    if (sub !== "run" && sub !== "create") return;
    const binds = (parsed.options.get("-v") ?? []).some((v) => /^(?:[/~.$]|[A-Za-z]:[\\/])/.test(v.value) && v.value.includes(":"));
    const mounts = (parsed.options.get("--mount") ?? []).some((v) => /(?:^|,)type=bind(?:,|$)/.test(v.value));
    if (!binds && !mounts) return;
    const command = parsed.operands.slice(1);
    if (command.length > 0) this.evalArgs(command, this.child(ctx, `${program} ${sub} (host files mounted)`), { text: site.text, flow: site.text, stdin: null });
  }
}
