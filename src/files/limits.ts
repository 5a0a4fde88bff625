/**
 * The file tools' limits, in one place: the tool modules put them in the
 * model-facing descriptions at load time, without loading the operations.
 */

/** read_file: lines returned when `limit` is not given, and the largest `limit`. */
export const DEFAULT_READ_LIMIT = 500;
export const MAX_READ_LIMIT = 2000;
/** read_file: lines longer than this are cut in what it shows. */
export const MAX_LINE_CHARS = 2000;
/** read_file: characters one call returns at most (the numbered content). */
export const MAX_CONTENT_CHARS = 100_000;
/** read_file: bytes of the file one call fetches from the environment at most. */
export const WINDOW_BYTES = 256 * 1024;
/** patch: the largest file it edits (it reads and rewrites the whole file). */
export const MAX_PATCH_BYTES = 10 * 1024 * 1024;
/** write_file: the largest content it accepts. */
export const MAX_WRITE_BYTES = 64 * 1024 * 1024;
/**
 * Writes: the longest command, in bytes, a backend takes. Linux refuses a
 * single argv string over 128 KiB (MAX_ARG_STRLEN), and on every backend the
 * command is one such string somewhere (bash's `$1`, ssh's remote command
 * line); Modal's SDK takes less than 64 KiB for a whole exec.
 */
export const DEFAULT_COMMAND_LIMIT = 128 * 1024;
export const COMMAND_LIMITS: Readonly<Record<string, number>> = { modal: 64 * 1024 };
/** Writes: room left in that limit for the backend's own wrapper script around the command (about 4 KiB today). */
export const WRAPPER_ALLOWANCE = 8 * 1024;
/** search_files: results when `max_results` is not given, and the largest `max_results`. */
export const DEFAULT_MAX_RESULTS = 50;
export const MAX_MAX_RESULTS = 500;
/** search_files: the largest `context`. */
export const MAX_CONTEXT_LINES = 10;
/** search_files: characters of a matching line shown. */
export const MAX_MATCH_LINE_CHARS = 500;
/** Default time limit of each command a file tool runs in the environment. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 60_000;
