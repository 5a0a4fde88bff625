/**
 * Bash word resolution: from tree-sitter-bash word nodes to `Word`s whose
 * `value` is what bash would pass as the argument (quotes removed, escapes
 * resolved, adjacent pieces joined), with the parts that need running
 * something kept as written and `static: false`.
 *
 * No parser state lives here: substitutions are built through the
 * `WordContext` the model builder passes in.
 */

import type { SyntaxNode as Node } from "./syntax-tree.js";
import type { Script, Substitution, Word, WordPart } from "./types.js";

/** What word resolution needs from the model builder. */
export interface WordContext {
  /** The text the current syntax tree's indices point into. */
  readonly src: string;
  /** Builds a `$(…)`, backticks, `<(…)` or `>(…)` node one nesting level below `depth`. */
  substitution(node: Node, depth: number): Substitution;
  /** Parses and builds shell text found inside a word (escaped backticks, heredoc backticks), one level below `depth`. */
  nestedScript(text: string, depth: number): Script;
  /** Records why the model is incomplete. */
  problem(message: string): void;
  /** Records syntax the model does not cover (`what` names it). */
  unsupported(what: string, node: Node): void;
}

/** Word node types that read as unquoted literal text, with backslash escapes. */
const UNQUOTED = new Set(["word", "extglob_pattern", "variable_name", "special_variable_name", "file_descriptor"]);
/**
 * Node types that need running something (or arithmetic) to know their value.
 * They are kept as written; their command substitutions are collected.
 */
const DYNAMIC = new Set([
  "simple_expansion",
  "expansion",
  "arithmetic_expansion",
  "command_substitution",
  "process_substitution",
  "subscript",
  "binary_expression",
  "unary_expression",
  "ternary_expression",
  "postfix_expression",
  "parenthesized_expression",
  "test_operator",
  "ERROR",
]);

/** Mask character for a value character that is quoted, escaped or the result of an expansion. */
const QUOTED = "\u0000";
const BRACE_RE = /\{[^{}\s]*(?:,|\.\.)[^{}\s]*\}/;
const GLOB_RE = /[*?]|\[[^\]]*\]/;

interface Acc {
  value: string;
  /**
   * The value with everything quoted, escaped or expanded replaced by NUL: what is left is
   * what bash reads unquoted (brace expansion, tilde, globs).
   */
  mask: string;
  static: boolean;
  subs: Substitution[];
  brace: boolean;
  /** The word piece by piece (see `Word.parts`); started at the first piece that is not static (most words are static). */
  parts: WordPart[] | null;
  /** A quoted piece was seen (`""` is an argument even when empty). */
  sawQuote: boolean;
  /** Inside `"…"` (expansions there are not split). */
  quoted: number;
}

/** Starts `acc.parts` with the text read so far, before the first piece that is not static. */
function startParts(acc: Acc): WordPart[] {
  if (acc.parts) return acc.parts;
  acc.parts = acc.value !== "" || acc.sawQuote ? [{ kind: "text", text: acc.value }] : [];
  return acc.parts;
}

function addTextPart(acc: Acc, text: string): void {
  if (!acc.parts) return;
  const last = acc.parts[acc.parts.length - 1];
  if (last?.kind === "text") last.text += text;
  else acc.parts.push({ kind: "text", text });
}

/** Resolves one word node (`word`, `string`, `concatenation`, `$'…'`, `$VAR`, `$(…)`, …). */
export function resolveWord(node: Node, ctx: WordContext, depth: number): Word {
  const acc: Acc = { value: "", mask: "", static: true, subs: [], brace: false, parts: null, sawQuote: false, quoted: 0 };
  addPiece(acc, node, ctx, depth);
  return finish(acc, ctx.src.slice(node.startIndex, node.endIndex));
}

/** A static word from known text (keywords such as `export`, the `-` of `>&-`). */
export function literalWord(raw: string, value: string = raw): Word {
  return { raw, value, static: true, substitutions: [] };
}

