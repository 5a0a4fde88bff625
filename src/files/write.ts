/**
 * Writing a file through the environment, atomically and in pieces, to the
 * one location the approval gate checked.
 *
 * `writeBytes` sends the content as base64 in chunks, one command each; the
 * write script (write-script.ts) enters the checked physical directory, makes
 * sure it is still that directory, puts each chunk in a part file of its own
 * (created exclusively, never through a name that could be a symlink), and the
 * last step joins them into a temporary file beside the target, checks it and
 * renames it over the target. A chunk is as large as the backend's command
 * limit allows (limits.ts: 128 KiB, Modal 64 KiB) once the script, the quoted
 * arguments and an allowance for the backend's own wrapper are taken off —
 * about 115 KiB of base64 (86 KiB of content) per command on local, ssh and
 * docker, measured with the command quoted once more, as the ssh backend sends
 * it. Content that fits one chunk is written by a single command.
 *
 * The old file stays intact until that rename: when a step fails, times out or
 * is cancelled, the temporary file and the parts are removed (a best-effort
 * extra command) and the target is untouched. A process that dies mid-way
 * leaves `.NAME.mibyan-XXXXXXXXXXXX*` files beside the target and the target
 * itself intact.
 *
 * `writeTextFile` is write_file's whole operation: look at the path (resolving
 * it once), refuse what cannot be written, ask for approval, write there.
 */

import { createHash } from "node:crypto";

import { shellQuote } from "../environments/shell-state.js";
import type { Environment } from "../environments/types.js";
import type { WriteApproval } from "./approval.js";
import { formatBytes } from "./content.js";
import { FileToolError } from "./errors.js";
import { COMMAND_LIMITS, DEFAULT_COMMAND_LIMIT, DEFAULT_COMMAND_TIMEOUT_MS, MAX_WRITE_BYTES, WRAPPER_ALLOWANCE } from "./limits.js";
import { checkFileName, locationPath, pathsToApprove, tempNameFor, writeLocation, type WriteLocation } from "./location.js";
import { normalizeAbsolute } from "./paths.js";
import { commonScriptError, described, runFileScript, scriptCommand, STAT_SCRIPT, type Described, type ScriptOutput } from "./scripts.js";
import { notAFileError } from "./targets.js";
import { WRITE_SCRIPT } from "./write-script.js";

const CLEANUP_TIMEOUT_MS = 15_000;

export interface WriteBytesOptions {
  /** Base64 characters per command (rounded down to a multiple of 4; at least 4). Default: what the backend's command limit allows. */
  chunkChars?: number;
  /** MD5 the target must still have when it is replaced (patch); undefined: no check. */
  expectMd5?: string;
  signal?: AbortSignal;
  /** Time limit of each command. */
  timeoutMs?: number;
}

export interface WriteOutcome {
  bytes: number;
  /** The target did not exist before. */
  created: boolean;
}

