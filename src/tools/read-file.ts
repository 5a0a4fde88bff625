/**
 * The built-in `read_file` tool: a window of lines of a text file in the
 * task's environment, numbered like `cat -n`.
 *
 * Result shape (always a JSON object string):
 *   { "path", "content", "start_line", "end_line", "total_lines", "file_size",
 *     "truncated", "next_offset"?, "line_endings"?, "note"?, "error": null }
 *   or { "error": "..." }
 *
 * The work happens in src/files/read.ts, loaded on the first call; the file is
 * read by a script run with `env.exec` in the task's environment (local,
 * docker, ssh, ...), the same one its `terminal` calls use. See docs/file-tools.md.
 */

import { registry } from "../registry/singleton.js";
import type { FunctionSchema, ToolContext } from "../registry/types.js";
import { DEFAULT_READ_LIMIT, MAX_CONTENT_CHARS, MAX_LINE_CHARS, MAX_READ_LIMIT } from "../files/limits.js";
import { checkPathArgument, optionalInteger } from "../files/tool-args.js";
import { environmentSource, runToolBody, taskEnvironment, type FileToolHandlerOptions } from "../files/tool-runtime.js";
import { redactionSource } from "./handlers/lazy-redaction.js";
import { groupDigits } from "../util/format.js";

export const READ_FILE_SCHEMA: FunctionSchema = {
  name: "read_file",
  description: [
    "Read a text file in this task's environment (the machine or sandbox the terminal tool runs in). A relative path is resolved against the task's working directory (where the last `cd` in terminal left it); `~` is the environment's home directory.",
    `Returns up to \`limit\` lines (default ${DEFAULT_READ_LIMIT}, at most ${MAX_READ_LIMIT}) starting at line \`offset\` (1-based), each prefixed with its line number like \`cat -n\`: the number right-aligned in 6 columns, then a tab. The prefix is not part of the file; leave it out when you copy text into patch's old_string.`,
    `When "truncated" is true there are more lines: call again with offset set to "next_offset". Lines longer than ${groupDigits(MAX_LINE_CHARS)} characters are cut, and one call returns at most ${groupDigits(MAX_CONTENT_CHARS)} characters.`,
    "Secrets (private keys, tokens, passwords, API_KEY=... values) are shown as [REDACTED], on the same lines, so line numbers stay right; the file has the real values there.",
    "Binary files (images, archives, executables) and text that is not UTF-8 are refused with an error saying what they look like; a directory or a missing file gives an error (with similar names when there are some). Use search_files to find files.",
    'Returns JSON: {"path", "content", "start_line", "end_line", "total_lines", "file_size", "truncated", "next_offset"?, "redacted_lines"?, "note"?, "error": null}, or {"error": "..."}.',
  ].join("\n\n"),
  parameters: {
    type: "object",
    properties: {
      path: { type: "string", description: "The file to read: absolute, relative to the working directory, or starting with ~/." },
      offset: { type: "integer", minimum: 1, default: 1, description: "The first line to return (1-based). Default 1." },
      limit: {
        type: "integer",
        minimum: 1,
        maximum: MAX_READ_LIMIT,
        default: DEFAULT_READ_LIMIT,
        description: `How many lines to return. Default ${DEFAULT_READ_LIMIT}, at most ${MAX_READ_LIMIT}.`,
      },
    },
    required: ["path"],
    additionalProperties: false,
  },
};

export type ReadFileHandlerOptions = FileToolHandlerOptions;

/** Builds a read_file handler; the registered tool uses the defaults. */
export function createReadFileHandler(options: ReadFileHandlerOptions = {}) {
  const environments = environmentSource(options);
  const redact = redactionSource(options.redactOutput);
  return function read_file(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    return runToolBody("read_file", async () => {
      const a = args ?? {};
      const path = checkPathArgument(a.path);
      const offset = optionalInteger(a.offset, "offset", { min: 1, max: 2 ** 31 - 1, fallback: 1 });
      const limit = optionalInteger(a.limit, "limit", { min: 1, max: MAX_READ_LIMIT, fallback: DEFAULT_READ_LIMIT });
      const env = await taskEnvironment(environments, ctx);
      const { readWindow } = await import("../files/read.js");
      return readWindow(env, path, { offset, limit, redact: await redact(), signal: ctx?.signal, timeoutMs: options.commandTimeoutMs });
    });
  };
}

export const readFileHandler = createReadFileHandler();

registry.register({
  name: "read_file",
  toolset: "file",
  emoji: "📖",
  parallelSafe: true,
  description: "Read a window of lines of a text file in the task's environment, numbered like cat -n (binary files refused).",
  schema: READ_FILE_SCHEMA,
  handler: readFileHandler,
  timeoutMs: 5 * 60 * 1000,
  // The content is capped at 100,000 characters; room for JSON escaping so the registry never cuts the JSON.
  maxResultChars: 400_000,
  source: { kind: "builtin" },
});
