/**
 * The built-in `patch` tool: replaces an exact, unique piece of text in a
 * file of the task's environment and returns the change as a unified diff.
 *
 * Result shape (always a JSON object string):
 *   { "path", "replacements", "lines", "diff", "error": null }
 *   or { "error": "...", "status"?: "blocked" }
 *
 * A miss explains the closest places (line numbers, what differs); several
 * matches are listed by line. Writes go through the approval gate like
 * write_file's. The work happens in src/files/patch.ts, loaded on the first
 * call. See docs/file-tools.md.
 */

import { registry } from "../registry/singleton.js";
import type { FunctionSchema, ToolContext } from "../registry/types.js";
import { MAX_PATCH_BYTES } from "../files/limits.js";
import { checkPathArgument, optionalBoolean, requiredString } from "../files/tool-args.js";
import {
  environmentSource,
  gateSource,
  runToolBody,
  writeTarget,
  type FileToolHandlerOptions,
} from "../files/tool-runtime.js";
import { redactionSource } from "./handlers/lazy-redaction.js";

export const PATCH_SCHEMA: FunctionSchema = {
  name: "patch",
  description: [
    "Edit a file in this task's environment by replacing text: old_string must occur in the file exactly once — character for character, including indentation and whitespace — and is replaced by new_string. With replace_all set to true, every occurrence is replaced (there must be at least one).",
    "Copy old_string from read_file's output without the line-number prefixes, and include enough surrounding lines to make it unique. If it is not found, the error shows the most similar places with their line numbers and what differs (indentation, whitespace, quotes); if it occurs more than once, the error gives the line of each occurrence.",
    `In a file with CRLF line endings, line breaks in old_string and new_string stand for CRLF. The file is rewritten atomically, keeps its permissions, and is only written if nothing else changed it since it was read. Files over ${MAX_PATCH_BYTES / (1024 * 1024)} MiB are refused. Risky targets (system, credential and shell start-up files) need the user's approval like write_file; a refused edit comes back with "status": "blocked".`,
    'Returns JSON: {"path", "replacements", "lines" (line of each replacement), "diff" (unified diff of the change, secrets shown as [REDACTED]), "error": null}, or {"error": "..."}.',
  ].join("\n\n"),
  parameters: {
    type: "object",
    properties: {
      path: { type: "string", description: "The file to edit: absolute, relative to the working directory, or starting with ~/." },
      old_string: { type: "string", description: "The exact text to replace (not empty)." },
      new_string: { type: "string", description: "The text to put in its place (may be empty to delete old_string)." },
      replace_all: { type: "boolean", default: false, description: "Replace every occurrence instead of requiring exactly one. Default false." },
    },
    required: ["path", "old_string", "new_string"],
    additionalProperties: false,
  },
};

export interface PatchHandlerOptions extends FileToolHandlerOptions {
  /** Base64 characters sent per environment command when the file is written back. Default: as many as the backend allows. */
  chunkChars?: number;
}

/** Builds a patch handler; the registered tool uses the defaults. */
export function createPatchHandler(options: PatchHandlerOptions = {}) {
  const environments = environmentSource(options);
  const gate = gateSource(options);
  const redact = redactionSource(options.redactOutput);
  return function patch(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    return runToolBody("patch", async () => {
      const a = args ?? {};
      const path = checkPathArgument(a.path);
      const oldString = requiredString(a.old_string, "old_string");
      const newString = requiredString(a.new_string, "new_string");
      const replaceAll = optionalBoolean(a.replace_all, "replace_all", false);
      const [{ env, approve }, { patchFile }] = await Promise.all([writeTarget(environments, gate, ctx, "patch"), import("../files/patch.js")]);
      return patchFile(env, path, oldString, newString, replaceAll, {
        approve,
        redact: await redact(),
        chunkChars: options.chunkChars,
        signal: ctx?.signal,
        timeoutMs: options.commandTimeoutMs,
      });
    });
  };
}

export const patchHandler = createPatchHandler();

registry.register({
  name: "patch",
  toolset: "file",
  emoji: "🩹",
  parallelSafe: false,
  description: "Replace an exact, unique piece of text in a file of the task's environment; explains near misses; returns a unified diff.",
  schema: PATCH_SCHEMA,
  handler: patchHandler,
  timeoutMs: 20 * 60 * 1000,
  maxResultChars: 100_000,
  source: { kind: "builtin" },
});
