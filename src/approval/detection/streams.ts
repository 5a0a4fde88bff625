/**
 * What flows through a pipe: the text when it is known without running
 * anything, and where it came from (the network, a decoder). Pure helpers;
 * the engine decides which program does what (rules/programs.ts).
 */
import type { DecodeKind } from "../rules/programs.js";

export interface Stream {
  /** The text, when known. */
  text: string | null;
  /** Part of it came from the network. */
  network: boolean;
  /** It was decoded or transformed from other text. */
  decoded: boolean;
  /** The programs it passed through, for a match's detail (`curl | base64`). */
  origin: string;
  /** It carries secrets (a credential file's content, the environment). Set only when true. */
  secret?: boolean;
  /** Its text is unknown, but it is a list of paths relative to the working directory (`git ls-files`). Set only when true. */
  relativePaths?: boolean;
}

export const EMPTY_STREAM: Stream = Object.freeze({ text: null, network: false, decoded: false, origin: "" }) as Stream;

const ESCAPES: Readonly<Record<string, string>> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", f: "\f", v: "\v", e: "\x1b", E: "\x1b", "\\": "\\" };

/** Backslash escapes as `echo -e` and printf's `%b` read them. */
export function echoEscapes(s: string): string {
  return s.replace(/\\(?:x([0-9a-fA-F]{1,2})|0([0-7]{0,3})|([0-7]{1,3})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|(.))/g, (whole, hex, oct0, oct, u4, u8, ch: string | undefined) => {
    if (hex) return String.fromCharCode(parseInt(hex, 16));
    if (oct0 !== undefined) return String.fromCharCode(parseInt(oct0 || "0", 8));
    if (oct) return String.fromCharCode(parseInt(oct, 8));
    if (u4) return String.fromCodePoint(parseInt(u4, 16));
    if (u8) return String.fromCodePoint(parseInt(u8, 16));
    if (ch !== undefined && ESCAPES[ch] !== undefined) return ESCAPES[ch]!;
    return whole;
  });
}

/** `echo [-neE] ARGS` output. */
export function echoOutput(args: readonly string[]): string {
  let i = 0;
  let newline = true;
  let escapes = false;
  while (i < args.length && /^-[neE]+$/.test(args[i]!)) {
    for (const c of args[i]!.slice(1)) {
      if (c === "n") newline = false;
      else if (c === "e") escapes = true;
      else escapes = false;
    }
    i++;
  }
  const text = args.slice(i).join(" ");
  return (escapes ? echoEscapes(text) : text) + (newline ? "\n" : "");
}

/** `printf FORMAT ARGS` output (the format is reused until the arguments run out). */
export function printfOutput(args: readonly string[]): string | null {
  let i = 0;
  if (args[0] === "-v") return "";
  if (args[0] === "--") i = 1;
  const format = args[i];
  if (format === undefined) return null;
  const rest = args.slice(i + 1);
  let out = "";
  let k = 0;
  let rounds = 0;
  do {
    let used = false;
    out += format.replace(/%(?:%|[-+ #0]*\d*(?:\.\d+)?([sbdiouxXcqfeEgG]))|\\(?:x[0-9a-fA-F]{1,2}|[0-7]{1,3}|u[0-9a-fA-F]{1,4}|.)/g, (whole, conv: string | undefined) => {
      if (whole === "%%") return "%";
      if (whole.startsWith("\\")) return echoEscapes(whole);
      used = true;
      const arg = rest[k++] ?? "";
      if (conv === "b") return echoEscapes(arg);
      if (conv === "c") return arg.slice(0, 1);
      if (conv && "diouxXfeEgG".includes(conv)) {
        const n = Number(arg);
        if (!Number.isFinite(n)) return "0";
        if (conv === "x") return Math.trunc(n).toString(16);
        if (conv === "X") return Math.trunc(n).toString(16).toUpperCase();
        if (conv === "o") return Math.trunc(n).toString(8);
        return String(conv === "d" || conv === "i" || conv === "u" ? Math.trunc(n) : n);
      }
      return arg;
    });
    if (!used) break;
    rounds++;
  } while (k < rest.length && rounds < 64);
  return out;
}

const B64_RE = /^[A-Za-z0-9+/=_\-\s]*$/;

/** Decodes with the given decoder, or null when it cannot be computed here. */
export function decode(kind: DecodeKind, text: string, trArgs?: readonly string[]): string | null {
  switch (kind) {
    case "base64": {
      const clean = text.replace(/\s+/g, "");
      if (!B64_RE.test(clean)) return null;
      return Buffer.from(clean.replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("latin1");
    }
    case "base32": {
      const clean = text.replace(/[\s=]+/g, "").toUpperCase();
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
      let bits = 0;
      let value = 0;
      let out = "";
      for (const ch of clean) {
        const idx = alphabet.indexOf(ch);
        if (idx < 0) return null;
        value = (value << 5) | idx;
        bits += 5;
        if (bits >= 8) {
          out += String.fromCharCode((value >>> (bits - 8)) & 0xff);
          bits -= 8;
        }
      }
      return out;
    }
    case "hex": {
      const clean = text.replace(/0x/gi, "").replace(/[^0-9a-fA-F]/g, "");
      if (clean.length % 2 !== 0) return null;
      return Buffer.from(clean, "hex").toString("latin1");
    }
    case "rev":
      return text
        .split("\n")
        .map((line) => [...line].reverse().join(""))
        .join("\n");
    case "tr":
      return trArgs ? translate(text, trArgs) : null;
    default:
      return null;
  }
}

function expandSet(set: string): string | null {
  let out = "";
  const s = echoEscapes(set);
  for (let i = 0; i < s.length; i++) {
    if (s[i] === "[" && s[i + 1] === ":") return null;
    if (i + 2 < s.length && s[i + 1] === "-") {
      const a = s.charCodeAt(i);
      const b = s.charCodeAt(i + 2);
      if (b < a) return null;
      for (let c = a; c <= b; c++) out += String.fromCharCode(c);
      i += 2;
    } else out += s[i];
  }
  return out;
}

/** `tr SET1 SET2` (plain translation only; options other than none return null). */
function translate(text: string, args: readonly string[]): string | null {
  if (args.length !== 2 || args.some((a) => a.startsWith("-"))) return null;
  const from = expandSet(args[0]!);
  const to = expandSet(args[1]!);
  if (from === null || to === null || to.length === 0) return null;
  const map = new Map<string, string>();
  for (let i = 0; i < from.length; i++) if (!map.has(from[i]!)) map.set(from[i]!, to[Math.min(i, to.length - 1)]!);
  let out = "";
  for (const ch of text) out += map.get(ch) ?? ch;
  return out;
}

/**
 * What `mktemp [-d] [-t] [-p DIR|--tmpdir[=DIR]] [TEMPLATE]` prints, with the random part
 * left as X: a name in the temporary directory (`/tmp` standing for `$TMPDIR`), or the
 * template in the working directory. Enough to tell where later writes to it go.
 */
export function mktempOutput(args: readonly string[]): string {
  let dir: string | null = null;
  let template: string | null = null;
  let inTmp = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-p" || a === "--tmpdir") {
      dir = args[i + 1] !== undefined && !args[i + 1]!.startsWith("-") ? args[++i]! : "/tmp";
    } else if (a.startsWith("--tmpdir=")) dir = a.slice("--tmpdir=".length);
    else if (/^-[dqtuV]+$/.test(a)) inTmp ||= a.includes("t");
    else if (!a.startsWith("-")) template = a;
  }
  const name = template ?? "tmp.XXXXXXXXXX";
  if (dir !== null) return `${dir.replace(/\/+$/, "")}/${name}\n`;
  return template === null || inTmp ? `/tmp/${name}\n` : `${name}\n`;
}

