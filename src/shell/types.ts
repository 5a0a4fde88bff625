/**
 * The shell model the command-safety gate reasons about: what bash would run,
 * not the raw text. Produced by `parseShell` (src/shell/parser.ts) from the
 * tree-sitter-bash syntax tree; consumed by detection (src/approval/detection/).
 * See docs/shell-parsing.md.
 *
 * Optional fields marked "set only when true/non-empty" are filled by the
 * parser only in that case, so hand-written fixtures without them stay valid.
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
  /**
   * Command substitutions (`$(…)`, backticks) and process substitutions inside the word, parsed,
   * wherever they sit in it (inside `"…"`, `${x:-$(…)}`, `$(( $(…) ))`, an assignment's subscript).
   */
  substitutions: Substitution[];
  /**
   * The word has an unquoted brace expansion (`{a,b}`, `{1..3}`): bash turns it into several
   * words. `value` keeps the braces as written. Set only when true.
   */
  braceExpansion?: boolean;
  /**
   * How a word that is not static is made, piece by piece, so that expansions can be put in and
   * split (by `IFS`) the way bash does: only unquoted expansions are split. Set only when the
   * word is not static (and absent on words made by hand).
   */
  parts?: WordPart[];
  /** The word starts with an unquoted `~` (home directory); `value` keeps it as written. Set only when true. */
  tilde?: boolean;
  /** The word has unquoted glob characters (`*`, `?`, `[…]`) that bash may expand. Set only when true. */
  glob?: boolean;
}

/** One piece of a word that is not static (see `Word.parts`). */
export type WordPart =
  /** Text as bash passes it (quotes removed, escapes resolved). */
  | { kind: "text"; text: string }
  /** A parameter or arithmetic expansion as written (`$x`, `${a[@]}`, `${x:-y}`, `$((1+2))`); `quoted` inside `"…"`. */
  | { kind: "expansion"; raw: string; quoted: boolean }
  /** The output of `Word.substitutions[index]`. */
  | { kind: "substitution"; index: number; quoted: boolean };

export interface Substitution {
  kind: "command" | "process_in" | "process_out";
  script: Script;
}

export interface Redirect {
  /**
   * `>`, `>>`, `>|`, `<`, `<>`, `&>`, `&>>`, `>&`, `<&`, `<<`, `<<-`, `<<<`. Closing a
   * descriptor (`>&-`, `<&-`) is `>&` / `<&` with the target `-`.
   */
  operator: string;
  /** The file descriptor written before the operator (`2>` → 2), when there is one. */
  fd?: number;
  /**
   * The file name (or descriptor number for `>&`, `<&`), the here-string word (`<<<`), or the
   * heredoc delimiter (`raw` as written, `value` without quotes: `'EOF'` → `EOF`).
   */
  target: Word;
  /** A heredoc's body, when the redirect is one. `bodyStatic` is false when it contains expansions (unquoted delimiter). */
  heredoc?: {
    /**
     * The text the command reads: for a quoted delimiter (`<<'EOF'`) the lines as written; for an
     * unquoted one with `\$`, `\``, `\\` and line continuations resolved and expansions kept as
     * written. `<<-` strips leading tabs. Includes the final newline.
     */
    body: string;
    bodyStatic: boolean;
    /**
     * Command substitutions (`$(…)`, backticks) in an unquoted heredoc body: bash runs them
     * while reading the body. Set only when non-empty.
     */
    substitutions?: Substitution[];
  };
}

/** `NAME=value`, `NAME+=value`, `NAME=(a b c)`, `NAME[i]=value`. */
export interface Assignment {
  /** The variable name as written, with a subscript when there is one (`a[1]`). */
  name: string;
  /** The value; for an array, the whole `(…)` text as one word. */
  value: Word;
  /** `+=`: appends to the current value. Set only when true. */
  append?: true;
  /** `NAME=(…)`: the array's elements as words. Set only for arrays. */
  elements?: Word[];
}

/** A command with a name and arguments: `VAR=x sudo rm -rf dir > log`. */
export interface SimpleCommand {
  kind: "simple";
  /** Assignments before the command name. */
  assignments: Assignment[];
  /**
   * The command name and its arguments; empty for a bare assignment or redirect. Keywords of
   * declarations are the name (`export A=1` → `export`, `A=1`).
   */
  argv: Word[];
  redirects: Redirect[];
  /** Source text of the command (with its redirects; without a heredoc's body). */
  text: string;
}

/** Subshells, groups, loops, conditionals, function definitions, `[[ … ]]` tests. */
export interface CompoundCommand {
  kind: "compound";
  type: "subshell" | "group" | "if" | "for" | "while" | "until" | "case" | "function" | "test" | "arithmetic" | "other";
  /**
   * The command lists the compound runs (a loop body, each branch of an `if` or `case`, a function body).
   * Conditions are bodies too, in source order: `if`: [condition, then, elif condition, elif then, …, else];
   * `while`/`until`: [condition, body]; `case`: one per item.
   */
  bodies: Script[];
  /**
   * Words the compound evaluates itself: a `for` list, a `case` subject then every pattern, the operands
   * of a test (`[[ … ]]`, `[ … ]`), the expressions of `((…))` and `for ((…))` (not static).
   */
  words: Word[];
  redirects: Redirect[];
  text: string;
  /** A function definition's name (`type: "function"` only). */
  name?: string;
}

export type Command = SimpleCommand | CompoundCommand;

/** Commands joined by `|` (or `|&`): each one's stdout feeds the next one's stdin. */
export interface Pipeline {
  commands: Command[];
  /** `!` in front. */
  negated: boolean;
  text: string;
  /** It runs only if an earlier `&&`/`||` operand lets it (`a && b`: b). Set only when true. */
  conditional?: true;
  /** It runs in the background (`a &`), in a subshell of its own. Set only when true. */
  background?: true;
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
