/**
 * A fast path for the common case: a parser, in plain JavaScript, for a
 * conservative subset of bash that produces **the same syntax tree** that
 * tree-sitter-bash 0.25 produces and `copyTree` copies (same node types,
 * namedness, spans and shape), or `null` when the text is not in the subset.
 * The model builder then runs on that tree unchanged, so the model is the
 * model the full parse gives.
 *
 * Why: the wasm parse plus the copy cost about 25 µs for an 80-character
 * command and grow with the size (about 200 ns a character); this parser
 * costs a few µs. It is only a shortcut: anything it does not know exactly
 * makes it give up (`null`) and the command goes through tree-sitter.
 *
 * The subset (everything else gives up):
 * - statements separated by `;`, `&` and newlines, joined by `&&`, `||`, `|`; a
 *   pipeline of three or more commands only in a statement without `&&`/`||`
 *   and redirects after it, not ended by a newline (tree-sitter-bash's GLR
 *   parser picks between readings of those in ways that depend on the rest of
 *   the statement, see `statement`); no `|&`, no `!`;
 * - simple commands: assignments before the name (`A=1 cmd`), a command name
 *   that is a plain word (no reserved word, no `=`, `:`, `@`, `%`, `#`, `?`, `*`),
 *   arguments; bare assignments (`A=1`, `A=1 B=2`);
 * - `for NAME in WORDS; do …; done`, `for NAME; do …; done`, `while`/`until … do … done`;
 * - redirects after a command or a compound (`>`, `>>`, `>|`, `<`, `&>`, `&>>`,
 *   `>&`, `<&`, with a descriptor number: `2>&1`);
 * - quoted-delimiter heredocs (`<<'EOF'`, `<<"EOF"`, `<<-'EOF'`), alone on their
 *   line or followed by file redirects;
 * - words: unquoted text without `\`, `` ` ``, `{`, `}`, `[`, `]`, `!`, `(`, `)`
 *   or non-ASCII; `'…'`; `"…"` without `\`, `` ` `` and newlines; `$NAME`, `$1`,
 *   `$@`-style specials, `${NAME}`, `$(…)` (in and out of double quotes); adjacent
 *   pieces (`a"b"$c`, a concatenation).
 *
 * The rules below follow tree-sitter-bash's grammar and external scanner,
 * including their quirks: words after a redirect are more destinations of it,
 * a redirect after `a && b` applies to the whole list, blanks before `$` inside
 * double quotes belong to the `$` token, a heredoc ends at the first line that
 * starts with its delimiter. `test/shell-parse.test.ts` compares this parser's
 * trees with tree-sitter's on the whole command corpus, the test inputs and
 * generated commands; a longer differential fuzzing run (about two million
 * generated commands the fast path took) found no difference.
 */

import { Copy, type SyntaxNode } from "./syntax-tree.js";

/** Thrown to abandon the fast path; caught in `fastSyntaxTree`. */
const GIVE_UP: { readonly giveUp: true } = Object.freeze({ giveUp: true });

// Character codes.
const TAB = 9;
const NL = 10;
const SPACE = 32;
const DQUOTE = 34;
const HASH = 35;
const DOLLAR = 36;
const AMP = 38;
const SQUOTE = 39;
const LPAREN = 40;
const RPAREN = 41;
const PLUS = 43;
const MINUS = 45;
const DIGIT0 = 48;
const DIGIT9 = 57;
const SEMI = 59;
const LT = 60;
const EQ = 61;
const GT = 62;
const LBRACE = 123;
const PIPE = 124;
const RBRACE = 125;

/** Character classes of ASCII code points (0 for everything not listed). */
const WORD = 1; // may appear in an unquoted word (after its first character for `#`)
const NAME_START = 2; // [A-Za-z_]
const NAME = 4; // [A-Za-z0-9_]
const COMMAND_NAME = 8; // may appear in a command name
const SPECIAL_VAR = 16; // $@ $* $# $? $$ $! $-
const CLASS = new Uint8Array(128);
{
  const set = (chars: string, bit: number): void => {
    for (const c of chars) CLASS[c.charCodeAt(0)]! |= bit;
  };
  const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const digits = "0123456789";
  set(letters + digits + "_./:,@%+=~^*?-#", WORD);
  set(letters + "_", NAME_START);
  set(letters + digits + "_", NAME);
  set(letters + digits + "_./~,+-", COMMAND_NAME);
  set("@*#?$!-", SPECIAL_VAR);
}

