/**
 * Shell parsing for the command-safety gate: bash text → `Script` model.
 * See docs/shell-parsing.md.
 */

export type * from "./types.js";
export { initShellParser, isShellParserReady, parseShell, parseShellAsync, SHELL_PARSE_DEFAULTS, withoutShellGrammar } from "./parser.js";
export { decodeAnsiC } from "./words.js";