/**
 * A word kept exactly as written and marked not static, with the substitutions inside it
 * (arithmetic in `for ((…))` and `((…))`, anything the resolver does not model).
 */
export function dynamicWord(node: Node, ctx: WordContext, depth: number): Word {
  const raw = ctx.src.slice(node.startIndex, node.endIndex);
  const subs: Substitution[] = [];
  collectSubstitutions(node, ctx, depth, subs);
  return { raw, value: raw, static: false, substitutions: subs };
}

/**
 * Joins words that bash reads as one. tree-sitter-bash treats a line continuation
 * (backslash-newline) as blank, so `r\<newline>m` comes as two words, but bash removes
 * the pair before splitting words and runs `rm`. It also splits `$"…"` into `$` and a string.
 */
export function joinContinuations(items: { word: Word; start: number; end: number }[], src: string): Word[] {
  const out: Word[] = [];
  let prevEnd = -1;
  for (const item of items) {
    const last = out[out.length - 1];
    if (last !== undefined && last.raw === "$" && item.start === prevEnd && item.word.raw.startsWith('"')) {
      // `$"…"` (locale translation) comes as a `$` token and a string: one word, the string's text.
      out[out.length - 1] = { ...item.word, raw: `$${item.word.raw}` };
    } else if (last !== undefined && item.start > prevEnd && isContinuationGap(src, prevEnd, item.start)) {
      const w = item.word;
      const joined: Word = {
        raw: last.raw + src.slice(prevEnd, item.start) + w.raw,
        value: last.value + w.value,
        static: last.static && w.static,
        substitutions: last.substitutions.length === 0 ? w.substitutions : w.substitutions.length === 0 ? last.substitutions : [...last.substitutions, ...w.substitutions],
      };
      if (!joined.static) joined.parts = joinParts(last, w);
      if (last.braceExpansion || w.braceExpansion) joined.braceExpansion = true;
      if (last.tilde) joined.tilde = true;
      if (last.glob || w.glob) joined.glob = true;
      out[out.length - 1] = joined;
    } else {
      out.push(item.word);
    }
    prevEnd = item.end;
  }
  return out;
}

/** The parts of two words read as one (substitution indexes of the second shift past the first's). */
function joinParts(a: Word, b: Word): WordPart[] | undefined {
  if ((!a.static && !a.parts) || (!b.static && !b.parts)) return undefined;
  const shift = a.substitutions.length;
  const second = (b.parts ?? [{ kind: "text", text: b.value }]).map((p): WordPart => (p.kind === "substitution" ? { ...p, index: p.index + shift } : p));
  return [...(a.parts ?? [{ kind: "text", text: a.value }]), ...second];
}

/** True when the text between `from` and `to` is only line continuations (backslash-newline). */
export function isContinuationGap(src: string, from: number, to: number): boolean {
  if (to - from < 2 || (to - from) % 2 !== 0) return false;
  for (let i = from; i < to; i += 2) {
    if (src.charCodeAt(i) !== 92 /* \ */ || src.charCodeAt(i + 1) !== 10 /* \n */) return false;
  }
  return true;
}

function finish(acc: Acc, raw: string): Word {
  const word: Word = { raw, value: acc.value, static: acc.static, substitutions: acc.subs };
  if (!acc.static) word.parts = startParts(acc);
  const mask = acc.mask;
  if (acc.brace || (mask.includes("{") && BRACE_RE.test(mask))) word.braceExpansion = true;
  if (mask.charCodeAt(0) === 126 /* ~ */) word.tilde = true;
  if (GLOB_RE.test(mask)) word.glob = true;
  return word;
}

