/**
 * A work-around for tree-sitter-bash 0.25, which fails on common heredoc lines:
 *
 *   cat <<EOF > f; chmod +x f        (`;` or `&` after a heredoc on its line)
 *   cat <<EOF&&x                     (an operator right after the delimiter)
 *
 * When a parse has errors and the text has `<<`, the parser retries once with
 * those lines rewritten: the delimiter gets a blank after it and each `;` or
 * `&` separator becomes ` && ` (the model lists every pipeline whatever joins
 * them, so this changes nothing it records). Heredoc bodies, quotes and
 * substitutions are copied unchanged. The retry is used only if it parses
 * without errors.
 */

import { closingDoubleQuote, findClosing, findClosingBacktick } from "./words.js";

const DELIMITER_END = /[\s;&|<>()]/;

/** The rewritten text, or null when there is nothing to rewrite (or it cannot be read safely). */
export function separateHeredocLines(src: string): string | null {
  const n = src.length;
  let out = "";
  let changed = false;
  let i = 0;
  let pending: { delimiter: string; stripTabs: boolean }[] = [];
  let atWordStart = true;
  while (i < n) {
    const c = src[i]!;
    let skipTo = -1;
    if (c === "\\") skipTo = Math.min(i + 2, n);
    else if (c === "'") skipTo = src.indexOf("'", i + 1) + 1;
    else if (c === '"') skipTo = closingDoubleQuote(src, i + 1) + 1;
    else if (c === "`") skipTo = findClosingBacktick(src, i + 1) + 1;
    else if (c === "$" && src[i + 1] === "(") skipTo = findClosing(src, i + 1, "(", ")") + 1;
    else if (c === "#" && atWordStart) {
      const eol = src.indexOf("\n", i);
      skipTo = eol < 0 ? n : eol;
    }
    if (skipTo !== -1) {
      if (skipTo <= i) return null; // unterminated quote or substitution: leave it to the parser
      out += src.slice(i, skipTo);
      i = skipTo;
      atWordStart = false;
      continue;
    }

    if (c === "<" && src.startsWith("<<", i) && src[i + 2] !== "<") {
      const op = src[i + 2] === "-" ? "<<-" : "<<";
      out += op;
      i += op.length;
      while (i < n && (src[i] === " " || src[i] === "\t")) out += src[i++];
      const start = i;
      while (i < n && !DELIMITER_END.test(src[i]!)) {
        if (src[i] === "'" || src[i] === '"') {
          const close = src[i] === "'" ? src.indexOf("'", i + 1) : closingDoubleQuote(src, i + 1);
          if (close < 0) return null;
          i = close + 1;
        } else if (src[i] === "\\") i += 2;
        else i++;
      }
      const raw = src.slice(start, Math.min(i, n));
      if (raw === "") return null;
      out += raw;
      if (i < n && !/\s/.test(src[i]!)) {
        out += " ";
        changed = true;
      }
      pending.push({ delimiter: raw.replace(/['"\\]/g, ""), stripTabs: op === "<<-" });
      atWordStart = true;
      continue;
    }

    if (pending.length > 0 && (c === ";" || c === "&")) {
      const next = src[i + 1];
      const prev = src[i - 1];
      // Leave `;;`, `;&`, `;;&`, `&&`, `&>`, `>&`, `<&`, `|&` alone.
      const partOfOperator =
        prev === ";" ||
        (c === ";" && (next === ";" || next === "&")) ||
        (c === "&" && (next === "&" || next === ">" || prev === ">" || prev === "<" || prev === "|" || prev === "&"));
      if (!partOfOperator) {
        const eol = src.indexOf("\n", i);
        const rest = src.slice(i + 1, eol < 0 ? n : eol);
        out += /^\s*(#.*)?$/.test(rest) ? " " : " && ";
        changed = true;
        i++;
        atWordStart = true;
        continue;
      }
    }

    if (c === "\n") {
      out += c;
      i++;
      // The bodies of this line's heredocs follow, in order: copy them as they are.
      for (const h of pending) {
        for (;;) {
          if (i >= n) return changed ? out : null;
          const eol = src.indexOf("\n", i);
          const line = src.slice(i, eol < 0 ? n : eol);
          out += line;
          i += line.length;
          if (eol >= 0) {
            out += "\n";
            i++;
          }
          if ((h.stripTabs ? line.replace(/^\t+/, "") : line) === h.delimiter) break;
        }
      }
      pending = [];
      atWordStart = true;
      continue;
    }

    out += c;
    i++;
    atWordStart = /\s|[;&|()]/.test(c);
  }
  return changed ? out : null;
}