function writeError(output: ScriptOutput, location: WriteLocation): FileToolError | undefined {
  const target = locationPath(location);
  const common = commonScriptError(output, target);
  if (common) return common;
  const code = output.fields.get("error");
  const detail = (output.fields.get("detail") ?? "").trim();
  const dir = location.dir;
  const unchanged = "The file was not changed.";
  const recheck = "Nothing was written. Look at the path again (something is changing it) and retry if it is still what you mean.";
  switch (code) {
    case undefined:
      return undefined;
    case "mkdir":
      return new FileToolError("io", `Cannot create the directory ${dir}: ${detail}`);
    case "create":
      return new FileToolError("io", `Cannot create a file in ${dir}: ${detail}. ${unchanged}`);
    case "write":
      return new FileToolError("io", `Writing ${target} failed: ${detail || "write error"}. ${unchanged}`);
    case "size-mismatch":
      return new FileToolError("io", `Writing ${target} failed: the temporary copy has ${detail} bytes, not the expected number. ${unchanged}`);
    case "is-directory":
      return new FileToolError("not_a_file", `${target} is a directory now; nothing was written.`);
    case "not-regular":
      return new FileToolError("not_a_file", `${target} is no longer a regular file; nothing was written.`);
    case "moved":
      return new FileToolError(
        "conflict",
        `The directory ${detail || dir} changed after the write to ${target} was checked: it is no longer the directory that was approved (a symbolic link or another directory took its place). ${recheck}`,
      );
    case "final-link":
      return new FileToolError(
        "conflict",
        `${target} became a symbolic link after the write was checked; file writes never follow a link that appears between the check and the write. ${recheck}`,
      );
    case "altered":
      return new FileToolError("conflict", `The temporary copy of ${target} was altered by something else while it was being written. ${unchanged}`);
    case "changed":
      return new FileToolError(
        "conflict",
        `${target} was changed by something else after it was read, so the edit was not applied. Read it again and redo the change.`,
      );
    case "rename":
      return new FileToolError("io", `Cannot replace ${target}: ${detail}. ${unchanged}`);
    case "tmp-gone":
      return new FileToolError("io", `The temporary copy of ${target} disappeared or was replaced while it was being written. ${unchanged}`);
    default:
      return new FileToolError("environment", `Writing ${target} failed in the environment (${code}${detail ? `: ${detail}` : ""}).`);
  }
}

/**
 * Replaces `location` (a physical directory and a name, resolved by the
 * caller and checked by the gate) with `bytes`. Missing directories are
 * created. Nothing is written anywhere else: a directory or name that changed
 * since it was resolved is refused.
 */
export async function writeBytes(env: Environment, location: WriteLocation, bytes: Uint8Array, options: WriteBytesOptions = {}): Promise<WriteOutcome> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const expect = options.expectMd5 ?? "";
  const target = locationPath(location);
  const tmp = tempNameFor(location.name);
  const total = String(bytes.length);
  const chunkChars = Math.max(4, Math.floor((options.chunkChars ?? chunkCharsFor(env.backend, location, tmp, total, expect)) / 4) * 4);
  const chunkBytes = (chunkChars / 4) * 3;
  const chunk = (i: number) => Buffer.from(bytes.subarray(i * chunkBytes, (i + 1) * chunkBytes)).toString("base64");
  const chunks = Math.max(1, Math.ceil(bytes.length / chunkBytes));
  const run = async (args: string[], step: string) => {
    const output = await runFileScript(env, WRITE_SCRIPT, args, {
      timeoutMs,
      maxOutputChars: 64 * 1024,
      signal: options.signal,
      what: `writing ${target} (${step})`,
    });
    const error = writeError(output, location);
    if (error) throw error;
    return output;
  };

  let committed = false;
  try {
    let output: ScriptOutput;
    if (chunks === 1) {
      output = await run(["oneshot", location.dir, location.name, tmp, chunk(0), total, expect], "single step");
    } else {
      await run(["begin", location.dir, tmp, chunk(0)], `part 1 of ${chunks}`);
      for (let i = 1; i < chunks - 1; i++) await run(["append", location.dir, tmp, String(i + 1), chunk(i)], `part ${i + 1} of ${chunks}`);
      const sum = createHash("md5").update(bytes).digest("hex");
      output = await run(["commit", location.dir, location.name, tmp, String(chunks), chunk(chunks - 1), total, expect, sum], `part ${chunks} of ${chunks}`);
    }
    committed = true;
    return { bytes: Number(output.fields.get("bytes") ?? total), created: output.fields.get("created") === "1" };
  } finally {
    if (!committed) await removeTemp(env, location, tmp);
  }
}

/**
 * The base64 characters one command can carry on `backend`: its command limit,
 * less the wrapper allowance and the longest step's command without data,
 * quoted once more (ssh sends the command inside a quoted remote command line,
 * where every `'` of the script and the paths grows to four characters).
 */