function addPiece(acc: Acc, node: Node, ctx: WordContext, depth: number): void {
  const type = node.type;
  const src = ctx.src;
  if (!node.isNamed) {
    // Anonymous tokens in word position: `$`, `==`, `=~` arguments, `=` and `+=` in assignments.
    addUnquoted(acc, src.slice(node.startIndex, node.endIndex));
    return;
  }
  if (UNQUOTED.has(type)) {
    addUnquoted(acc, src.slice(node.startIndex, node.endIndex));
    return;
  }
  switch (type) {
    case "number":
      if (node.namedChildren.length === 0) addUnquoted(acc, src.slice(node.startIndex, node.endIndex));
      else addDynamic(acc, node, ctx, depth);
      return;
    case "regex":
      addRaw(acc, src.slice(node.startIndex, node.endIndex));
      return;
    case "raw_string": {
      const text = src.slice(node.startIndex, node.endIndex);
      addQuoted(acc, text.length >= 2 && text.endsWith("'") ? text.slice(1, -1) : text.slice(1));
      return;
    }
    case "ansi_c_string": {
      const text = src.slice(node.startIndex, node.endIndex);
      addQuoted(acc, decodeAnsiC(text.length >= 3 && text.endsWith("'") ? text.slice(2, -1) : text.slice(2)));
      return;
    }
    case "string":
      addDoubleQuoted(acc, node, ctx, depth);
      return;
    case "translated_string": {
      // `$"…"`: a double-quoted string looked up in the message catalogue; the text is the key.
      const inner = node.namedChildren.find((c) => c.type === "string");
      if (inner) addDoubleQuoted(acc, inner, ctx, depth);
      else addDynamic(acc, node, ctx, depth);
      return;
    }
    case "concatenation":
    case "command_name": {
      const children = node.children;
      for (let i = 0; i < children.length; i++) {
        const child = children[i]!;
        const next = children[i + 1];
        // `a$"…"`: the `$` of a translated string, not text.
        if (!child.isNamed && child.type === "$" && next?.type === "string" && next.startIndex === child.endIndex) continue;
        addPiece(acc, child, ctx, depth);
      }
      return;
    }
    case "brace_expression":
      acc.brace = true;
      addRaw(acc, src.slice(node.startIndex, node.endIndex));
      return;
    case "array":
      addArray(acc, node, ctx, depth);
      return;
    case "variable_assignment":
      // In `export A=1` / `local x="$(id)"`: the whole `A=1` is one argument.
      for (const child of node.children) {
        if (child.type === "subscript") addDynamic(acc, child, ctx, depth);
        else addPiece(acc, child, ctx, depth);
      }
      return;
    case "command_substitution":
    case "process_substitution":
      startParts(acc).push({ kind: "substitution", index: acc.subs.length, quoted: acc.quoted > 0 });
      acc.static = false;
      acc.value += src.slice(node.startIndex, node.endIndex);
      acc.mask += QUOTED;
      acc.subs.push(ctx.substitution(node, depth));
      return;
    default:
      if (!DYNAMIC.has(type)) {
        ctx.unsupported(`word syntax (${type})`, node);
      }
      addDynamic(acc, node, ctx, depth);
  }
}

/** Unquoted text: a backslash quotes the next character; backslash-newline disappears. */
function addUnquoted(acc: Acc, text: string): void {
  if (!text.includes("\\")) {
    acc.value += text;
    acc.mask += text;
    addTextPart(acc, text);
    return;
  }
  let value = "";
  let mask = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\" && i + 1 < text.length) {
      const next = text[++i]!;
      if (next === "\n") continue;
      value += next;
      mask += QUOTED;
    } else {
      value += c;
      mask += c === "\\" ? QUOTED : c;
    }
  }
  acc.value += value;
  acc.mask += mask;
  addTextPart(acc, value);
}

/** Literal text with no quoting to remove, read as unquoted (brace expansions, regexes). */
function addRaw(acc: Acc, text: string): void {
  acc.value += text;
  acc.mask += text;
  addTextPart(acc, text);
}

function addQuoted(acc: Acc, text: string): void {
  acc.sawQuote = true;
  acc.value += text;
  acc.mask += QUOTED;
  addTextPart(acc, text);
}

/** Parts that need running something: kept as written, their substitutions collected. */
function addDynamic(acc: Acc, node: Node, ctx: WordContext, depth: number): void {
  const raw = ctx.src.slice(node.startIndex, node.endIndex);
  startParts(acc).push({ kind: "expansion", raw, quoted: acc.quoted > 0 });
  acc.static = false;
  acc.value += raw;
  acc.mask += QUOTED;
  collectSubstitutions(node, ctx, depth, acc.subs);
}

