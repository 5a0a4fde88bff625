/**
 * execute_code's name, the tools programs may call, and its limits: what its
 * schema (./schema.ts, built whenever tools are listed) needs, in a module
 * that does not load the runner (./run-code.ts, which re-exports these).
 */

/** The name of the tool that runs programs (it can never be called from one). */
export const EXECUTE_CODE_TOOL = "execute_code";

/** Tools a program may call, when they are registered and available. */
export const SANDBOX_TOOLS: readonly string[] = Object.freeze([
  "terminal",
  "read_file",
  "write_file",
  "patch",
  "search_files",
  "web_search",
  "web_extract",
]);

export const DEFAULT_CODE_TIMEOUT_SECONDS = 60;
export const MAX_CODE_TIMEOUT_SECONDS = 300;
/** Tool calls one program may make. */
export const DEFAULT_MAX_TOOL_CALLS = 50;
/** Output (stdout + stderr) kept, in characters. */
export const DEFAULT_CODE_OUTPUT_CHARS = 50_000;
/** Share of the output cap kept from the start; the rest comes from the end (where errors are). */
export const CODE_OUTPUT_HEAD_RATIO = 0.4;
