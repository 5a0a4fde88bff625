import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import ts from "typescript";
import { beforeAll, describe, expect, it, vi } from "vitest";
import {
  initShellParser,
  isShellParserReady,
  parseShell,
  parseShellAsync,
  SHELL_PARSE_DEFAULTS,
  type Command,
  type ParseOptions,
  type ParseResult,
  type Pipeline,
  type Redirect,
  type Script,
  type SimpleCommand,
  type Word,
} from "../src/shell/index.js";
import { fastSyntaxTree } from "../src/shell/fast-parse.js";
import { fullSyntaxTree, setShellFastPath } from "../src/shell/parser.js";
import { sameTree, type SyntaxNode } from "../src/shell/syntax-tree.js";

// ---------------------------------------------------------------------------------------------
// A compact, exact rendering of the model, so that the tables below read like the shell they test.
//   word:      "value"  plus  ~ (not static)  {brace} {tilde} {glob}  [kind: script] (substitutions)
//   simple:    NAME=word … word … redirects (fd op target, heredoc body as <<"body">>)
//   compound:  type(name)<words>{body | body}redirects
//   pipeline:  commands joined by " | ", "!" in front when negated; script: pipelines joined by " ; "
// ---------------------------------------------------------------------------------------------

function w(word: Word): string {
  let s = JSON.stringify(word.value);
  if (!word.static) s += "~";
  if (word.braceExpansion) s += "{brace}";
  if (word.tilde) s += "{tilde}";
  if (word.glob) s += "{glob}";
  if (word.substitutions.length > 0) s += `[${word.substitutions.map((x) => `${x.kind}: ${fmt(x.script)}`).join(", ")}]`;
  return s;
}

function r(redirect: Redirect): string {
  let s = `${redirect.fd ?? ""}${redirect.operator}${w(redirect.target)}`;
  const h = redirect.heredoc;
  if (h) {
    s += `<<${JSON.stringify(h.body)}${h.bodyStatic ? "" : "~"}>>`;
    if (h.substitutions) s += `[${h.substitutions.map((x) => `${x.kind}: ${fmt(x.script)}`).join(", ")}]`;
  }
  return s;
}

function c(cmd: Command): string {
  if (cmd.kind === "simple") {
    return [...cmd.assignments.map((a) => `${a.name}=${w(a.value)}`), ...cmd.argv.map(w), ...cmd.redirects.map(r)].join(" ");
  }
  const name = cmd.name !== undefined ? `(${cmd.name})` : "";
  const redirects = cmd.redirects.length > 0 ? ` ${cmd.redirects.map(r).join(" ")}` : "";
  return `${cmd.type}${name}<${cmd.words.map(w).join(" ")}>{${cmd.bodies.map(fmt).join(" | ")}}${redirects}`;
}

function p(pipeline: Pipeline): string {
  return (pipeline.negated ? "! " : "") + pipeline.commands.map(c).join(" | ");
}

function fmt(script: Script): string {
  return script.pipelines.map(p).join(" ; ");
}

/**
 * Model assertions must not depend on how busy the machine is: they get a generous time budget
 * (the budget itself is tested on its own below).
 */
const parse = (source: string, options: ParseOptions = {}): ParseResult => parseShell(source, { timeBudgetMs: 10_000, ...options });

/** Parses and expects no problems. */
function ok(source: string): Script {
  const result = parse(source);
  expect(result.problems, source).toEqual([]);
  return result.script;
}

function first(source: string): SimpleCommand {
  const cmd = ok(source).pipelines[0]?.commands[0];
  expect(cmd?.kind).toBe("simple");
  return cmd as SimpleCommand;
}

/** Every simple command anywhere in the script: in compounds, substitutions and heredoc substitutions. */
function allSimple(script: Script): SimpleCommand[] {
  const out: SimpleCommand[] = [];
  const words = (list: Word[]): void => {
    for (const word of list) for (const s of word.substitutions) visit(s.script);
  };
  const redirects = (list: Redirect[]): void => {
    for (const redirect of list) {
      words([redirect.target]);
      for (const s of redirect.heredoc?.substitutions ?? []) visit(s.script);
    }
  };
  function visit(s: Script): void {
    for (const pipeline of s.pipelines) {
      for (const cmd of pipeline.commands) {
        if (cmd.kind === "simple") {
          out.push(cmd);
          words(cmd.argv);
          words(cmd.assignments.map((a) => a.value));
        } else {
          words(cmd.words);
          for (const body of cmd.bodies) visit(body);
        }
        redirects(cmd.redirects);
      }
    }
  }
  visit(script);
  return out;
}

const argvValues = (cmd: SimpleCommand): string[] => cmd.argv.map((x) => x.value);

// ---------------------------------------------------------------------------------------------