/**
 * Finds the command and process substitutions anywhere under `node` (not inside one another:
 * a substitution's own nested substitutions live in its script). Iterative, so deeply nested
 * expansions cannot overflow the stack.
 */
export function collectSubstitutions(node: Node, ctx: WordContext, depth: number, out: Substitution[]): void {
  const stack: Node[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    const type = n.type;
    if (type === "command_substitution" || type === "process_substitution") {
      out.push(ctx.substitution(n, depth));
      continue;
    }
    if (n.namedChildren.length === 0) continue;
    const children = n.namedChildren;
    for (let i = children.length - 1; i >= 0; i--) {
      stack.push(children[i]!);
    }
  }
}

/** `"…"`: `\` quotes only `$`, `` ` ``, `"`, `\` and newline; expansions and substitutions stay live. */
function addDoubleQuoted(acc: Acc, node: Node, ctx: WordContext, depth: number): void {
  const children = node.children;
  let pos = node.startIndex + 1;
  let end = node.endIndex;
  const last = children[children.length - 1];
  if (children.length > 1 && last && last.type === '"' && !last.isMissing) end = last.startIndex;
  // `""` is an (empty) argument of its own.
  acc.sawQuote = true;
  addTextPart(acc, "");
  acc.quoted++;
  try {
    addDoubleQuotedChildren(acc, node, ctx, depth, pos, end);
  } finally {
    acc.quoted--;
  }
}

function addDoubleQuotedChildren(acc: Acc, node: Node, ctx: WordContext, depth: number, pos: number, end: number): void {
  const src = ctx.src;
  const children = node.children;
  for (let i = 1; i < children.length; i++) {
    const child = children[i]!;
    if (child.startIndex >= end) break;
    if (child.startIndex > pos) addQuoted(acc, unescapeDoubleQuoted(src.slice(pos, child.startIndex)));
    if (child.type === "string_content" || !child.isNamed) {
      addQuoted(acc, unescapeDoubleQuoted(src.slice(child.startIndex, child.endIndex)));
    } else {
      addPiece(acc, child, ctx, depth);
    }
    pos = child.endIndex;
  }
  if (end > pos) addQuoted(acc, unescapeDoubleQuoted(src.slice(pos, end)));
}

/** Backslash removal inside double quotes. */
export function unescapeDoubleQuoted(text: string): string {
  if (!text.includes("\\")) return text;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\" && i + 1 < text.length) {
      const next = text[i + 1]!;
      if (next === "\n") {
        i++;
        continue;
      }
      if (next === "$" || next === "`" || next === '"' || next === "\\") {
        out += next;
        i++;
        continue;
      }
    }
    out += c;
  }
  return out;
}

