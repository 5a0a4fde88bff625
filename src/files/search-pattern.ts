/**
 * Search arguments made to mean the same to ripgrep and to the fallback
 * (`find` + `grep -E`).
 *
 * - File-name globs: `find -name` knows no `{a,b}`, so braces are expanded
 *   here into several globs (ripgrep gets the same list). Globs match file
 *   names only: a `/` is refused (narrow the directory with `path`).
 * - Regexes: the model writes ripgrep's (Rust) syntax. For `grep -E` the
 *   Perl-style classes `\d \D \s \S \w \W` are rewritten as POSIX bracket
 *   expressions (GNU grep lacks `\d`; BusyBox on musl lacks all of them).
 *   Lookaround and backreferences are refused up front, since ripgrep refuses
 *   them too (without `--pcre2`) and grep would misread them.
 */

import { FileToolError } from "./errors.js";

const MAX_GLOBS = 64;

/** `*.{ts,tsx}` → `*.ts`, `*.tsx` (nested braces too); text without braces comes back alone. */
export function expandBraces(glob: string): string[] {
  let depth = 0;
  let open = -1;
  const commas: number[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "{") {
      if (depth === 0) {
        open = i;
        commas.length = 0;
      }
      depth++;
    } else if (c === "," && depth === 1) commas.push(i);
    else if (c === "}" && depth > 0) {
      depth--;
      if (depth === 0 && commas.length > 0) {
        const before = glob.slice(0, open);
        const after = glob.slice(i + 1);
        const bounds = [open, ...commas, i];
        const out: string[] = [];
        for (let k = 0; k + 1 < bounds.length; k++) {
          for (const expanded of expandBraces(before + glob.slice(bounds[k]! + 1, bounds[k + 1]) + after)) {
            out.push(expanded);
            if (out.length > MAX_GLOBS) throw new FileToolError("invalid_args", `The glob ${JSON.stringify(glob)} expands to more than ${MAX_GLOBS} patterns.`);
          }
        }
        return [...new Set(out)];
      }
    }
  }
  return [glob];
}

/** Checks a file-name glob and expands its braces. */
export function nameGlobs(glob: string, argument: string): string[] {
  if (glob.includes("/")) {
    throw new FileToolError(
      "invalid_args",
      `${argument} matches file names only and must not contain "/" (got ${JSON.stringify(glob)}). Put the directory in path instead, e.g. path "src/app" with ${argument} "*.ts".`,
    );
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(glob)) throw new FileToolError("invalid_args", `${argument} must not contain control characters.`);
  return expandBraces(glob).filter((g) => g !== "");
}

const OUTSIDE: Readonly<Record<string, string>> = {
  d: "[0-9]",
  D: "[^0-9]",
  s: "[[:space:]]",
  S: "[^[:space:]]",
  w: "[[:alnum:]_]",
  W: "[^[:alnum:]_]",
};
const INSIDE: Readonly<Record<string, string>> = { d: "0-9", s: "[:space:]", w: "[:alnum:]_" };

/** Refuses regex features neither engine supports as the model means them. */
export function checkRegex(pattern: string): void {
  if (/\(\?<?[=!]/.test(pattern)) {
    throw new FileToolError("invalid_args", "Lookahead and lookbehind ((?=...), (?!...), (?<=...), (?<!...)) are not supported in pattern. Search for a simpler pattern and filter the results.");
  }
  if (/(^|[^\\])\\[1-9]/.test(pattern)) throw new FileToolError("invalid_args", "Backreferences (\\1 ... \\9) are not supported in pattern.");
}

/** `pattern` (ripgrep syntax) for `grep -E`. */
export function regexForGrep(pattern: string): string {
  let out = "";
  let inBracket = false;
  let bracketStart = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\" && i + 1 < pattern.length) {
      const next = pattern[i + 1]!;
      const table = inBracket ? INSIDE : OUTSIDE;
      out += table[next] ?? c + next;
      i++;
      continue;
    }
    if (!inBracket && c === "[") {
      inBracket = true;
      bracketStart = out.length + 1;
      out += c;
      if (pattern[i + 1] === "^") {
        out += "^";
        i++;
        bracketStart++;
      }
      // A `]` right after the opening is a literal member.
      if (pattern[i + 1] === "]") {
        out += "]";
        i++;
      }
      continue;
    }
    if (inBracket && c === "[" && pattern[i + 1] === ":") {
      const end = pattern.indexOf(":]", i + 2);
      if (end > 0) {
        out += pattern.slice(i, end + 2);
        i = end + 1;
        continue;
      }
    }
    if (inBracket && c === "]" && out.length > bracketStart) inBracket = false;
    out += c;
  }
  return out;
}