describe("parser lifecycle", () => {
  it("loads nothing at import time and refuses to parse before initShellParser()", async () => {
    vi.resetModules();
    const fresh = await import("../src/shell/parser.js");
    expect(fresh.isShellParserReady()).toBe(false);
    expect(() => fresh.parseShell("ls")).toThrow(/initShellParser/);
    // Concurrent callers share one load.
    const a = fresh.initShellParser();
    const b = fresh.initShellParser();
    expect(a).toBe(b);
    await Promise.all([a, b]);
    expect(fresh.isShellParserReady()).toBe(true);
    await fresh.initShellParser(); // idempotent
    expect(fresh.parseShell("ls -l", { timeBudgetMs: 10_000 }).problems).toEqual([]);
  });

  it("parseShellAsync parses fast-path text without the grammar and loads it on demand for the rest", async () => {
    const result = await parseShellAsync("echo hi", { timeBudgetMs: 10_000 });
    expect(fmt(result.script)).toBe('"echo" "hi"');
    // The fast path took it: the grammar is not loaded for it (see test/shell-lazy-grammar.test.ts).
    expect(isShellParserReady()).toBe(false);
    const full = await parseShellAsync("case $x in a) echo hi;; esac", { timeBudgetMs: 10_000 });
    expect(full.problems).toEqual([]);
    expect(isShellParserReady()).toBe(true);
  });
});

