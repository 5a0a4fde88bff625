/**
 * The terminal tool's limits: what its schema (src/tools/terminal.ts, built
 * whenever tools are listed) and its handler (src/tools/handlers/terminal.ts, loaded on
 * the first command) both use.
 */

export const DEFAULT_TIMEOUT_SECONDS = 180;
export const MAX_FOREGROUND_TIMEOUT_SECONDS = 600;
export const DEFAULT_MAX_OUTPUT_CHARS = 50_000;
/** Share of the output cap kept from the start; the rest comes from the end. */
export const OUTPUT_HEAD_RATIO = 0.2;