export function chunkCharsFor(backend: string, location: WriteLocation, tmp: string, total: string, expect: string): number {
  const limit = COMMAND_LIMITS[backend] ?? DEFAULT_COMMAND_LIMIT;
  const bare = shellQuote(
    scriptCommand(WRITE_SCRIPT, "mibyan-000000000000000000", ["commit", location.dir, location.name, tmp, "999999", "", total, expect, "0".repeat(32)]),
  );
  const room = limit - WRAPPER_ALLOWANCE - Buffer.byteLength(bare) - 64;
  if (room < 4096) {
    throw new FileToolError("invalid_args", `The path ${JSON.stringify(locationPath(location))} is too long to write through the ${backend} environment's commands.`);
  }
  return Math.floor(room / 4) * 4;
}

/** Best effort: the caller's signal may be the reason we are cleaning up, so it is not passed on. */
async function removeTemp(env: Environment, location: WriteLocation, tmp: string): Promise<void> {
  try {
    await runFileScript(env, WRITE_SCRIPT, ["abort", location.dir, tmp], { timeoutMs: CLEANUP_TIMEOUT_MS, maxOutputChars: 16 * 1024, what: "removing a temporary file" });
  } catch {
    // The environment is gone or stuck; the temporary file stays (it never replaces the target).
  }
}

/** Why a described path cannot be written, or undefined when it can be (an existing writable file, or a missing one). */
export function notWritableError(d: Described): FileToolError | undefined {
  const path = normalizeAbsolute(d.path);
  if (d.kind === "missing") return d.blocker !== undefined ? notAFileError(d, undefined) : undefined;
  if (d.kind === "file") {
    return d.writable ? undefined : new FileToolError("io", `Permission denied: ${path} is not writable (mode ${d.mode ?? "?"}). Nothing was written.`);
  }
  if (d.kind === "broken-symlink") {
    return new FileToolError("not_a_file", `${path} is a symbolic link to ${d.target ?? "?"}, which does not exist. Write to the real path instead.`);
  }
  if (d.kind === "directory") {
    // The write path does not list the directory, so nothing is said about what is in it.
    return new FileToolError(
      "not_a_file",
      `${path} is a directory, not a file; nothing was written. To write a file inside it, give the file's path (${posixChild(path, "NAME")}).`,
    );
  }
  return notAFileError(d, undefined);
}

function posixChild(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

export interface WriteTextOptions {
  approve: WriteApproval;
  chunkChars?: number;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface WriteTextResult {
  path: string;
  bytes_written: number;
  created: boolean;
}

/** write_file: looks at the path, refuses what cannot be written, asks for approval, writes `content` as UTF-8. */
export async function writeTextFile(env: Environment, rawPath: string, content: string, options: WriteTextOptions): Promise<WriteTextResult> {
  checkFileName(rawPath);
  const bytes = Buffer.from(content, "utf8");
  if (bytes.length > MAX_WRITE_BYTES) {
    throw new FileToolError(
      "invalid_args",
      `content is ${formatBytes(bytes.length)}, more than write_file accepts (${formatBytes(MAX_WRITE_BYTES)}). Generate large files with a program run by the terminal tool instead.`,
    );
  }
  const output = await runFileScript(env, STAT_SCRIPT, [rawPath], {
    timeoutMs: options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    maxOutputChars: 64 * 1024,
    signal: options.signal,
    what: `looking at ${rawPath}`,
  });
  const common = commonScriptError(output, rawPath);
  if (common) throw common;
  const d = described(output);
  const problem = notWritableError(d);
  if (problem) throw problem;
  // Resolved once: the gate judges this location and the write goes there, or nowhere.
  const location = writeLocation(d);
  await options.approve(pathsToApprove(d));
  const outcome = await writeBytes(env, location, bytes, { chunkChars: options.chunkChars, signal: options.signal, timeoutMs: options.timeoutMs });
  return { path: normalizeAbsolute(d.path), bytes_written: outcome.bytes, created: outcome.created };
}