/**
 * What `date [+FORMAT]` prints, with every conversion as digits: enough to tell that
 * `backup-$(date +%Y%m%d).tgz` names no other directory. A format that could print a
 * slash (`%D`, `%x`, a literal `/`) is unknown (null).
 */
const dateOutputs = new Map<string, string | null>();

export function dateOutput(args: readonly string[]): string | null {
  const key = args.join("\0");
  if (dateOutputs.has(key)) return dateOutputs.get(key)!;
  const out = dateOutputOf(args);
  if (dateOutputs.size > 256) dateOutputs.clear();
  dateOutputs.set(key, out);
  return out;
}

function dateOutputOf(args: readonly string[]): string | null {
  const format = args.find((a) => a.startsWith("+"));
  if (args.some((a) => a.startsWith("-") && !/^-(?:u|-utc|-universal)$/.test(a))) return null;
  if (format === undefined) return "Thu Jan  1 00:00:00 UTC 1970\n";
  if (/\/|%[Dx]/.test(format)) return null;
  return format.slice(1).replace(/%[-_0^#]?\d*[a-zA-Z%]/g, (m) => (m.endsWith("%") ? "%" : "00")) + "\n";
}

/** Programs `printsRelativePaths` may say yes for. */
export const PATH_LISTERS: ReadonlySet<string> = new Set(["git", "grep", "egrep", "fgrep", "rg", "ag", "fd", "fdfind", "find", "ls"]);

/** Programs that pass the lines they read through, or some of them: a list of paths stays one. */
export const LINE_FILTERS: ReadonlySet<string> = new Set(["head", "tail", "sort", "uniq", "cat", "tee", "grep", "egrep", "fgrep", "rg"]);

/**
 * Does this command print paths relative to the working directory, one per line
 * (`git ls-files`, `git diff --name-only`, `grep -rl X src`, `find . -name …`, `fd`, `ls`)?
 * An absolute or home path among its operands, or an option that prints anything else, says no.
 */
export function printsRelativePaths(program: string, words: readonly { value: string; static: boolean }[]): boolean {
  if (!words.every((w) => w.static)) return false;
  const values = words.map((w) => w.value);
  const absolute = values.some((v) => v.startsWith("/") || v.startsWith("~") || v.startsWith(".."));
  if (absolute) return false;
  const has = (...flags: string[]): boolean => values.some((v) => flags.includes(v) || flags.some((f) => /^-[a-zA-Z]+$/.test(v) && f.length === 2 && v.includes(f[1]!) && !v.startsWith("--")));
  switch (program) {
    case "git": {
      const sub = values.find((v) => !v.startsWith("-"));
      if (sub === "ls-files") return !has("-s", "--stage", "--debug", "-t", "--format");
      if (sub === "diff" || sub === "show" || sub === "log" || sub === "ls-tree") return values.includes("--name-only");
      if (sub === "grep") return has("-l", "--name-only", "--files-with-matches");
      return false;
    }
    case "grep":
    case "egrep":
    case "fgrep":
    case "rg":
    case "ag":
      return has("-l", "-L", "--files-with-matches", "--files-without-match") || (program === "rg" && values.includes("--files"));
    case "fd":
    case "fdfind":
      return !has("-x", "-X", "--exec", "--exec-batch", "-a", "--absolute-path", "-l", "--list-details", "--format");
    case "find":
      return !values.some((v) => ["-printf", "-fprintf", "-exec", "-execdir", "-ok", "-okdir", "-ls", "-fls"].includes(v));
    case "ls":
      return !has("-l", "-d", "--directory", "-R");
    default:
      return false;
  }
}
