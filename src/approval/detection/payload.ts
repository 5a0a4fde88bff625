/**
 * Interpreter payloads: finds the calls listed in rules/payload.ts, reads
 * their literal arguments and says what they amount to, as shell command
 * lines, argvs and findings for the engine to analyse further.
 */
import type { PayloadLanguage } from "../rules/programs.js";
import { HOME_EXPRESSIONS, PATH_WRAPPERS, PAYLOAD_CALLS, PAYLOAD_PATTERNS, type PayloadCall } from "../rules/payload.js";

export interface PayloadArgument {
  /** The argument's source text. */
  text: string;
  /** Its value when it is a string or number literal (or a home-directory expression → `~`). */
  literal: string | null;
  /** Its elements when it is a list of literals (`["rm", "-rf", "/"]`, `qw(rm -rf /)`). */
  list: string[] | null;
}

export interface PayloadAnalysis {
  /** Shell command lines the payload runs. */
  scripts: { text: string; via: string }[];
  /** Programs with arguments the payload runs (or that its calls are equivalent to). */
  argvs: { argv: string[]; dynamic: boolean[]; via: string }[];
  findings: { finding: string; via: string }[];
  /** Why parts could not be analysed (a shell-out with a computed command). */
  unanalysable: string[];
}

const CALLS_BY_LANGUAGE = new Map<PayloadLanguage, PayloadCall[]>();
for (const call of PAYLOAD_CALLS) {
  for (const lang of call.languages) {
    let list = CALLS_BY_LANGUAGE.get(lang);
    if (!list) CALLS_BY_LANGUAGE.set(lang, (list = []));
    list.push(call);
  }
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { n: "\n", t: "\t", r: "\r", "0": "\0", "\\": "\\", "'": "'", '"': '"', "`": "`", $: "$", a: "\x07", b: "\b", f: "\f", v: "\v", e: "\x1b" };

function unescape(body: string, raw: boolean): string {
  if (raw) return body;
  return body.replace(/\\(?:x([0-9a-fA-F]{2})|u\{?([0-9a-fA-F]{1,6})\}?|([0-7]{1,3})|([\s\S]))/g, (whole, hex, uni, oct, ch: string | undefined) => {
    if (hex) return String.fromCharCode(parseInt(hex, 16));
    if (uni) return String.fromCodePoint(parseInt(uni, 16));
    if (oct) return String.fromCharCode(parseInt(oct, 8));
    if (ch === "\n") return "";
    return ch !== undefined ? (SIMPLE_ESCAPES[ch] ?? "\\" + ch) : whole;
  });
}

/** Perl/Ruby quote-like operators: q(…), qq{…}, %q[…], %x(…). */
const PAIRS: Readonly<Record<string, string>> = { "(": ")", "[": "]", "{": "}", "<": ">" };

function readDelimited(s: string, start: number, open: string): [string, number] | null {
  const close = PAIRS[open] ?? open;
  let depth = 1;
  let i = start;
  while (i < s.length) {
    const ch = s[i]!;
    if (ch === "\\") {
      i += 2;
      continue;
    }
    if (ch === close && --depth === 0) return [s.slice(start, i), i + 1];
    if (ch === open && open !== close) depth++;
    i++;
  }
  return null;
}

/** Reads a string literal at `i` (after optional prefixes); returns [value, end, interpolated]. */
function readString(s: string, i: number, lang: PayloadLanguage): [string, number, boolean] | null {
  let prefix = "";
  if (lang === "python") {
    const m = /^[rRbBuUfF]{1,2}(?=['"])/.exec(s.slice(i, i + 3));
    if (m) {
      prefix = m[0].toLowerCase();
      i += m[0].length;
    }
  }
  const q = s[i];
  if ((lang === "perl" || lang === "ruby") && (q === "q" || q === "%")) {
    const m = /^(?:qq|q|%[qQ]?)([^\w\s])/.exec(s.slice(i, i + 4));
    if (m) {
      const got = readDelimited(s, i + m[0].length, m[1]!);
      if (!got) return null;
      const interpolating = m[0].startsWith("qq") || m[0].startsWith("%Q") || m[0] === "%" + m[1];
      return [interpolating ? unescape(got[0], false) : got[0], got[1], interpolating && /[$@]\w|#\{/.test(got[0])];
    }
    return null;
  }
  if (lang === "lua" && q === "[" && s[i + 1] === "[") {
    const end = s.indexOf("]]", i + 2);
    return end < 0 ? null : [s.slice(i + 2, end), end + 2, false];
  }
  if (q !== "'" && q !== '"' && !(q === "`" && lang === "javascript")) return null;
  if (lang === "python" && s.startsWith(q.repeat(3), i)) {
    const end = s.indexOf(q.repeat(3), i + 3);
    if (end < 0) return null;
    const body = s.slice(i + 3, end);
    return [unescape(body, prefix.includes("r")), end + 3, prefix.includes("f") && body.includes("{")];
  }
  let j = i + 1;
  while (j < s.length && s[j] !== q) j += s[j] === "\\" ? 2 : 1;
  if (j >= s.length) return null;
  const body = s.slice(i + 1, j);
  const singleQuotedVerbatim = q === "'" && (lang === "perl" || lang === "ruby" || lang === "php");
  const value = singleQuotedVerbatim ? body.replace(/\\([\\'])/g, "$1") : unescape(body, prefix.includes("r"));
  let interpolated = false;
  if (prefix.includes("f")) interpolated = body.includes("{");
  else if (q === "`") interpolated = body.includes("${");
  else if (q === '"' && (lang === "perl" || lang === "php")) interpolated = /(?<!\\)[$@][\w{]/.test(body);
  else if (q === '"' && lang === "ruby") interpolated = body.includes("#{");
  return [value, j + 1, interpolated];
}

/** Splits an argument list (the text between the parentheses) at top-level commas. */
function splitArgs(s: string, lang: PayloadLanguage): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  let i = 0;
  while (i < s.length) {
    const ch = s[i]!;
    if (ch === "'" || ch === '"' || (ch === "`" && lang === "javascript")) {
      const str = readString(s, i, lang);
      i = str ? str[1] : s.length;
      continue;
    }
    if (ch === "(" || ch === "[" || ch === "{") depth++;
    else if (ch === ")" || ch === "]" || ch === "}") depth--;
    else if (ch === "," && depth === 0) {
      out.push(s.slice(start, i).trim());
      start = i + 1;
    }
    i++;
  }
  const last = s.slice(start).trim();
  if (last !== "" || out.length > 0) out.push(last);
  return out;
}

function literalOf(text: string, lang: PayloadLanguage): string | null {
  let t = text.trim();
  if (/^-?\d+$/.test(t)) return t;
  if (HOME_EXPRESSIONS.test(t)) return "~";
  for (let n = 0; n < 4; n++) {
    const wrapped = PATH_WRAPPERS.exec(t);
    if (!wrapped) break;
    t = wrapped[1]!.trim();
    if (HOME_EXPRESSIONS.test(t)) return "~";
  }
  const str = readString(t, 0, lang);
  if (!str || str[2]) return null;
  return t.slice(str[1]).trim() === "" ? str[0] : null;
}

function listOf(text: string, lang: PayloadLanguage): string[] | null {
  const t = text.trim();
  let inner: string | null = null;
  if ((t.startsWith("[") && t.endsWith("]")) || (t.startsWith("(") && t.endsWith(")"))) inner = t.slice(1, -1);
  else if (/^array\s*\(/i.test(t) && t.endsWith(")")) inner = t.slice(t.indexOf("(") + 1, -1);
  else if (lang === "r" && /^c\s*\(/.test(t) && t.endsWith(")")) inner = t.slice(t.indexOf("(") + 1, -1);
  else {
    const qw = /^(?:qw|%w|%W)([^\w\s])/.exec(t);
    if (qw) {
      const got = readDelimited(t, qw[0].length, qw[1]!);
      return got ? got[0].split(/\s+/).filter(Boolean) : null;
    }
  }
  if (inner === null) return null;
  const items = splitArgs(inner, lang);
  const out: string[] = [];
  for (const item of items) {
    if (item === "") continue;
    const lit = literalOf(item, lang);
    if (lit === null) return null;
    out.push(lit);
  }
  return out;
}

/** The elements of a list literal, each its literal value or null when computed; null when `text` is not a list. */
function mixedList(text: string, lang: PayloadLanguage): (string | null)[] | null {
  const t = text.trim();
  if (!((t.startsWith("[") && t.endsWith("]")) || (t.startsWith("(") && t.endsWith(")")))) return null;
  return splitArgs(t.slice(1, -1), lang)
    .filter((item) => item !== "")
    .map((item) => literalOf(item, lang));
}

function argument(text: string, lang: PayloadLanguage): PayloadArgument {
  const literal = literalOf(text, lang);
  return { text, literal, list: literal === null ? listOf(text, lang) : null };
}

/** Reads the argument list that starts at `i` (a parenthesised list, or Perl/Ruby/Lua call syntax without parentheses). */
function readArguments(code: string, i: number, lang: PayloadLanguage): PayloadArgument[] | null {
  while (i < code.length && (code[i] === " " || code[i] === "\t")) i++;
  let body: string;
  if (code[i] === "(") {
    const got = readDelimited(code, i + 1, "(");
    if (!got) return null;
    body = got[0];
  } else if (lang === "perl" || lang === "ruby" || lang === "lua") {
    // Up to the end of the statement: ; newline } or a statement modifier.
    let j = i;
    let depth = 0;
    while (j < code.length) {
      const ch = code[j]!;
      if (ch === "'" || ch === '"') {
        const str = readString(code, j, lang);
        j = str ? str[1] : code.length;
        continue;
      }
      if (ch === "(" || ch === "[" || ch === "{") depth++;
      else if (ch === ")" || ch === "]" || ch === "}") {
        if (depth === 0) break;
        depth--;
      } else if ((ch === ";" || ch === "\n") && depth === 0) break;
      else if (depth === 0 && /^\s(?:if|unless|or|and|while|until|do)\b/.test(code.slice(j, j + 8))) break;
      j++;
    }
    body = code.slice(i, j);
    if (lang === "lua") body = body.trim();
  } else return null;
  return splitArgs(body, lang).map((a) => argument(a, lang));
}

function fill(template: readonly string[], args: readonly PayloadArgument[]): { argv: string[]; dynamic: boolean[] } {
  const argv: string[] = [];
  const dynamic: boolean[] = [];
  for (const part of template) {
    if (part === "{?}") {
      argv.push("$COMPUTED");
      dynamic.push(true);
      continue;
    }
    const m = /^\{(\d)\}$/.exec(part);
    if (!m) {
      argv.push(part);
      dynamic.push(false);
      continue;
    }
    const arg = args[Number(m[1])];
    if (!arg) {
      argv.push("$UNKNOWN");
      dynamic.push(true);
    } else if (arg.literal !== null) {
      argv.push(arg.literal);
      dynamic.push(false);
    } else {
      argv.push(arg.text || "$UNKNOWN");
      dynamic.push(true);
    }
  }
  return { argv, dynamic };
}

function runExec(args: readonly PayloadArgument[], from: number, via: string, out: PayloadAnalysis, shellFallback: boolean, language: PayloadLanguage): void {
  const first = args[from];
  if (!first) return;
  if (first.list) {
    if (first.list.length > 0) out.argvs.push({ argv: first.list, dynamic: first.list.map(() => false), via });
    return;
  }
  if (first.literal === null) {
    out.unanalysable.push(`${via} runs a command that is computed at run time: ${first.text.slice(0, 80)}`);
    return;
  }
  const second = args[from + 1];
  if (second?.list) {
    out.argvs.push({ argv: [first.literal, ...second.list], dynamic: [false, ...second.list.map(() => false)], via });
    return;
  }
  // `spawn("sh", ["-c", code])`: a list with computed elements is an argv with unknown words.
  const mixed = second ? mixedList(second.text, language) : null;
  if (mixed) {
    out.argvs.push({ argv: [first.literal, ...mixed.map((m) => m ?? "$COMPUTED")], dynamic: [false, ...mixed.map((m) => m === null)], via });
    return;
  }
  // Several arguments are an argv (`exec "/bin/sh", "-c", $ARGV[0]`); keyword arguments and option objects are not part of it.
  const positional = args.slice(from).filter((a) => !/^\s*(?:[A-Za-z_]\w*\s*=(?!=)|\{|:\w+\s*=>)/.test(a.text));
  if (positional.length > 1 && !shellFallback) {
    out.argvs.push({ argv: positional.map((a) => a.literal ?? "$COMPUTED"), dynamic: positional.map((a) => a.literal === null), via });
    return;
  }
  out.scripts.push({ text: first.literal, via });
}

/** Backticks and `qx`/`%x` in Perl, Ruby and PHP run their text with the shell. */
function backticks(code: string, lang: PayloadLanguage, out: PayloadAnalysis): void {
  if (lang !== "perl" && lang !== "ruby" && lang !== "php") return;
  const re = lang === "php" ? /`/g : /`|(?<![\w$@%])(?:qx|%x)\s*([^\w\s])/g;
  for (let m = re.exec(code); m; m = re.exec(code)) {
    // Skip backticks inside ordinary string literals.
    const before = code.slice(0, m.index);
    const singles = (before.match(/(?<!\\)'/g) ?? []).length;
    const doubles = (before.match(/(?<!\\)"/g) ?? []).length;
    if (singles % 2 === 1 || doubles % 2 === 1) continue;
    const got = m[0] === "`" ? readDelimited(code, m.index + 1, "`") : readDelimited(code, m.index + m[0].length, m[1]!);
    if (!got) continue;
    re.lastIndex = got[1];
    const body = got[0];
    const via = `${lang} ${m[0] === "`" ? "backticks" : m[0].trim()}`;
    if (/(?<!\\)[$@][\w{]|#\{/.test(body)) out.unanalysable.push(`${via} runs a command that is computed at run time: ${body.slice(0, 80)}`);
    else out.scripts.push({ text: body, via });
  }
}

/**
 * The code with the contents of string literals and comments blanked (same length), so that
 * call names are only found in code: `print("os.system(x)")` calls nothing.
 */
export function maskStrings(code: string, lang: PayloadLanguage): string {
  let out = "";
  let i = 0;
  const n = code.length;
  const hashComments = lang === "python" || lang === "perl" || lang === "ruby" || lang === "php";
  while (i < n) {
    const ch = code[i]!;
    if ((hashComments && ch === "#" && code[i - 1] !== "$" && !(lang === "ruby" && code[i - 1] === "\\")) || ((lang === "javascript" || lang === "php") && ch === "/" && code[i + 1] === "/") || (lang === "lua" && ch === "-" && code[i + 1] === "-")) {
      // Ruby `#{` inside strings never reaches here (strings are skipped whole).
      const end = code.indexOf("\n", i);
      const stop = end < 0 ? n : end;
      out += " ".repeat(stop - i);
      i = stop;
      continue;
    }
    if ((lang === "javascript" || lang === "php") && ch === "/" && code[i + 1] === "*") {
      const end = code.indexOf("*/", i + 2);
      const stop = end < 0 ? n : end + 2;
      out += " ".repeat(stop - i);
      i = stop;
      continue;
    }
    if (ch === "'" || ch === '"' || (ch === "`" && lang === "javascript")) {
      const str = readString(code, i, lang);
      const stop = str ? str[1] : n;
      out += ch + " ".repeat(Math.max(0, stop - i - 2)) + (stop - i >= 2 ? code[stop - 1] : "");
      i = stop;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}

/** Analyses a payload of the given language. */
export function analysePayload(code: string, lang: PayloadLanguage): PayloadAnalysis {
  const out: PayloadAnalysis = { scripts: [], argvs: [], findings: [], unanalysable: [] };
  const masked = maskStrings(code, lang);
  for (const p of PAYLOAD_PATTERNS) if (p.languages.includes(lang) && p.pattern.test(masked)) out.findings.push({ finding: p.finding, via: `${lang} payload` });
  for (const call of CALLS_BY_LANGUAGE.get(lang) ?? []) {
    if (call.requires && !call.requires.test(code)) continue;
    const re = call.callee;
    re.lastIndex = 0;
    for (let m = re.exec(masked); m; m = re.exec(masked)) {
      if (m[0].length === 0) re.lastIndex++;
      const via = `${lang} ${m[0].replace(/[\s(]+$/, "")}`;
      const args = readArguments(code, m.index + m[0].length, lang);
      if (!args || (args.length === 0 && !call.noArguments)) continue;
      const use = call.use;
      switch (use.kind) {
        case "shell": {
          const first = args[0]!;
          if (first.literal !== null) out.scripts.push({ text: first.literal, via });
          else if (first.list) out.argvs.push({ argv: first.list, dynamic: first.list.map(() => false), via });
          else out.unanalysable.push(`${via} runs a command that is computed at run time: ${first.text.slice(0, 80)}`);
          break;
        }
        case "exec":
          runExec(args, 0, via, out, /shell\s*[=:]\s*(?:True|true|1)/.test(args.map((a) => a.text).join(",")), lang);
          break;
        case "argv-from": {
          const rest = args.slice(use.from);
          if (rest.length === 1 && rest[0]!.list) out.argvs.push({ argv: rest[0]!.list, dynamic: rest[0]!.list.map(() => false), via });
          else if (rest.length > 0 && rest.every((a) => a.literal !== null)) {
            const argv = rest.map((a) => a.literal!);
            out.argvs.push({ argv, dynamic: argv.map(() => false), via });
          } else out.unanalysable.push(`${via} runs a command that is computed at run time`);
          break;
        }
        case "command": {
          if (use.when) {
            const a = args[use.when.arg];
            const text = a ? (a.literal ?? a.text) : "";
            if (!use.when.pattern.test(text)) break;
          }
          out.argvs.push({ ...fill(use.argv, args), via });
          break;
        }
        case "finding": {
          if (use.when) {
            const a = args[use.when.arg];
            if (!a || !use.when.pattern.test(a.text)) break;
          }
          out.findings.push({ finding: use.finding, via });
          break;
        }
      }
    }
  }
  backticks(code, lang, out);
  return out;
}
