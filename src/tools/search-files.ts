/**
 * The built-in `search_files` tool: searches file contents (regex) or file
 * names (glob) in the task's environment, with ripgrep when it is installed
 * there and `find` + `grep -E` otherwise; one result shape either way.
 *
 * Result shape (always a JSON object string):
 *   content: { "engine", "path", "files": [{ "path", "lines": [{ "line", "text", "context"? }] }],
 *              "match_count", "truncated", "note"?, "warnings"?, "error": null }
 *   files:   { "engine", "path", "files": [path, ...], "count", "truncated", "note"?, "error": null }
 *   or { "error": "..." }
 *
 * The work happens in src/files/search.ts, loaded on the first call. See
 * docs/file-tools.md.
 */

import { registry } from "../registry/singleton.js";
import type { FunctionSchema, ToolContext } from "../registry/types.js";
import { DEFAULT_MAX_RESULTS, MAX_CONTEXT_LINES, MAX_MATCH_LINE_CHARS, MAX_MAX_RESULTS } from "../files/limits.js";
import { checkPathArgument, optionalBoolean, optionalChoice, optionalInteger, optionalString, requiredString } from "../files/tool-args.js";
import { environmentSource, runToolBody, taskEnvironment, type FileToolHandlerOptions } from "../files/tool-runtime.js";
import { redactionSource } from "./handlers/lazy-redaction.js";

export const SEARCH_FILES_SCHEMA: FunctionSchema = {
  name: "search_files",
  description: [
    'Search this task\'s environment: file contents by regular expression (target "content", the default) or file names by glob (target "files").',
    'Content: pattern is a regular expression (ripgrep syntax, e.g. "function\\s+\\w+", "TODO|FIXME"); results are grouped by file, with line numbers. glob limits the search to files whose name matches (e.g. "*.ts", "*.{js,jsx}"); context adds that many lines before and after each match (marked "context": true); ignore_case makes the match case-insensitive.',
    'Files: pattern is a glob matched against file names, not directories (e.g. "*.test.ts", "README*", "*config*"); the result lists matching paths.',
    `path is the directory (or single file) to search: default the task's working directory. .git and node_modules directories are skipped. If ripgrep is installed in the environment it is used, and files excluded by .gitignore are skipped too; otherwise find and grep -E are used ("engine" says which). Results are sorted by path and limited to max_results (default ${DEFAULT_MAX_RESULTS}, at most ${MAX_MAX_RESULTS}) matches or file names; "truncated": true means there are more. Matching lines longer than ${MAX_MATCH_LINE_CHARS} characters are cut; secrets in them (keys, tokens, passwords) are shown as [REDACTED].`,
    'Returns JSON (content): {"engine", "path", "files": [{"path", "lines": [{"line", "text", "context"?}]}], "match_count", "truncated", "error": null}; (files): {"engine", "path", "files": ["..."], "count", "truncated", "error": null}. Paths inside the working directory are relative to it.',
  ].join("\n\n"),
  parameters: {
    type: "object",
    properties: {
      pattern: {
        type: "string",
        description: 'target "content": the regular expression to search for. target "files": the file-name glob, e.g. "*.py".',
      },
      target: { type: "string", enum: ["content", "files"], default: "content", description: 'What to search: "content" (default) or "files" (names).' },
      path: { type: "string", description: "Directory or file to search. Default: the working directory." },
      glob: { type: "string", description: 'Content search only: search only files whose name matches this glob, e.g. "*.ts" or "*.{c,h}".' },
      ignore_case: { type: "boolean", default: false, description: "Case-insensitive matching. Default false." },
      context: {
        type: "integer",
        minimum: 0,
        maximum: MAX_CONTEXT_LINES,
        default: 0,
        description: `Content search: lines of context before and after each match (0-${MAX_CONTEXT_LINES}). Default 0.`,
      },
      max_results: {
        type: "integer",
        minimum: 1,
        maximum: MAX_MAX_RESULTS,
        default: DEFAULT_MAX_RESULTS,
        description: `At most this many matches (content) or paths (files). Default ${DEFAULT_MAX_RESULTS}.`,
      },
    },
    required: ["pattern"],
    additionalProperties: false,
  },
};

export interface SearchFilesHandlerOptions extends FileToolHandlerOptions {
  /** `rg` only, the `find`/`grep` fallback only, or (default) ripgrep when the environment has it. */
  engine?: "auto" | "rg" | "fallback";
}

/** Builds a search_files handler; the registered tool uses the defaults. */
export function createSearchFilesHandler(options: SearchFilesHandlerOptions = {}) {
  const environments = environmentSource(options);
  const redact = redactionSource(options.redactOutput);
  return function search_files(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    return runToolBody("search_files", async () => {
      const a = args ?? {};
      const pattern = requiredString(a.pattern, "pattern");
      const target = optionalChoice(a.target, "target", ["content", "files"] as const, "content");
      const path = a.path === undefined || a.path === null || a.path === "" ? "." : checkPathArgument(a.path);
      const glob = optionalString(a.glob, "glob");
      const ignoreCase = optionalBoolean(a.ignore_case, "ignore_case", false);
      const context = optionalInteger(a.context, "context", { min: 0, max: MAX_CONTEXT_LINES, fallback: 0 });
      const maxResults = optionalInteger(a.max_results, "max_results", { min: 1, max: MAX_MAX_RESULTS, fallback: DEFAULT_MAX_RESULTS });
      const env = await taskEnvironment(environments, ctx);
      const { searchFiles } = await import("../files/search.js");
      return searchFiles(env, {
        pattern,
        target,
        path,
        glob,
        ignoreCase,
        context,
        maxResults,
        engine: options.engine,
        redact: await redact(),
        signal: ctx?.signal,
        timeoutMs: options.commandTimeoutMs,
      });
    });
  };
}

export const searchFilesHandler = createSearchFilesHandler();

registry.register({
  name: "search_files",
  toolset: "file",
  emoji: "🔎",
  parallelSafe: true,
  description: "Search file contents (regex) or names (glob) in the task's environment; ripgrep when installed, else find + grep.",
  schema: SEARCH_FILES_SCHEMA,
  handler: searchFilesHandler,
  timeoutMs: 5 * 60 * 1000,
  maxResultChars: 400_000,
  source: { kind: "builtin" },
});