function addArray(acc: Acc, node: Node, ctx: WordContext, depth: number): void {
  const parts: string[] = [];
  let isStatic = true;
  for (const child of node.namedChildren) {
    const w = resolveWord(child, ctx, depth);
    parts.push(w.value);
    if (!w.static) isStatic = false;
    for (const s of w.substitutions) acc.subs.push(s);
  }
  acc.value += `(${parts.join(" ")})`;
  acc.mask += QUOTED;
  addTextPart(acc, `(${parts.join(" ")})`);
  if (!isStatic) acc.static = false;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

function isOctal(c: string | undefined): boolean {
  return c !== undefined && c >= "0" && c <= "7";
}

function isHex(c: string | undefined): boolean {
  return c !== undefined && /^[0-9a-fA-F]$/.test(c);
}

/**
 * The body of `$'…'` with bash's ANSI-C escapes resolved: `\n`, `\t`, `\e`, …, `\NNN` (octal),
 * `\xHH`, `\uHHHH`, `\UHHHHHHHH`, `\cX`. A NUL ends the string, as in bash. Unknown escapes
 * keep their backslash.
 */
export function decodeAnsiC(body: string): string {
  if (!body.includes("\\")) return body;
  let out = "";
  let i = 0;
  while (i < body.length) {
    const c = body[i]!;
    if (c !== "\\" || i + 1 >= body.length) {
      out += c;
      i++;
      continue;
    }
    const e = body[i + 1]!;
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      i += 2;
      continue;
    }
    let code = -1;
    let next = i + 2;
    if (isOctal(e)) {
      let j = i + 1;
      let digits = "";
      while (j < body.length && digits.length < 3 && isOctal(body[j])) digits += body[j++];
      code = parseInt(digits, 8) & 0xff;
      next = j;
    } else if (e === "x" || e === "u" || e === "U") {
      const max = e === "x" ? 2 : e === "u" ? 4 : 8;
      let j = i + 2;
      let digits = "";
      while (j < body.length && digits.length < max && isHex(body[j])) digits += body[j++];
      if (digits.length > 0) {
        code = parseInt(digits, 16);
        next = j;
      }
    } else if (e === "c" && i + 2 < body.length) {
      const ctl = body[i + 2]!;
      code = ctl === "?" ? 0x7f : ctl.toUpperCase().charCodeAt(0) & 0x1f;
      next = i + 3;
    }
    if (code < 0) {
      out += c + e;
      i += 2;
      continue;
    }
    if (code === 0) return out;
    out += code <= 0x10ffff ? String.fromCodePoint(code) : "\ufffd";
    i = next;
  }
  return out;
}

/**
 * A heredoc body as the command reads it.
 * - Quoted delimiter (`<<'EOF'`, `<<"EOF"`, `<<\EOF`): the lines as written, static.
 * - Unquoted: `\$`, `` \` ``, `\\` and backslash-newline resolved; `$VAR`, `${…}`, `$((…))` kept
 *   as written (not static); `$(…)` and backticks parsed into `subs`.
 * - `<<-`: leading tabs of every line removed first.
 *
 * `start`..`end` is the body's extent in the source. The body is scanned here, not read from the
 * tree: tree-sitter-bash 0.25 misses expansions in a body whose first line starts with blanks
 * (` $(cmd)`) and misreads a first line that starts with a backslash.
 */
export function resolveHeredocBody(
  start: number,
  end: number,
  quoted: boolean,
  stripTabs: boolean,
  ctx: WordContext,
  depth: number,
  subs: Substitution[],
): { body: string; bodyStatic: boolean } {
  let text = start < end ? ctx.src.slice(start, end) : "";
  if (stripTabs) text = text.replace(/^\t+/gm, "");
  if (quoted) return { body: text, bodyStatic: true };
  const r = expandLikeHeredoc(text, ctx, depth, subs);
  return { body: r.text, bodyStatic: r.static };
}

/**
 * Reads text the way bash reads an unquoted heredoc body: backslash quotes only `$`, `` ` ``,
 * `\` and newline; `$…` expansions and substitutions are live, quotes are not special.
 * Substitutions found (also inside `${…}` and `$((…))`) are parsed into `subs`.
 */
