/**
 * The built-in `write_file` tool: writes a whole file in the task's
 * environment, atomically, after the approval gate agreed (writes to system,
 * credential and shell start-up files need approval like the terminal command
 * `tee PATH` would).
 *
 * Result shape (always a JSON object string):
 *   { "path", "bytes_written", "created", "error": null }
 *   or { "error": "...", "status"?: "blocked" }
 *
 * The work happens in src/files/write.ts, loaded on the first call. See
 * docs/file-tools.md.
 */

import { registry } from "../registry/singleton.js";
import type { FunctionSchema, ToolContext } from "../registry/types.js";
import { checkPathArgument, requiredString } from "../files/tool-args.js";
import {
  environmentSource,
  gateSource,
  runToolBody,
  writeTarget,
  type FileToolHandlerOptions,
} from "../files/tool-runtime.js";

export const WRITE_FILE_SCHEMA: FunctionSchema = {
  name: "write_file",
  description: [
    "Write a file in this task's environment: replaces the whole file if it exists, creates it (and missing parent directories) if not. To change part of an existing file, use patch instead.",
    "content is written exactly as given, as UTF-8; no newline is added at the end. The write is atomic: the content goes to a temporary file in the same directory, which then replaces the file in one step, so nobody sees it half-written and a failed write leaves the old file as it was. An existing file keeps its permissions. Writing through a symbolic link changes the file it points to.",
    "Paths resolve like read_file's (relative to the task's working directory, ~ is home). Writing system files, credentials (~/.ssh, /etc/passwd, ...) or shell start-up files (~/.bashrc, ...) needs the user's approval, exactly like the equivalent terminal command; a refused write comes back with \"status\": \"blocked\" — do not try to get around it another way.",
    'Returns JSON: {"path", "bytes_written", "created", "error": null}, or {"error": "...", "status"?: "blocked"}.',
  ].join("\n\n"),
  parameters: {
    type: "object",
    properties: {
      path: { type: "string", description: "The file to write: absolute, relative to the working directory, or starting with ~/." },
      content: { type: "string", description: "The complete new content of the file." },
    },
    required: ["path", "content"],
    additionalProperties: false,
  },
};

export interface WriteFileHandlerOptions extends FileToolHandlerOptions {
  /** Base64 characters sent per environment command. Default: as many as the backend's command limit allows (tests use small values). */
  chunkChars?: number;
}

/** Builds a write_file handler; the registered tool uses the defaults. */
export function createWriteFileHandler(options: WriteFileHandlerOptions = {}) {
  const environments = environmentSource(options);
  const gate = gateSource(options);
  return function write_file(args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
    return runToolBody("write_file", async () => {
      const a = args ?? {};
      const path = checkPathArgument(a.path);
      const content = requiredString(a.content, "content");
      const [{ env, approve }, { writeTextFile }] = await Promise.all([writeTarget(environments, gate, ctx, "write_file"), import("../files/write.js")]);
      return writeTextFile(env, path, content, {
        approve,
        chunkChars: options.chunkChars,
        signal: ctx?.signal,
        timeoutMs: options.commandTimeoutMs,
      });
    });
  };
}

export const writeFileHandler = createWriteFileHandler();

registry.register({
  name: "write_file",
  toolset: "file",
  emoji: "✍️",
  parallelSafe: false,
  description: "Write a whole file in the task's environment, atomically (temp file + rename, mode kept); risky targets need approval.",
  schema: WRITE_FILE_SCHEMA,
  handler: writeFileHandler,
  // Large contents take many commands on slow backends, and an approval may wait for a person.
  timeoutMs: 20 * 60 * 1000,
  source: { kind: "builtin" },
});
