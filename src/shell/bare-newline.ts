/**
 * tree-sitter-bash sometimes drops a newline and reads the next line as more
 * arguments of the command before it (`… | head⏎rm -rf /` became `head rm -rf /`).
 * A simple command's own text never holds a newline outside quotes,
 * substitutions or a backslash continuation, so finding one means the model
 * is wrong, and the command is reported as unanalysable rather than trusted.
 */
import { closingDoubleQuote, findClosing, findClosingBacktick } from "./words.js";

export function hasBareNewline(text: string): boolean {
  // Heredoc bodies legitimately follow a newline; those commands are left to the heredoc handling.
  if (!text.includes("\n") || text.includes("<<")) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    let skipTo = i;
    if (c === "\\") skipTo = i + 1;
    else if (c === "'") skipTo = text.indexOf("'", i + 1);
    else if (c === '"') skipTo = closingDoubleQuote(text, i + 1);
    else if (c === "`") skipTo = findClosingBacktick(text, i + 1);
    else if (c === "(" || c === "{") skipTo = findClosing(text, i, c, c === "(" ? ")" : "}");
    else if (c === "\n") return true;
    // An unclosed quote or bracket is the parser's problem to report, not a joined line.
    if (skipTo < 0) return false;
    i = skipTo;
  }
  return false;
}
