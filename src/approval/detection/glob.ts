/**
 * Bash patterns (`*`, `?`, `[…]`, `[!…]`, `\x`) as regular expressions. Pathname
 * expansion never lets a wildcard match a slash; pattern matching in parameter
 * expansion (the `%`, `#` and `/` operators) does.
 */
export function patternSource(pattern: string, pathname: boolean): string {
  const any = pathname ? "[^/]" : "[\\s\\S]";
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "*") re += `${any}*`;
    else if (ch === "?") re += any;
    else if (ch === "[") {
      const close = pattern.indexOf("]", i + 2);
      if (close < 0) re += "\\[";
      else {
        let body = pattern.slice(i + 1, close);
        if (body.startsWith("!")) body = "^" + body.slice(1);
        re += "[" + body.replace(/\\/g, "\\\\") + "]";
        i = close;
      }
    } else if (ch === "\\" && i + 1 < pattern.length) re += escape(pattern[++i]!);
    else re += escape(ch);
  }
  return re;
}

function escape(ch: string): string {
  return ch.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** A whole-string matcher for a pathname glob. */
export function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${patternSource(glob, true)}$`);
}