describe("with the parser loaded", () => {
  beforeAll(async () => {
    await initShellParser();
  });

  describe("words: quotes, escapes, ANSI-C strings, concatenation", () => {
    const cases: [string, string][] = [
      [`"r"m -r'f' /`, '"rm" "-rf" "/"'],
      [`r''m -rf /`, '"rm" "-rf" "/"'],
      [`\\rm -rf /`, '"rm" "-rf" "/"'],
      [`$'\\x72\\x6d' -rf /`, '"rm" "-rf" "/"'],
      [`$'\\162m' -rf /`, '"rm" "-rf" "/"'],
      [`/bin/rm -rf /`, '"/bin/rm" "-rf" "/"'],
      [`"/bin/"r'm' x`, '"/bin/rm" "x"'],
      [`\\r\\m`, '"rm"'],
      [`"r"m`, '"rm"'],
      [`echo a\\ b 'c d'"e f"g`, '"echo" "a b" "c de fg"'],
      [`echo "a\\"b\\\\c\\$d\\e\\\`"`, '"echo" "a\\"b\\\\c$d\\\\e`"'],
      [`echo 'single $HOME \\n'`, '"echo" "single $HOME \\\\n"'],
      [`echo $'a\\tb\\n\\e[0m\\u00e9\\U0001F600\\cA\\101\\x4g'`, '"echo" "a\\tb\\n\\u001b[0mé😀\\u0001A\\u0004g"'],
      [`echo $'it\\'s' $'\\q' $'a\\x00b'c`, `"echo" "it's" "\\\\q" "ac"`],
      [`echo $"hello"`, '"echo" "hello"'],
      [`echo $"hi $USER" a$"b"`, '"echo" "hi $USER"~ "ab"'],
      [`echo "$HOME"/x \${HOME}y $1 $@ "$*"`, '"echo" "$HOME/x"~ "${HOME}y"~ "$1"~ "$@"~ "$*"~'],
      [`$CMD -rf /`, '"$CMD"~ "-rf" "/"'],
      [`"$CMD" x`, '"$CMD"~ "x"'],
      [`\${CMD:-rm} -rf /`, '"${CMD:-rm}"~ "-rf" "/"'],
      [`echo $((1 + 2))`, '"echo" "$((1 + 2))"~'],
      [`echo {a,b} x{1..3} "{a,b}" \\{a,b\\}`, '"echo" "{a,b}"{brace} "x{1..3}"{brace} "{a,b}" "{a,b}"'],
      [`ls ~ ~/src "~" a~`, '"ls" "~"{tilde} "~/src"{tilde} "~" "a~"'],
      [`rm -rf /* "/*" a?b [ab]c`, '"rm" "-rf" "/*"{glob} "/*" "a?b"{glob} "[ab]c"{glob}'],
      [`echo "héllo 🎉" wörld Ωmega`, '"echo" "héllo 🎉" "wörld" "Ωmega"'],
      [`r\\\nm -r\\\nf /etc/pass\\\nwd`, '"rm" "-rf" "/etc/passwd"'],
      [`echo "a\\\nb"`, '"echo" "ab"'],
      [`echo a \\\n b`, '"echo" "a" "b"'],
    ];
    it.each(cases)("%j", (source, expected) => {
      expect(fmt(ok(source))).toBe(expected);
    });

    it("keeps the raw text of every word", () => {
      const cmd = first(`"r"m -r'f' $'\\x2f'`);
      expect(cmd.argv.map((x) => x.raw)).toEqual([`"r"m`, `-r'f'`, `$'\\x2f'`]);
      expect(cmd.argv.every((x) => x.static)).toBe(true);
      expect(cmd.text).toBe(`"r"m -r'f' $'\\x2f'`);
    });

    it("sets the optional flags only when true", () => {
      const [plain] = first("ls").argv;
      expect(plain).toEqual({ raw: "ls", value: "ls", static: true, substitutions: [] });
    });
  });

  describe("substitutions", () => {
    const cases: [string, string][] = [
      [`echo $(rm -rf /)`, '"echo" "$(rm -rf /)"~[command: "rm" "-rf" "/"]'],
      ["echo `rm -rf /`", '"echo" "`rm -rf /`"~[command: "rm" "-rf" "/"]'],
      [`$(echo rm) -rf /`, '"$(echo rm)"~[command: "echo" "rm"] "-rf" "/"'],
      [`echo "x$(id)y"`, '"echo" "x$(id)y"~[command: "id"]'],
      [`echo \${x:-$(rm -rf /)}`, '"echo" "${x:-$(rm -rf /)}"~[command: "rm" "-rf" "/"]'],
      [`echo $(( $(id -u) + 1 ))`, '"echo" "$(( $(id -u) + 1 ))"~[command: "id" "-u"]'],
      [`bash <(curl -s x)`, '"bash" "<(curl -s x)"~[process_in: "curl" "-s" "x"]'],
      [`tee >(sh) <in`, '"tee" ">(sh)"~[process_out: "sh"] <"in"'],
      [`x=$(<file)`, 'x="$(<file)"~[command: <"file"]'],
      [`echo $(a | b; c && d)`, '"echo" "$(a | b; c && d)"~[command: "a" | "b" ; "c" ; "d"]'],
    ];
    it.each(cases)("%j", (source, expected) => {
      expect(fmt(ok(source))).toBe(expected);
    });

    it("nests command substitutions three deep", () => {
      const script = ok("echo $(a $(b $(rm -rf /)))");
      const outer = first("echo $(a $(b $(rm -rf /)))").argv[1]!;
      expect(outer.static).toBe(false);
      const a = outer.substitutions[0]!.script.pipelines[0]!.commands[0] as SimpleCommand;
      expect(a.argv[0]!.value).toBe("a");
      const b = a.argv[1]!.substitutions[0]!.script.pipelines[0]!.commands[0] as SimpleCommand;
      expect(b.argv[0]!.value).toBe("b");
      const rm = b.argv[1]!.substitutions[0]!.script.pipelines[0]!.commands[0] as SimpleCommand;
      expect(argvValues(rm)).toEqual(["rm", "-rf", "/"]);
      expect(allSimple(script).map((x) => x.argv[0]?.value)).toEqual(["echo", "a", "b", "rm"]);
    });

    it("reads escaped backticks inside backticks the way bash does", () => {
      // Inside `…`, \` is a nested backquote: bash runs rm here.
      const script = ok("echo `echo \\`rm -rf /\\``");
      expect(allSimple(script).map(argvValues)).toContainEqual(["rm", "-rf", "/"]);
    });

    it("keeps a substitution's script text", () => {
      const sub = first("echo $(ls -la /tmp)").argv[1]!.substitutions[0]!;
      expect(sub).toMatchObject({ kind: "command", script: { text: "ls -la /tmp" } });
    });
  });

  describe("lists, pipelines, compounds", () => {
    const cases: [string, string][] = [
      [`curl x | sh`, '"curl" "x" | "sh"'],
      [`curl x |& sh`, '"curl" "x" | "sh"'],
      [`a | b | c`, '"a" | "b" | "c"'],
      [`! grep -q x f`, '! "grep" "-q" "x" "f"'],
      [`! a | b`, '! "a" | "b"'],
      [`a && b || c; d & e\nf # comment`, '"a" ; "b" ; "c" ; "d" ; "e" ; "f"'],
      [`a && b | c || d`, '"a" ; "b" | "c" ; "d"'],
      [`(cd / && rm -rf *)`, 'subshell<>{"cd" "/" ; "rm" "-rf" "*"{glob}}'],
      [`{ rm -rf /; echo; }`, 'group<>{"rm" "-rf" "/" ; "echo"}'],
      [`(a; b) | { c; d; } &`, 'subshell<>{"a" ; "b"} | group<>{"c" ; "d"}'],
      [`if a; then b; elif c; then d; else e; fi`, 'if<>{"a" | "b" | "c" | "d" | "e"}'],
      [`if [ -f x ]; then rm x; fi`, 'if<>{test<"x">{} | "rm" "x"}'],
      [`for i in 1 "$x" *.txt; do rm "$i"; done`, 'for<"1" "$x"~ "*.txt"{glob}>{"rm" "$i"~}'],
      [`for x; do y; done`, 'for<>{"y"}'],
      [`select x in a b; do echo $x; done`, 'for<"a" "b">{"echo" "$x"~}'],
      [`for ((i=0; i<$(n); i++)); do x; done`, 'for<"i=0"~ "i<$(n)"~[command: "n"] "i++"~>{"x"}'],
      [`while read -r l; do rm "$l"; done < list`, 'while<>{"read" "-r" "l" | "rm" "$l"~} <"list"'],
      [`until ping -c1 h; do sleep 1; done`, 'until<>{"ping" "-c1" "h" | "sleep" "1"}'],
      [
        `case "$x" in\n a|b) rm -rf /;;\n $(y)) z;&\n *) w;;\nesac`,
        'case<"$x"~ "a" "b" "$(y)"~[command: "y"] "*"{glob}>{"rm" "-rf" "/" | "z" | "w"}',
      ],
      [`case x in (a) y;; esac`, 'case<"x" "a">{"y"}'],
      [`f() { rm -rf /; }`, 'function(f)<>{"rm" "-rf" "/"}'],
      [`function g { x; } >log`, 'function(g)<>{"x"} >"log"'],
      [`f() ( x )`, 'function(f)<>{subshell<>{"x"}}'],
      [`[[ -f $(x) && a == b* ]]`, 'test<"$(x)"~[command: "x"] "a" "b*"{glob}>{}'],
      [`((x++)); let x=1`, 'arithmetic<"x++"~>{} ; "let" "x=1"'],
      [`time ls -l`, '"time" "ls" "-l"'],
      [`echo hi # ; rm -rf /`, '"echo" "hi"'],
      [`echo a#b`, '"echo" "a#b"'],
    ];
    it.each(cases)("%j", (source, expected) => {
      expect(fmt(ok(source))).toBe(expected);
    });

    it("keeps each pipeline's source text", () => {
      const script = ok("a -x && b | c; d");
      expect(script.pipelines.map((x) => x.text)).toEqual(["a -x", "b | c", "d"]);
      expect(script.text).toBe("a -x && b | c; d");
    });
  });

  describe("assignments and declarations", () => {
    const cases: [string, string][] = [
      [`A=1 B=2 cmd arg`, 'A="1" B="2" "cmd" "arg"'],
      [`A=1`, 'A="1"'],
      [`A=1 B="x y"`, 'A="1" B="x y"'],
      [`PATH=/tmp:$PATH ls`, 'PATH="/tmp:$PATH"~ "ls"'],
      [`A=$(rm -rf /)`, 'A="$(rm -rf /)"~[command: "rm" "-rf" "/"]'],
      [`a[$(id)]=1`, 'a[$(id)]="1"[command: "id"]'],
      [`x=(a b) cmd`, 'x="(a b)" "cmd"'],
      [`export A=1 B`, '"export" "A=1" "B"'],
      [`local -r x="$(id)"`, '"local" "-r" "x=$(id)"~[command: "id"]'],
      [`declare -a y=(1 2)`, '"declare" "-a" "y=(1 2)"'],
      [`unset -f x y`, '"unset" "-f" "x" "y"'],
      [`readonly R=1`, '"readonly" "R=1"'],
    ];
    it.each(cases)("%j", (source, expected) => {
      expect(fmt(ok(source))).toBe(expected);
    });
  });

  describe("redirects", () => {
    const cases: [string, string][] = [
      [`cmd 2>&1`, '"cmd" 2>&"1"'],
      [`cmd &> out.log`, '"cmd" &>"out.log"'],
      [`cmd &>> out.log`, '"cmd" &>>"out.log"'],
      [`echo x > /etc/passwd`, '"echo" "x" >"/etc/passwd"'],
      [`echo x >> ~/.bashrc`, '"echo" "x" >>"~/.bashrc"{tilde}'],
      [`echo x >| f`, '"echo" "x" >|"f"'],
      [`cat < in 3<&0 >&-`, '"cat" <"in" 3<&"0" >&"-"'],
      [`cat 1>&2 2<&-`, '"cat" 1>&"2" 2<&"-"'],
      [`> /etc/hosts`, '>"/etc/hosts"'],
      [`>x rm -rf /`, '"rm" "-rf" "/" >"x"'],
      // tree-sitter-bash hands words after a redirect to the redirect; bash reads them as arguments.
      [`rm >/dev/null -rf /`, '"rm" "-rf" "/" >"/dev/null"'],
      [`rm 2>&1 -rf /`, '"rm" "-rf" "/" 2>&"1"'],
      [`echo hi > "$out"`, '"echo" "hi" >"$out"~'],
      [`cat > /etc/pass\\\nwd`, '"cat" >"/etc/passwd"'],
    ];
    it.each(cases)("%j", (source, expected) => {
      expect(fmt(ok(source))).toBe(expected);
    });

    it("records file descriptors as numbers", () => {
      const cmd = first("cmd 2>&1 >out 3<in");
      expect(cmd.redirects.map((x) => [x.fd, x.operator, x.target.value])).toEqual([
        [2, ">&", "1"],
        [undefined, ">", "out"],
        [3, "<", "in"],
      ]);
      expect("fd" in cmd.redirects[1]!).toBe(false);
    });
  });

  describe("heredocs and here-strings", () => {
    const cases: [string, string][] = [
      [`bash <<EOF\nrm -rf /\nEOF`, '"bash" <<"EOF"<<"rm -rf /\\n">>'],
      [`bash <<'EOF'\nrm -rf $HOME\nEOF`, `"bash" <<"EOF"<<"rm -rf $HOME\\n">>`],
      [`bash <<"EOF"\n$(x)\nEOF`, '"bash" <<"EOF"<<"$(x)\\n">>'],
      [`bash <<EOF\nrm -rf $HOME\nEOF`, '"bash" <<"EOF"<<"rm -rf $HOME\\n"~>>'],
      [`bash <<-EOF\n\trm -rf /\n\t\tx\n\tEOF`, '"bash" <<-"EOF"<<"rm -rf /\\nx\\n">>'],
      [`bash <<-'EOF'\n\trm -rf /\n\tEOF`, '"bash" <<-"EOF"<<"rm -rf /\\n">>'],
      [`cat <<EOF\n\\$x \\\`id\\\` a\\\\b \\q\nEOF`, '"cat" <<"EOF"<<"$x `id` a\\\\b \\\\q\\n">>'],
      [`cat <<EOF\nEOF`, '"cat" <<"EOF"<<"">>'],
      [`cat <<EOF | sh\nrm -rf /\nEOF`, '"cat" <<"EOF"<<"rm -rf /\\n">> | "sh"'],
      [`x | cat <<EOF | sh | tee\nbody\nEOF`, '"x" | "cat" <<"EOF"<<"body\\n">> | "sh" | "tee"'],
      [`cat <<'EOF' > f && sh f\nrm -rf /\nEOF\necho done`, '"cat" <<"EOF"<<"rm -rf /\\n">> >"f" ; "sh" "f" ; "echo" "done"'],
      [`bash 2<<EOF\nx\nEOF`, '"bash" 2<<"EOF"<<"x\\n">>'],
      [`sh <<< "rm -rf /"`, '"sh" <<<"rm -rf /"'],
      [`bash <<< $'rm\\x20-rf /'`, '"bash" <<<"rm -rf /"'],
      [`sh <<< "a" b`, '"sh" "b" <<<"a"'],
      [`cat <<< $(rm -rf /)`, '"cat" <<<"$(rm -rf /)"~[command: "rm" "-rf" "/"]'],
      [`cat < <(curl x)`, '"cat" <"<(curl x)"~[process_in: "curl" "x"]'],
      [`x=$(cat <<EOF\nhello $(id)\nEOF\n)`, 'x="$(cat <<EOF\\nhello $(id)\\nEOF\\n)"~[command: "cat" <<"EOF"<<"hello $(id)\\n"~>>[command: "id"]]'],
      [`cat <<"E O F" # note\nbody\nE O F`, '"cat" <<"E O F"<<"body\\n">>'],
      // tree-sitter-bash reads a first body line that starts with a backslash as words of the
      // command line; the body is what bash reads.
      [`cat <<EOF | sh\n\\$x y\nEOF`, '"cat" <<"EOF"<<"$x y\\n">> | "sh"'],
      [`cat <<EOF && sh\n\\rm -rf /\nEOF\necho after`, '"cat" <<"EOF"<<"\\\\rm -rf /\\n">> ; "sh" ; "echo" "after"'],
      // tree-sitter-bash fails on `;`, `&` or an operator right after a heredoc on its line; the
      // parser retries with that line rewritten (bodies untouched).
      [`cat <<EOF > f; chmod +x f\nbody; x\nEOF`, '"cat" <<"EOF"<<"body; x\\n">> >"f" ; "chmod" "+x" "f"'],
      [`cat <<EOF;\nx\nEOF\necho after`, '"cat" <<"EOF"<<"x\\n">> ; "echo" "after"'],
      [`cat <<EOF &\nx\nEOF`, '"cat" <<"EOF"<<"x\\n">>'],
      [`cat <<EOF&&a||b\nx\nEOF`, '"cat" <<"EOF"<<"x\\n">> ; "a" ; "b"'],
      [`cat <<EOF | sh; echo hi\nrm -rf /\nEOF`, '"cat" <<"EOF"<<"rm -rf /\\n">> | "sh" ; "echo" "hi"'],
      [`cat <<-'EOF'; rm -rf /\n\t$(x); y\n\tEOF\nz`, '"cat" <<-"EOF"<<"$(x); y\\n">> ; "rm" "-rf" "/" ; "z"'],
    ];
    it.each(cases)("%j", (source, expected) => {
      expect(fmt(ok(source))).toBe(expected);
    });

    it("keeps the original text when a heredoc line was rewritten for the retry", () => {
      const source = "cat <<EOF > f; chmod +x f\nbody\nEOF";
      expect(ok(source).text).toBe(source);
    });

    it("parses substitutions in unquoted heredoc bodies, where bash runs them", () => {
      for (const source of [
        "cat <<EOF\n$(rm -rf /)\nEOF",
        // tree-sitter-bash misses these when the first line starts with blanks.
        "cat <<EOF\n $(rm -rf /)\nEOF",
        "cat <<EOF\n\t`rm -rf /`\nEOF",
        "cat <<-EOF\n\t${x:-$(rm -rf /)}\n\tEOF",
        "cat <<EOF\nn=$(( $(rm -rf /) + 1 ))\nEOF",
      ]) {
        const [redirect] = first(source).redirects;
        expect(redirect!.heredoc!.bodyStatic, source).toBe(false);
        expect(redirect!.heredoc!.substitutions?.map((s) => fmt(s.script)), source).toEqual(['"rm" "-rf" "/"']);
      }
    });

    it("keeps quoted heredoc bodies literal", () => {
      const [redirect] = first("cat <<'EOF'\n$(rm -rf /) `id`\nEOF").redirects;
      expect(redirect!.heredoc).toEqual({ body: "$(rm -rf /) `id`\n", bodyStatic: true });
      expect(redirect!.target).toMatchObject({ raw: "'EOF'", value: "EOF" });
    });
  });

  describe("problems: what makes a command unanalysable", () => {
    it("returns an empty script and no problems for empty or blank input", () => {
      for (const source of ["", "   ", "\n\n", "# just a comment"]) {
        const result = parse(source);
        expect(result.problems, JSON.stringify(source)).toEqual([]);
        expect(result.script.pipelines).toEqual([]);
      }
    });

    const syntaxErrors: [string, RegExp][] = [
      [`echo "unclosed`, /syntax error at 1:6 near "\\"unclosed"/],
      [`rm -rf / (`, /syntax error at 1:10 near "\("/],
      [`echo $(rm -rf /`, /syntax error at 1:16: missing "\)"/],
      [`if true; then rm -rf /`, /syntax error/],
      [`a | | b`, /syntax error at 1:5 near "\|"/],
      [`echo \${x`, /syntax error/],
      [`cat <<A <<B\na\nA\nb\nB`, /syntax error/],
    ];
    it.each(syntaxErrors)("syntax error in %j", (source, pattern) => {
      const result = parse(source);
      expect(result.problems.length).toBeGreaterThan(0);
      expect(result.problems.join("\n")).toMatch(pattern);
    });

    it("still models what it can read around a syntax error", () => {
      for (const source of ["rm -rf / (", "echo $(rm -rf /", "if true; then rm -rf /"]) {
        const result = parse(source);
        expect(result.problems.length, source).toBeGreaterThan(0);
        expect(allSimple(result.script).map(argvValues), source).toContainEqual(["rm", "-rf", "/"]);
      }
    });

    it("stops at the depth limit with a problem, without overflowing the stack", () => {
      const nested = (n: number): string => `echo ${"$(echo ".repeat(n)}x${")".repeat(n)}`;
      expect(parse(nested(SHELL_PARSE_DEFAULTS.maxDepth)).problems).toEqual([]);
      for (const n of [SHELL_PARSE_DEFAULTS.maxDepth + 1, 40]) {
        const result = parse(nested(n));
        expect(result.problems).toHaveLength(1);
        expect(result.problems[0]).toMatch(/^nesting deeper than 16 levels/);
        expect(result.script.pipelines).toHaveLength(1);
      }
      expect(parse(nested(3), { maxDepth: 2 }).problems[0]).toMatch(/nesting deeper than 2 levels/);
      // Compounds count too.
      expect(parse(`${"{ ".repeat(20)}x; ${"}; ".repeat(20)}`).problems[0]).toMatch(/nesting deeper/);
      expect(parse(`${"if a; then ".repeat(20)}x; ${"fi; ".repeat(20)}`).problems[0]).toMatch(/nesting deeper/);
    });

    it("survives hostile nesting thousands of levels deep", () => {
      const inputs = [
        `echo ${"$(".repeat(3000)}x${")".repeat(3000)}`,
        `${"(".repeat(3000)}x${")".repeat(3000)}`,
        `${"a && ".repeat(5000)}b`,
        `echo ${"${a:-".repeat(3000)}x${"}".repeat(3000)}`,
        `echo ${"`echo \\".repeat(12)}\`x`,
        "((((( $( ${ \" ' ` )) ;; && || | ".repeat(500),
      ];
      for (const source of inputs) {
        // A generous budget so that the model builder, not the time limit, meets the nesting.
        expect(() => parse(source, { timeBudgetMs: 60_000 })).not.toThrow();
      }
      const chain = parse(`${"a && ".repeat(5000)}b`, { timeBudgetMs: 60_000 });
      expect(chain.problems).toEqual([]);
      expect(chain.script.pipelines).toHaveLength(5001);
    });

    it("refuses input longer than the length limit", () => {
      expect(SHELL_PARSE_DEFAULTS).toEqual({ timeBudgetMs: 50, maxDepth: 16, maxLength: 64 * 1024 });
      const limit = SHELL_PARSE_DEFAULTS.maxLength;
      const result = parse(`echo ${"a".repeat(limit + 1 - 5)}`);
      expect(result.problems).toEqual([`command too long: ${limit + 1} characters (limit ${limit}); not analysed`]);
      expect(result.script.pipelines).toEqual([]);
      expect(parse("echo hello", { maxLength: 5 }).problems[0]).toMatch(/command too long: 10 characters \(limit 5\)/);
    });

    it("gives up with a problem when the time budget runs out, and the next parse starts clean", () => {
      const big = "for f in a b c; do if [ -n \"$f\" ]; then echo \"$f\" | tr a-z A-Z >> out.txt; fi; done\n".repeat(700);
      expect(big.length).toBeLessThan(SHELL_PARSE_DEFAULTS.maxLength);
      const result = parse(big, { timeBudgetMs: 0.01 });
      expect(result.problems).toHaveLength(1);
      expect(result.problems[0]).toMatch(/time budget/);
      expect(result.script.pipelines).toEqual([]);
      // A cancelled parse must not leak into the next one.
      expect(fmt(ok("rm -rf /tmp/x"))).toBe('"rm" "-rf" "/tmp/x"');
      const again = parse(big, { timeBudgetMs: 60_000 });
      expect(again.problems).toEqual([]);
      expect(again.script.pipelines).toHaveLength(700);
    });

    it("reports an unterminated substitution inside a heredoc body", () => {
      // tree-sitter-bash sees no substitution here (the line starts with a blank); bash does.
      const result = parse("cat <<EOF\n $(rm -rf /\nEOF");
      expect(result.problems).toEqual([expect.stringMatching(/^unterminated \$\( in a heredoc body/)]);
      expect(parse("cat <<EOF\n$(rm -rf /\nEOF").problems.length).toBeGreaterThan(0);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// The fast path (src/shell/fast-parse.ts) must give tree-sitter's own tree, hence the same model.
// ---------------------------------------------------------------------------------------------

/** Every string literal (and template text) in a test file: the commands the tests use. */
function testFileStrings(file: string): string[] {
  const path = fileURLToPath(new URL(file, import.meta.url));
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) out.push(node.text);
    else if (ts.isTemplateExpression(node)) out.push(node.head.text + node.templateSpans.map((span) => `x${span.literal.text}`).join(""));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

function corpusCommands(): string[] {
  const path = fileURLToPath(new URL("./fixtures/command-corpus.jsonl", import.meta.url));
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => (JSON.parse(line) as { command: string }).command);
}

/** Deterministic generated commands, mostly in the fast path's subset, with its edge cases. */
function generatedCommands(count: number, seed: number): string[] {
  let state = seed;
  const rnd = (n: number): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const pick = <T>(list: readonly T[]): T => list[rnd(list.length)]!;
  const words = ["a", "-n", "--x=y", "50", "-1", "0", "*.ts", "~/x", "a:b", "x.y", "-", "--", "a#b", "1#2", "0x1F", "done", "in", "=x", "a@b", "%s", "é", "x!", "{a,b}"];
  const stringParts = [" ", "a", "b c", "$a", "${b}", "$1", "$@", "$?", "$(x)", "$(a | b)", "%", "((", "é", "$aé", "'", "#", "\\t", "$", "\t"];
  const piece = (): string => {
    const r = rnd(9);
    if (r < 4) return pick(words);
    if (r < 6) {
      let text = '"';
      for (let i = rnd(4); i > 0; i--) text += pick(stringParts);
      return `${text}"`;
    }
    if (r < 7) return `'${pick(["x", "a b", "$a", "\n"])}'`;
    return pick(["$a", "${b}", "$1", "$@", "$$", "$(x)", "$(a && b)", "$( a )"]);
  };
  const arg = (): string => (rnd(4) === 0 ? piece() + piece() + (rnd(3) === 0 ? piece() : "") : piece());
  const redirect = (): string => pick([" >f", " 2>&1", " > f g", " 2>/dev/null", " >>log", " <in", " &>f", " >&2", " 0>f", " >&-", " <<<x"]);
  const command = (): string => {
    let text = rnd(6) === 0 ? `${pick(["A", "x", "_"])}=${rnd(3) === 0 ? "" : arg()} ` : "";
    text += pick(["a", "ls", "git", "echo", "./x.sh", "g++", ":", "a+=b", "time", "done"]);
    for (let i = rnd(5); i > 0; i--) text += pick([" ", "  ", "\t"]) + arg();
    return rnd(4) === 0 ? text + redirect() : text;
  };
  const element = (depth: number): string => {
    const r = rnd(depth > 1 ? 1 : 8);
    if (r === 1) return `for i in ${arg()} ${arg()}${pick(["; ", "\n"])}do ${statement(depth + 1)}${pick(["; ", "\n"])}done${rnd(3) === 0 ? redirect() : ""}`;
    if (r === 2) return `${pick(["while", "until"])} ${statement(depth + 1)}; do ${statement(depth + 1)}; done`;
    if (r === 3) {
      const delimiter = pick(["EOF", "E_1"]);
      return `cat <<${pick(["'", '"', "-'"])}${delimiter}${pick(["'", '"'])}${pick(["", " >f", " 2>&1", " x"])}\n${pick(["x", "# a", "$x", " b", "a\\b"])}\n${pick([delimiter, `  ${delimiter}`, `${delimiter}X`, `${delimiter} && y`, `${delimiter} | z`])}`;
    }
    if (r === 4) return `echo "$(${statement(depth + 1)})"`;
    return command();
  };
  const statement = (depth = 0): string => {
    let text = element(depth);
    for (let i = rnd(4); i > 0; i--) text += rnd(5) === 0 ? redirect() : pick([" && ", " || ", " | ", "|", " |& ", " &&\n", " |\n"]) + element(depth);
    return text;
  };
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let text = statement();
    for (let k = rnd(3); k > 0; k--) text += pick(["; ", "\n", " & ", "\n\n"]) + statement();
    out.push(text + pick(["", "", ";", "\n", " &", ";;"]));
  }
  return out;
}

function describeTree(source: string, root: SyntaxNode | null): string {
  if (!root) return "null";
  const node = (n: SyntaxNode): string =>
    n.children.length === 0 ? `${n.type}[${n.startIndex},${n.endIndex}]` : `(${n.type}[${n.startIndex},${n.endIndex}] ${n.children.map(node).join(" ")})`;
  return `${JSON.stringify(source)}: ${node(root)}`;
}

describe("the fast path", () => {
  let inputs: string[] = [];

  beforeAll(async () => {
    await initShellParser();
    const all = [
      ...corpusCommands(),
      ...testFileStrings("./shell-parse.test.ts"),
      ...testFileStrings("./detection.test.ts"),
      ...generatedCommands(3000, 7),
    ];
    inputs = [...new Set(all)].filter((s) => s.length > 0 && s.length <= SHELL_PARSE_DEFAULTS.maxLength);
  });

  it("gives tree-sitter's own syntax tree for every input it takes, and takes many", () => {
    let taken = 0;
    const wrong: string[] = [];
    for (const source of inputs) {
      const fast = fastSyntaxTree(source);
      if (!fast) continue;
      taken++;
      const full = fullSyntaxTree(source);
      if (!full || !sameTree(fast, full)) wrong.push(`${describeTree(source, fast)}\n  tree-sitter: ${describeTree(source, full)}`);
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(wrong).toHaveLength(0);
    expect(taken).toBeGreaterThan(inputs.length / 5);
  });

  it("gives the same model and problems as the full parse, for every input", () => {
    const options = { timeBudgetMs: 60_000 };
    const different: string[] = [];
    try {
      for (const source of inputs) {
        setShellFastPath(false);
        const full = JSON.stringify(parseShell(source, options));
        setShellFastPath(true);
        const fast = JSON.stringify(parseShell(source, options));
        if (fast !== full) different.push(source);
      }
    } finally {
      setShellFastPath(true);
    }
    expect(different.slice(0, 5)).toEqual([]);
  });

  it("takes common commands and leaves the constructs tree-sitter-bash reads its own way to it", () => {
    const taken = [
      "cd packages/web && npm run build -- --mode production 2>&1 | tail -n 40 > bb.log",
      "git status --short",
      'for f in $(git ls-files "*.ts" | head -n 50); do wc -l "$f"; done',
      "cat <<'EOF' > notes.md\n# notes\nEOF && echo done",
      'A=1 B="$(date)" make -j4 2>/dev/null',
      "a | b | c; d",
    ];
    for (const source of taken) expect(fastSyntaxTree(source), source).not.toBeNull();
    const left = [
      "a | b | c && d", // tree-sitter nests it as `a | (b | c && d)`
      "x && a | b | c && d", // flat here, but which reading wins depends on the rest of the list
      "a | b | c\nd > f", // tree-sitter makes `d` an argument of `c`
      "a >f | b | c && d",
      'e "a"x$x.sh', // tree-sitter reads a bare `$` here
      "A=1 B=2\nc", // one command for tree-sitter
      'e "((x) "', // `((` outranks string_content
      "a - <<'EOF'\nx\nEOF", // the scanner swallows the `-`
      "e 1#", // not a word for tree-sitter-bash
      "a 0>f", // not a descriptor for the scanner
      "e $a\\\nb",
      "if x; then y; fi",
      "cat <<EOF\n$x\nEOF",
    ];
    for (const source of left) expect(fastSyntaxTree(source), source).toBeNull();
  });
});