function cls(code: number): number {
  return code < 128 ? CLASS[code]! : 0;
}

/** Non-ASCII white space (JavaScript's `\s` and the C library's `iswspace`): tree-sitter-bash may treat it as blank. */
function isOddSpace(c: number): boolean {
  return c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** Words that tree-sitter-bash reads as keywords where a command could start. */
const RESERVED = new Set([
  "if",
  "then",
  "elif",
  "else",
  "fi",
  "case",
  "esac",
  "for",
  "select",
  "while",
  "until",
  "do",
  "done",
  "in",
  "function",
  "declare",
  "typeset",
  "export",
  "readonly",
  "local",
  "unset",
  "unsetenv",
  "time",
  "coproc",
]);

const NUMBER_RE = /^-?(?:0x)?[0-9]+$/;

function leaf(type: string, named: boolean, start: number, end: number): Copy {
  const node = new Copy(type, named, null);
  node.startIndex = start;
  node.endIndex = end;
  return node;
}

function inner(type: string, children: SyntaxNode[]): Copy {
  const node = new Copy(type, true, null);
  node.children = children;
  node.startIndex = children[0]!.startIndex;
  node.endIndex = children[children.length - 1]!.endIndex;
  return node;
}

/** What may end a list of statements. */
const enum Closer {
  End,
  Paren,
}

/** Deepest nesting of `$(…)` and loops the fast path follows (deeper text goes to tree-sitter). */
const MAX_NESTING = 32;

class FastParser {
  private pos = 0;
  private readonly n: number;
  private nesting = 0;
  constructor(private readonly src: string) {
    this.n = src.length;
  }

  private code(at: number): number {
    return at < this.n ? this.src.charCodeAt(at) : -1;
  }

  private fail(): never {
    throw GIVE_UP;
  }

  program(): Copy {
    const children = this.statements(Closer.End);
    if (this.pos !== this.n || children.length === 0) this.fail();
    return inner("program", children);
  }

  private skipBlanks(): void {
    for (;;) {
      const c = this.code(this.pos);
      if (c === SPACE || c === TAB) this.pos++;
      else return;
    }
  }

  /** Blanks and newlines. */
  private skipSpace(): void {
    for (;;) {
      const c = this.code(this.pos);
      if (c === SPACE || c === TAB || c === NL) this.pos++;
      else return;
    }
  }

  /** Statements and their `;`/`&` separators, up to the closer (not consumed). */
  private statements(closer: Closer): SyntaxNode[] {
    const out: SyntaxNode[] = [];
    this.skipSpace();
    for (;;) {
      if (this.atCloser(closer)) return out;
      out.push(this.statement());
      this.skipBlanks();
      const c = this.code(this.pos);
      if (c === SEMI) {
        const next = this.code(this.pos + 1);
        if (next === SEMI || next === AMP) this.fail(); // `;;`, `;&`: case syntax
        out.push(leaf(";", false, this.pos, this.pos + 1));
        this.pos++;
      } else if (c === AMP) {
        out.push(leaf("&", false, this.pos, this.pos + 1));
        this.pos++;
      } else if (c === NL) {
        this.pos++;
      } else if (!this.atCloser(closer)) {
        this.fail();
      }
      this.skipSpace();
    }
  }

  private atCloser(closer: Closer): boolean {
    const c = this.code(this.pos);
    if (closer === Closer.End) return c === -1;
    if (c === -1) this.fail();
    return c === RPAREN;
  }

  /** The reserved word starting at `at` when it stands alone (followed by a blank, `;`, `&`, `|`, `)`, `<`, `>`, a newline or the end). */
  private keywordAt(at: number): string | null {
    let end = at;
    while (end < this.n) {
      const c = this.src.charCodeAt(end);
      if (c >= 97 && c <= 122) end++;
      else break;
    }
    if (end === at || !this.delimiterAt(end)) return null;
    const word = this.src.slice(at, end);
    return RESERVED.has(word) ? word : null;
  }

  /** True when the character at `at` ends a word: blank, newline, end, `;`, `&`, `|`, `(`, `)`, `<`, `>`. */
  private delimiterAt(at: number): boolean {
    const c = this.code(at);
    return c === -1 || c === SPACE || c === TAB || c === NL || c === SEMI || c === AMP || c === PIPE || c === LPAREN || c === RPAREN || c === LT || c === GT;
  }

  /**
   * `a && b | c > f`: pipelines joined by `&&`/`||`; a redirect applies to everything before it.
   *
   * A pipeline of three or more commands is ambiguous in tree-sitter-bash's grammar (the
   * declared `pipeline` conflict), and which reading its GLR parser keeps depends on how the
   * competing stack versions meet again: `a | b | c && d` becomes `a | (b | c && d)` while
   * `x && a | b | c && d` stays flat, and `a | b | c⏎d > f` even makes `d` an argument of `c`.
   * Such statements are left to tree-sitter when they also have `&&`/`||` or a redirect after
   * the long pipeline, or end at a newline.
   */
  private statement(): SyntaxNode {
    let expr = this.pipelineFrom(this.primary());
    const long = expr.children.length > 3 && expr.type === "pipeline";
    for (;;) {
      this.skipBlanks();
      const c = this.code(this.pos);
      const next = this.code(this.pos + 1);
      if ((c === AMP && next === AMP) || (c === PIPE && next === PIPE)) {
        const op = leaf(c === AMP ? "&&" : "||", false, this.pos, this.pos + 2);
        this.pos += 2;
        this.skipSpace();
        if (long) this.fail();
        const right = this.pipelineFrom(this.primary());
        if (right.type === "pipeline" && right.children.length > 3) this.fail();
        expr = inner("list", [expr, op, right]);
      } else if (this.redirectStart()) {
        if (long) this.fail();
        const children: SyntaxNode[] = [expr];
        this.redirects(children);
        expr = inner("redirected_statement", children);
        this.skipBlanks();
        if (this.code(this.pos) === PIPE && this.code(this.pos + 1) !== PIPE) {
          expr = this.pipelineFrom(expr);
          // `a >f | b | c && d` nests the rest as a list inside the pipeline: left to tree-sitter.
          if (expr.children.length > 3) this.fail();
        }
      } else {
        if (long && this.code(this.pos) === NL) this.fail();
        return expr;
      }
    }
  }

  private pipelineFrom(first: SyntaxNode): SyntaxNode {
    let elements: SyntaxNode[] | null = null;
    for (;;) {
      this.skipBlanks();
      if (this.code(this.pos) !== PIPE || this.code(this.pos + 1) === PIPE) break;
      // `|&` makes tree-sitter-bash nest what follows differently: left to it.
      if (this.code(this.pos + 1) === AMP) this.fail();
      elements ??= [first];
      elements.push(leaf("|", false, this.pos, this.pos + 1));
      this.pos++;
      this.skipSpace();
      elements.push(this.primary());
    }
    return elements === null ? first : inner("pipeline", elements);
  }

  /** A pipeline element: a simple command, bare assignments, or a loop. */
  private primary(): SyntaxNode {
    this.skipBlanks();
    const keyword = this.keywordAt(this.pos);
    if (keyword === "for") return this.forStatement();
    if (keyword === "while" || keyword === "until") return this.whileStatement(keyword);
    if (this.redirectStart()) this.fail();
    const children: SyntaxNode[] = [];
    while (this.assignmentStart()) {
      children.push(this.assignment());
      this.skipBlanks();
    }
    if (this.commandEnd()) {
      if (children.length === 0) this.fail();
      if (children.length === 1) return children[0]!;
      // `A=1 B=2⏎c` is one command for tree-sitter-bash (the newline is skipped).
      if (this.code(this.pos) === NL) this.fail();
      return inner("variable_assignments", children);
    }
    if (this.redirectStart()) this.fail();
    children.push(this.commandName());
    for (;;) {
      this.skipBlanks();
      if (this.commandEnd() || this.redirectStart()) break;
      children.push(this.literal());
    }
    return inner("command", children);
  }

  /** The end of a command's words: end of text, newline, `;`, `&` (not `&>`), `|`, `)`. */
  private commandEnd(): boolean {
    const c = this.code(this.pos);
    if (c === AMP) return this.code(this.pos + 1) !== GT;
    return c === -1 || c === NL || c === SEMI || c === PIPE || c === RPAREN;
  }

  /** `NAME=` at the current position (not `_=`, not `NAME+=`, not `NAME[`). */
  private assignmentStart(): boolean {
    let i = this.pos;
    if (!(cls(this.code(i)) & NAME_START)) return false;
    i++;
    while (cls(this.code(i)) & NAME) i++;
    if (this.code(i) !== EQ) return false;
    return !(i === this.pos + 1 && this.code(this.pos) === 95 /* _ */);
  }

  private assignment(): Copy {
    const start = this.pos;
    let i = start + 1;
    while (cls(this.code(i)) & NAME) i++;
    const children: SyntaxNode[] = [leaf("variable_name", true, start, i), leaf("=", false, i, i + 1)];
    this.pos = i + 1;
    const c = this.code(this.pos);
    // `A=` followed by a blank, `;`, `&`, a newline or the end: an empty value (a hidden node).
    if (!(c === -1 || c === SPACE || c === TAB || c === NL || c === SEMI || (c === AMP && this.code(this.pos + 1) !== GT))) {
      children.push(this.literal());
    }
    return inner("variable_assignment", children);
  }

  /**
   * The command name: a bare word of letters, digits and `_./~,+-`, starting with a letter, `.`,
   * `/` or `~` (or just `:`); not a reserved word; no `+=`/`+:`. Where a command starts,
   * tree-sitter-bash's scanner looks for a variable name (`$x:y`, `a:b`, `a%b` go another way).
   */
  private commandName(): Copy {
    const start = this.pos;
    const c = this.code(start);
    if (c === 58 /* : */ && this.delimiterAt(start + 1)) {
      this.pos = start + 1;
      return inner("command_name", [leaf("word", true, start, start + 1)]);
    }
    if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 46 || c === 47 || c === 126)) this.fail();
    let i = start + 1;
    for (;;) {
      const d = this.code(i);
      if (d >= 0 && cls(d) & COMMAND_NAME) i++;
      else break;
    }
    if (RESERVED.has(this.src.slice(start, i))) this.fail();
    for (let k = start; k < i; k++) {
      if (this.src.charCodeAt(k) === PLUS) {
        const after = this.code(k + 1);
        if (after === EQ || after === 58 /* : */) this.fail();
      }
    }
    if (!this.delimiterAt(i)) this.fail();
    return inner("command_name", [this.literal()]);
  }

  /** One argument: adjacent pieces (a concatenation when more than one). */
  private literal(): SyntaxNode {
    let first: SyntaxNode | null = null;
    let pieces: SyntaxNode[] | null = null;
    for (;;) {
      const c = this.code(this.pos);
      let piece: SyntaxNode;
      if (c === DQUOTE) piece = this.string();
      else if (c === SQUOTE) piece = this.rawString();
      else if (c === DOLLAR) {
        piece = this.dollar(this.pos, false);
        // tree-sitter-bash reads an unbraced `$x` after two or more pieces (`"a"b$x`) as a bare `$`
        // followed by another word, and `a$$` as a `$$` token: left to it.
        if (first !== null && piece.type === "simple_expansion" && (pieces !== null || piece.children[1]!.type === "special_variable_name")) this.fail();
      }
      else if (c >= 0 && cls(c) & WORD && c !== HASH && c !== EQ) piece = this.word();
      else break;
      if (first === null) first = piece;
      else (pieces ??= [first]).push(piece);
    }
    if (first === null) this.fail();
    const c = this.code(this.pos);
    // What follows must end the word; `x>f` right after a word is left to tree-sitter (the
    // scanner reads some such words as file descriptors).
    if (!(c === -1 || c === SPACE || c === TAB || c === NL || c === SEMI || c === AMP || c === PIPE || c === RPAREN)) this.fail();
    if (pieces === null && first.endIndex === first.startIndex + 1 && this.src.charCodeAt(first.startIndex) === MINUS && (c === SPACE || c === TAB)) {
      // A lone `-`: the scanner, having stepped over it, skips the blanks after it and may read
      // what follows as `<<`, a descriptor or a name, swallowing the `-`.
      let i = this.pos;
      while (this.code(i) === SPACE || this.code(i) === TAB) i++;
      const d = this.code(i);
      if ((d >= DIGIT0 && d <= DIGIT9) || d === LT || d === 42 /* * */ || d === 64 /* @ */ || d === 63 /* ? */ || d === MINUS || d === 95 /* _ */ || d === 92 /* \ */ || d === 13) {
        this.fail();
      }
    }
    return pieces === null ? first : inner("concatenation", pieces);
  }

  /** Unquoted word characters: a `word`, or a `number` when the whole run is one. */
  private word(): Copy {
    const start = this.pos;
    let i = start;
    for (;;) {
      const c = this.code(i);
      if (c >= 0 && cls(c) & WORD) i++;
      else break;
    }
    this.pos = i;
    const text = this.src.slice(start, i);
    const digitStart = this.code(start) === MINUS ? start + 1 : start;
    const d = this.code(digitStart);
    if (d >= DIGIT0 && d <= DIGIT9) {
      // `1#…` is a number with a base; `1#` followed by anything but digits and letters is not
      // a word for tree-sitter-bash either.
      if (text.includes("#")) this.fail();
      if (NUMBER_RE.test(text)) return leaf("number", true, start, i);
    }
    return leaf("word", true, start, i);
  }

  private rawString(): Copy {
    const start = this.pos;
    const close = this.src.indexOf("'", start + 1);
    if (close < 0) this.fail();
    this.pos = close + 1;
    return leaf("raw_string", true, start, close + 1);
  }

  /**
   * `"…"`. Blanks before a `$`, `${`, `$(` or the closing quote belong to that token (tree-sitter-bash
   * lexes them so); blanks followed by text start a `string_content`.
   */
  private string(): Copy {
    const start = this.pos;
    const children: SyntaxNode[] = [leaf('"', false, start, start + 1)];
    let p = start + 1;
    for (;;) {
      let q = p;
      for (;;) {
        const c = this.code(q);
        if (c === SPACE || c === TAB) q++;
        else break;
      }
      const c = this.code(q);
      if (c === DQUOTE) {
        children.push(leaf('"', false, p, q + 1));
        this.pos = q + 1;
        const node = new Copy("string", true, null);
        node.children = children;
        node.startIndex = start;
        node.endIndex = q + 1;
        return node;
      }
      if (c === DOLLAR) {
        this.pos = q;
        children.push(this.dollar(p, true));
        p = this.pos;
        continue;
      }
      if (c === -1 || c === NL || c === 13 || c === 96 /* ` */ || c === 92 /* \ */) this.fail();
      // `((` is an arithmetic token here, and it outranks string_content.
      if (c === LPAREN && this.code(q + 1) === LPAREN) this.fail();
      // string_content: up to the next `"`, `$`, backquote, backslash, CR or newline.
      let r = q;
      for (;;) {
        const d = this.code(r);
        if (d === -1 || d === DQUOTE || d === DOLLAR || d === NL || d === 13 || d === 96 || d === 92) break;
        if ((d < SPACE && d !== TAB) || d === 127 || (d >= 128 && isOddSpace(d))) this.fail();
        r++;
      }
      if (this.code(r) !== DQUOTE && this.code(r) !== DOLLAR) this.fail();
      children.push(leaf("string_content", true, p, r));
      p = r;
    }
  }

  /**
   * `$NAME`, `$1`, `$@`…, `${NAME}`, `$(…)` at the current position; `tokenStart` is where the
   * first token starts (earlier than `$` for blanks inside double quotes).
   */
  private dollar(tokenStart: number, quoted: boolean): Copy {
    const at = this.pos;
    const c = this.code(at + 1);
    if (c === LPAREN) return this.commandSubstitution(tokenStart);
    if (c === LBRACE) {
      // `${NAME}` only.
      let i = at + 2;
      if (!(cls(this.code(i)) & NAME_START)) this.fail();
      i++;
      while (cls(this.code(i)) & NAME) i++;
      if (this.code(i) !== RBRACE || i === at + 3 && this.code(at + 2) === 95) this.fail();
      this.pos = i + 1;
      return inner("expansion", [leaf("${", false, tokenStart, at + 2), leaf("variable_name", true, at + 2, i), leaf("}", false, i, i + 1)]);
    }
    if (c >= 0 && cls(c) & NAME) {
      let i = at + 2;
      while (cls(this.code(i)) & NAME) i++;
      // The grammar's `\w` takes non-ASCII letters into the name.
      if (this.code(i) >= 128) this.fail();
      const special = i === at + 2 && (c === DIGIT0 || c === 95); // `$0`, `$_`
      this.pos = i;
      return inner("simple_expansion", [leaf("$", false, tokenStart, at + 1), leaf(special ? "special_variable_name" : "variable_name", true, at + 1, i)]);
    }
    if (c >= 0 && cls(c) & SPECIAL_VAR) {
      // `$@`, `$?`, …: only where the next character plainly ends it.
      const after = this.code(at + 2);
      if (!(quoted ? after === DQUOTE : this.delimiterAt(at + 2) && after !== LT && after !== GT && after !== LPAREN)) this.fail();
      this.pos = at + 2;
      return inner("simple_expansion", [leaf("$", false, tokenStart, at + 1), leaf("special_variable_name", true, at + 1, at + 2)]);
    }
    return this.fail();
  }

  private commandSubstitution(tokenStart: number): Copy {
    if (++this.nesting > MAX_NESTING) this.fail();
    const at = this.pos;
    const children: SyntaxNode[] = [leaf("$(", false, tokenStart, at + 2)];
    this.pos = at + 2;
    const body = this.statements(Closer.Paren);
    if (body.length === 0) this.fail();
    for (const s of body) children.push(s);
    children.push(leaf(")", false, this.pos, this.pos + 1));
    this.pos++;
    this.nesting--;
    return inner("command_substitution", children);
  }

  /**
   * A redirect starts here: `<`, `>`, `&>`, or digits right before `<`/`>` (not starting with `0`:
   * the scanner does not read `0>` as a descriptor).
   */
  private redirectStart(): boolean {
    const c = this.code(this.pos);
    if (c === LT || c === GT) return true;
    if (c === AMP) return this.code(this.pos + 1) === GT;
    if (c > DIGIT0 && c <= DIGIT9) {
      let i = this.pos + 1;
      while (this.code(i) >= DIGIT0 && this.code(i) <= DIGIT9) i++;
      const d = this.code(i);
      return d === LT || d === GT;
    }
    return false;
  }

  /** One or more redirects (file redirects, quoted heredocs), appended to `out`. */
  private redirects(out: SyntaxNode[]): void {
    do {
      out.push(this.redirect());
      this.skipBlanks();
    } while (this.redirectStart());
  }

  private redirect(): Copy {
    const start = this.pos;
    const children: SyntaxNode[] = [];
    let i = start;
    while (this.code(i) >= DIGIT0 && this.code(i) <= DIGIT9) i++;
    if (i > start) children.push(leaf("file_descriptor", true, start, i));
    const c = this.code(i);
    const next = this.code(i + 1);
    let op: string;
    if (c === GT) {
      if (next === GT) op = ">>";
      else if (next === AMP) op = this.code(i + 2) === MINUS ? "" : ">&";
      else if (next === PIPE) op = ">|";
      else if (next === LPAREN) op = "";
      else op = ">";
    } else if (c === LT) {
      if (next === LT) return this.heredoc(children, i);
      if (next === AMP) op = this.code(i + 2) === MINUS ? "" : "<&";
      else if (next === LPAREN || next === GT) op = "";
      else op = "<";
    } else if (c === AMP && i === start) {
      op = this.code(i + 2) === GT ? "&>>" : "&>";
    } else {
      op = "";
    }
    if (op === "") this.fail();
    children.push(leaf(op, false, i, i + op.length));
    this.pos = i + op.length;
    this.skipBlanks();
    // Destinations: every word up to the next redirect or the end of the command.
    children.push(this.literal());
    for (;;) {
      this.skipBlanks();
      if (this.commandEnd() || this.redirectStart()) break;
      children.push(this.literal());
    }
    return inner("file_redirect", children);
  }

  /**
   * `<<'EOF'` / `<<"EOF"` / `<<-'EOF'`, with only file redirects after it on its line. The newline,
   * the body (one `heredoc_body` token: the delimiter is quoted) and the end line are part of
   * the redirect; the statement goes on after the delimiter on the end line (`EOF && x`).
   */
  private heredoc(children: SyntaxNode[], at: number): Copy {
    if (children.length > 0) this.fail(); // `2<<EOF`
    const dash = this.code(at + 2) === MINUS;
    const opEnd = at + (dash ? 3 : 2);
    if (this.code(opEnd) === LT) this.fail(); // `<<<`
    children.push(leaf(dash ? "<<-" : "<<", false, at, opEnd));
    this.pos = opEnd;
    this.skipBlanks();
    const quote = this.code(this.pos);
    if (quote !== SQUOTE && quote !== DQUOTE) this.fail();
    const close = this.src.indexOf(quote === SQUOTE ? "'" : '"', this.pos + 1);
    if (close < 0) this.fail();
    const delimiter = this.src.slice(this.pos + 1, close);
    if (delimiter === "") this.fail();
    for (let k = 0; k < delimiter.length; k++) if (!(cls(delimiter.charCodeAt(k)) & NAME)) this.fail();
    const after = this.code(close + 1);
    if (!(after === SPACE || after === TAB || after === NL || after === GT)) this.fail();
    children.push(leaf("heredoc_start", true, this.pos, close + 1));
    this.pos = close + 1;
    for (;;) {
      this.skipBlanks();
      const c = this.code(this.pos);
      if (c === NL) break;
      if (!this.redirectStart()) this.fail();
      let i = this.pos;
      while (this.code(i) >= DIGIT0 && this.code(i) <= DIGIT9) i++;
      if (this.code(i) !== GT) this.fail(); // `>`-family file redirects only
      children.push(this.redirect());
    }
    // The body: from the next line to the first line that starts (after blanks) with the
    // delimiter. tree-sitter-bash's scanner moves the body's start past blanks on its first line
    // and steps over the character after a backslash: such bodies are left to it.
    const bodyStart = this.pos + 1;
    const first = this.code(bodyStart);
    if (first === -1 || first === SPACE || first === TAB || first === NL) this.fail();
    let lineStart = bodyStart;
    let endStart = -1;
    while (lineStart < this.n) {
      let s = lineStart;
      while (this.code(s) === SPACE || this.code(s) === TAB) s++;
      if (this.src.startsWith(delimiter, s)) {
        endStart = s;
        break;
      }
      const eol = this.src.indexOf("\n", lineStart);
      if (eol < 0) break;
      lineStart = eol + 1;
    }
    if (endStart < 0 || endStart === bodyStart) this.fail();
    for (let k = bodyStart; k < endStart; k++) {
      const c = this.src.charCodeAt(k);
      if (c === 92 /* \ */ || (c < SPACE && c !== TAB && c !== NL) || (c >= 128 && isOddSpace(c))) this.fail();
    }
    const endEnd = endStart + delimiter.length;
    children.push(leaf("heredoc_body", true, bodyStart, endStart), leaf("heredoc_end", true, endStart, endEnd));
    this.pos = endEnd;
    return inner("heredoc_redirect", children);
  }

  // ------------------------------------------------------------------- loops

  /** `for NAME [in WORDS]; do …; done`. */
  private forStatement(): Copy {
    if (++this.nesting > MAX_NESTING) this.fail();
    const children: SyntaxNode[] = [leaf("for", false, this.pos, this.pos + 3)];
    this.pos += 3;
    this.skipBlanks();
    const nameStart = this.pos;
    if (!(cls(this.code(nameStart)) & NAME_START)) this.fail();
    let i = nameStart + 1;
    while (cls(this.code(i)) & NAME) i++;
    if (!this.delimiterAt(i) || this.code(i) === LPAREN || this.code(i) === LT || this.code(i) === GT || this.code(i) === PIPE || this.code(i) === AMP) this.fail();
    children.push(leaf("variable_name", true, nameStart, i));
    this.pos = i;
    this.skipBlanks();
    if (this.keywordAt(this.pos) === "in") {
      children.push(leaf("in", false, this.pos, this.pos + 2));
      this.pos += 2;
      let values = 0;
      for (;;) {
        this.skipBlanks();
        const c = this.code(this.pos);
        if (c === SEMI || c === NL) break;
        if (this.commandEnd() || this.redirectStart()) this.fail();
        children.push(this.literal());
        values++;
      }
      if (values === 0) this.fail();
    }
    this.terminator(children);
    children.push(this.doGroup());
    this.nesting--;
    return inner("for_statement", children);
  }

  /** `while|until CONDITION; do …; done`. */
  private whileStatement(keyword: string): Copy {
    if (++this.nesting > MAX_NESTING) this.fail();
    const children: SyntaxNode[] = [leaf(keyword, false, this.pos, this.pos + keyword.length)];
    this.pos += keyword.length;
    // The condition: terminated statements up to `do`.
    this.skipSpace();
    let count = 0;
    for (;;) {
      if (this.keywordAt(this.pos) === "do") break;
      children.push(this.statement());
      count++;
      this.terminator(children);
      this.skipSpace();
    }
    if (count === 0) this.fail();
    children.push(this.doGroup());
    this.nesting--;
    return inner("while_statement", children);
  }

  /** `;` (a node), `&` (a node) or a newline (hidden) after a loop header or a statement. */
  private terminator(children: SyntaxNode[]): void {
    this.skipBlanks();
    const c = this.code(this.pos);
    if (c === SEMI) {
      if (this.code(this.pos + 1) === SEMI || this.code(this.pos + 1) === AMP) this.fail();
      children.push(leaf(";", false, this.pos, this.pos + 1));
      this.pos++;
    } else if (c === AMP && this.code(this.pos + 1) !== AMP && this.code(this.pos + 1) !== GT) {
      children.push(leaf("&", false, this.pos, this.pos + 1));
      this.pos++;
    } else if (c === NL) {
      this.pos++;
    } else {
      this.fail();
    }
  }

  /** `do …; done`: at least one terminated statement. */
  private doGroup(): Copy {
    this.skipSpace();
    if (this.keywordAt(this.pos) !== "do") this.fail();
    const children: SyntaxNode[] = [leaf("do", false, this.pos, this.pos + 2)];
    this.pos += 2;
    this.skipSpace();
    let count = 0;
    for (;;) {
      if (this.keywordAt(this.pos) === "done") break;
      if (this.code(this.pos) === -1) this.fail();
      children.push(this.statement());
      count++;
      this.terminator(children);
      this.skipSpace();
    }
    if (count === 0) this.fail();
    children.push(leaf("done", false, this.pos, this.pos + 4));
    this.pos += 4;
    return inner("do_group", children);
  }
}

/**
 * The syntax tree tree-sitter-bash would give for `src` (as `copyTree` copies it), when `src` is
 * in the subset this parser knows exactly; null otherwise.
 */
export function fastSyntaxTree(src: string): SyntaxNode | null {
  try {
    return new FastParser(src).program();
  } catch {
    // GIVE_UP, or anything unexpected: tree-sitter decides.
    return null;
  }
}
