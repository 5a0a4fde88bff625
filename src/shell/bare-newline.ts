/**
 * tree-sitter-bash sometimes drops a newline and reads the next line as more
 * arguments of the command before it (`… | head⏎rm -rf /` became `head rm -rf /`).
 * A simple command's own text never holds a newline outside quotes,
 * substitutions or a backslash continuation, so finding one means the model
 * is wrong, and the command is reported as unanalysable rather than trusted.
 */
export function hasBareNewline(text: string): boolean {
  // Heredoc bodies legitimately follow a newline; those commands are left to the heredoc handling.
  if (text.includes("<<")) return false;
  let quote: "'" | '"' | "`" | null = null;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\\" && quote !== "'") {
      i++;
      continue;
    }
    if (quote !== null) {
      if (c === quote) quote = null;
      else if (quote === '"' && c === "$" && text[i + 1] === "(") {
        depth++;
        i++;
      }
      continue;
    }
    if (c === "'" || c === '"' || c === "`") quote = c;
    else if (c === "(" || c === "{") depth++;
    else if ((c === ")" || c === "}") && depth > 0) depth--;
    else if (c === "\n" && depth === 0) return true;
  }
  return false;
}