export function expandLikeHeredoc(
  text: string,
  ctx: WordContext,
  depth: number,
  subs: Substitution[],
): { text: string; static: boolean } {
  if (!text.includes("\\") && !text.includes("`") && !text.includes("$")) return { text, static: true };
  let out = "";
  let isStatic = true;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text[i]!;
    if (c === "\\" && i + 1 < n) {
      const next = text[i + 1]!;
      if (next === "\n") {
        i += 2;
        continue;
      }
      if (next === "$" || next === "`" || next === "\\") {
        out += next;
        i += 2;
        continue;
      }
      out += c;
      i++;
      continue;
    }
    if (c === "`") {
      const close = findClosingBacktick(text, i + 1);
      if (close < 0) {
        ctx.problem(`unterminated backquote in a heredoc body: ${snippet(text.slice(i))}`);
        return { text: out + text.slice(i), static: false };
      }
      subs.push({ kind: "command", script: ctx.nestedScript(unescapeBackquoted(text.slice(i + 1, close)), depth) });
      out += text.slice(i, close + 1);
      isStatic = false;
      i = close + 1;
      continue;
    }
    if (c === "$" && i + 1 < n) {
      const next = text[i + 1]!;
      let endIndex = -1;
      if (next === "(") {
        const close = findClosing(text, i + 1, "(", ")");
        if (close < 0) {
          ctx.problem(`unterminated $( in a heredoc body: ${snippet(text.slice(i))}`);
          return { text: out + text.slice(i), static: false };
        }
        const inner = text.slice(i + 2, close);
        if (inner.startsWith("(") && inner.endsWith(")")) {
          // `$(( … ))`: arithmetic; only its substitutions run commands.
          expandLikeHeredoc(inner.slice(1, -1), ctx, depth, subs);
        } else {
          subs.push({ kind: "command", script: ctx.nestedScript(inner, depth) });
        }
        endIndex = close + 1;
      } else if (next === "{") {
        const close = findClosing(text, i + 1, "{", "}");
        if (close < 0) {
          ctx.problem(`unterminated \${ in a heredoc body: ${snippet(text.slice(i))}`);
          return { text: out + text.slice(i), static: false };
        }
        expandLikeHeredoc(text.slice(i + 2, close), ctx, depth, subs);
        endIndex = close + 1;
      } else if (/[A-Za-z_]/.test(next)) {
        endIndex = i + 2;
        while (endIndex < n && /[A-Za-z0-9_]/.test(text[endIndex]!)) endIndex++;
      } else if (/[0-9@*#?$!-]/.test(next)) {
        endIndex = i + 2;
      }
      if (endIndex > 0) {
        out += text.slice(i, endIndex);
        isStatic = false;
        i = endIndex;
        continue;
      }
    }
    out += c;
    i++;
  }
  return { text: out, static: isStatic };
}

/**
 * Index of the `close` matching the `open` at `openIndex`, skipping quotes, escapes,
 * backticks and nested `$(…)`; -1 when there is none.
 */
export function findClosing(text: string, openIndex: number, open: string, close: string): number {
  let level = 0;
  for (let i = openIndex; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") i++;
    else if (c === "'") {
      const q = text.indexOf("'", i + 1);
      if (q < 0) return -1;
      i = q;
    } else if (c === '"') {
      const q = closingDoubleQuote(text, i + 1);
      if (q < 0) return -1;
      i = q;
    } else if (c === "`") {
      const q = findClosingBacktick(text, i + 1);
      if (q < 0) return -1;
      i = q;
    } else if (c === open) level++;
    else if (c === close) {
      level--;
      if (level === 0) return i;
    }
  }
  return -1;
}

/** Index of the `"` closing a double-quoted string whose text starts at `from`, or -1. */
export function closingDoubleQuote(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") i++;
    else if (c === '"') return i;
    else if (c === "$" && text[i + 1] === "(") {
      const q = findClosing(text, i + 1, "(", ")");
      if (q < 0) return -1;
      i = q;
    } else if (c === "`") {
      const q = findClosingBacktick(text, i + 1);
      if (q < 0) return -1;
      i = q;
    }
  }
  return -1;
}

/** Index of the next unescaped backtick at or after `from`, or -1. */
export function findClosingBacktick(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") i++;
    else if (c === "`") return i;
  }
  return -1;
}

/** Inside backticks bash removes a backslash before `$`, `` ` `` and `\` before parsing the command. */
export function unescapeBackquoted(text: string): string {
  return text.includes("\\") ? text.replace(/\\([$`\\])/g, "$1") : text;
}

/** Backticks whose text needs the backslash pass above before it parses like bash parses it. */
export function needsBackquoteUnescape(text: string): boolean {
  return /\\[$`\\]/.test(text);
}

/** Short quoted excerpt for problem messages. */
export function snippet(text: string, max = 40): string {
  const oneLine = text.length > max ? `${text.slice(0, max)}…` : text;
  return JSON.stringify(oneLine);
}
