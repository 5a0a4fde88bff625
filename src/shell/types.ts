/**
 * The shell model the command-safety gate reasons about: what bash would run,
 * not the raw text. Produced by `parseShell` (src/shell/parse.ts) from the
 * tree-sitter-bash syntax tree; consumed by detection (src/approval/detection/).
 */

/** A word after bash-style quote and escape removal. */
export interface Word {
  /** The word as written in the source. */
  raw: string;
  /**
   * What bash would pass as the argument: quotes removed, backslash escapes and
   * `$'…'` ANSI-C escapes resolved, adjacent pieces joined (`r''m` → `rm`).
   * Parts that need running something (parameter expansions, command or
   * process substitutions, arithmetic) stay as written, and `static` is false.
   * Glob characters are kept as-is (`/*` stays `/*`).
   */
  value: string;
  /** True when `value` is fully known without running anything. */
  static: boolean;
  /** Command substitutions (`$(…)`, backticks) and process substitutions inside the word, parsed. */
  substitutions: Substitution[];
}

export interface Substitution {
  kind: "command" | "process_in" | "process_out";
  script: Script;
}

export interface Redirect {
  /** `>`, `>>`, `>|`, `<`, `<>`, `&>`, `&>>`, `>&`, `<&`, `<<`, `<<-`, `<<<`. */
  operator: string;
  /** The file descriptor written before the operator (`2>` → 2), when there is one. */
  fd?: number;
  /** The file name, the here-string word (`<<<`), or the heredoc delimiter. */
  target: Word;
  /** A heredoc's body, when the redirect is one. `bodyStatic` is false when it contains expansions (unquoted delimiter). */
  heredoc?: { body: string; bodyStatic: boolean };
}

/** A command with a name and arguments: `VAR=x sudo rm -rf dir > log`. */
export interface SimpleCommand {
  kind: "simple";
  /** Assignments before the command name. */
  assignments: { name: string; value: Word }[];
  /** The command name and its arguments; empty for a bare assignment or redirect. */
  argv: Word[];
  redirects: Redirect[];
  /** Source text of the command. */
  text: string;
}

/** Subshells, groups, loops, conditionals, function definitions, `[[ … ]]` tests. */
export interface CompoundCommand {
  kind: "compound";
  type: "subshell" | "group" | "if" | "for" | "while" | "until" | "case" | "function" | "test" | "arithmetic" | "other";
  /** The command lists the compound runs (a loop body, each branch of an `if` or `case`, a function body). */
  bodies: Script[];
  /** Words the compound evaluates itself: a `for` list, a `case` subject, the operands of a test. */
  words: Word[];
  redirects: Redirect[];
  text: string;
}

export type Command = SimpleCommand | CompoundCommand;

/** Commands joined by `|` (or `|&`): each one's stdout feeds the next one's stdin. */
export interface Pipeline {
  commands: Command[];
  /** `!` in front. */
  negated: boolean;
  text: string;
}

/** A command list: pipelines joined by `;`, `&&`, `||`, `&` or newlines. Every pipeline may run. */
export interface Script {
  pipelines: Pipeline[];
  text: string;
}

export interface ParseOptions {
  /** Wall-clock budget for parsing in milliseconds (default 50). */
  timeBudgetMs?: number;
  /** Deepest nesting of substitutions and compounds that is modelled (default 16). */
  maxDepth?: number;
  /** Longest source accepted in characters (default 64 KiB). */
  maxLength?: number;
}

export interface ParseResult {
  script: Script;
  /**
   * Why the model is incomplete: syntax errors (with the offending text), the
   * time budget or the depth limit exceeded, input too long. Empty when the
   * whole command was modelled. A non-empty list makes the command unanalysable.
   */
  problems: string[];
}
