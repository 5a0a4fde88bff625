/**
 * The engine's working shapes: an argument after word resolution, and a
 * command's arguments after option parsing.
 */
import type { Word } from "../../shell/types.js";

/** One argument as bash would pass it, as far as it is known. */
export interface Arg {
  /** The resolved value (quotes removed); expansions that need running something stay as written. */
  value: string;
  /** True when `value` is exactly what the program receives. */
  static: boolean;
  /** An unquoted expansion (`$OPTS`): may split into several words, and so may hide options. */
  splittable: boolean;
  /** The word it came from (for its substitutions), when there is one. */
  word: Word | null;
  /** Part of it is the output of a substitution that fetched from the network. */
  network?: boolean;
  /** Part of it is the output of a substitution that decoded or transformed text. */
  decoded?: boolean;
  /** It holds secrets read from a stream (xargs input from a credential file). */
  secret?: boolean;
}

/** A command's arguments after its option model is applied. */
export interface ParsedArgs {
  program: string;
  /** Subcommand words, in order (`docker compose down` → `compose`, `down`). */
  subcommands: string[];
  /** Canonical option → its values in order (a flag has none). */
  options: Map<string, Arg[]>;
  operands: Arg[];
  /** An unquoted expansion sat where options are read: it may hold any option. */
  dynamic: boolean;
  /**
   * For `posix`-style parsing: the index (into the arguments given to the parser)
   * of the first operand that ended option parsing, or -1. Wrappers use it to find
   * the command they run.
   */
  rest: number;
  /** `find` actions that run a command: the primary (`-exec`, `-execdir`, `-ok`, `-okdir`) and its words up to `;`/`+`. */
  execs: { primary: string; args: Arg[] }[];
}

export function staticArg(value: string): Arg {
  return { value, static: true, splittable: false, word: null };
}
