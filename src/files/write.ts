/**
 * Writing a file through the environment, atomically and in pieces.
 *
 * `writeBytes` sends the content as base64 in chunks, one command each,
 * appended to a temporary file beside the target; the last step checks the
 * size and renames it over the target (WRITE_SCRIPT). A chunk is as large as
 * the backend's command limit allows (limits.ts: 128 KiB, Modal 64 KiB) once
 * the script, the quoted paths and an allowance for the backend's own wrapper
 * are taken off — about 115 KiB of base64 (86 KiB of content) per command on
 * local, ssh and docker, measured with the command quoted once more, as the
 * ssh backend sends it. Content that fits one chunk is written by a single
 * command.
 *
 * The old file stays intact until that rename: when a step fails, times out or
 * is cancelled, the temporary file is removed (a best-effort extra command) and
 * the target is untouched. A process that dies mid-way leaves a
 * `.NAME.mibyan-XXXXXXXXXXXX` file beside the target and the target itself intact.
 *
 * `writeTextFile` is write_file's whole operation: look at the path, refuse
 * what cannot be written, ask for approval, write.
 */

import { randomBytes } from "node:crypto";

import { shellQuote } from "../environments/shell-state.js";
import type { Environment } from "../environments/types.js";
import type { WriteApproval } from "./approval.js";
import { formatBytes } from "./content.js";
import { FileToolError } from "./errors.js";
import { COMMAND_LIMITS, DEFAULT_COMMAND_LIMIT, DEFAULT_COMMAND_TIMEOUT_MS, MAX_WRITE_BYTES, WRAPPER_ALLOWANCE } from "./limits.js";
import { normalizeAbsolute } from "./paths.js";
import { commonScriptError, described, runFileScript, scriptCommand, STAT_SCRIPT, WRITE_SCRIPT, type Described, type ScriptOutput } from "./scripts.js";
import { notAFileError } from "./targets.js";

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

/** The temporary file for `target`: hidden, beside it, with a random suffix. */
export function tempPathFor(target: string): string {
  const slash = target.lastIndexOf("/");
  const dir = slash <= 0 ? "" : target.slice(0, slash);
  const base = Array.from(target.slice(slash + 1)).slice(0, 60).join("");
  return `${dir}/.${base}.mibyan-${randomBytes(6).toString("hex")}`;
}

function writeError(output: ScriptOutput, target: string): FileToolError | undefined {
  const common = commonScriptError(output, target);
  if (common) return common;
  const code = output.fields.get("error");
  const detail = (output.fields.get("detail") ?? "").trim();
  const dir = target.slice(0, Math.max(1, target.lastIndexOf("/")));
  const unchanged = "The file was not changed.";
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
    case "changed":
      return new FileToolError(
        "conflict",
        `${target} was changed by something else after it was read, so the edit was not applied. Read it again and redo the change.`,
      );
    case "rename":
      return new FileToolError("io", `Cannot replace ${target}: ${detail}. ${unchanged}`);
    case "tmp-gone":
      return new FileToolError("io", `The temporary copy of ${target} disappeared while it was being written. ${unchanged}`);
    default:
      return new FileToolError("environment", `Writing ${target} failed in the environment (${code}${detail ? `: ${detail}` : ""}).`);
  }
}

/**
 * Replaces `target` (an absolute path, symlinks already resolved by the
 * caller) with `bytes`. Missing parent directories are created.
 */
export async function writeBytes(env: Environment, target: string, bytes: Uint8Array, options: WriteBytesOptions = {}): Promise<WriteOutcome> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const expect = options.expectMd5 ?? "";
  const tmp = tempPathFor(target);
  const total = String(bytes.length);
  const chunkChars = Math.max(4, Math.floor((options.chunkChars ?? chunkCharsFor(env.backend, target, tmp, total, expect)) / 4) * 4);
  const chunkBytes = (chunkChars / 4) * 3;
  const chunk = (i: number) => Buffer.from(bytes.subarray(i * chunkBytes, (i + 1) * chunkBytes)).toString("base64");
  const chunks = Math.max(1, Math.ceil(bytes.length / chunkBytes));
  const run = (args: string[], step: string) =>
    runFileScript(env, WRITE_SCRIPT, args, {
      timeoutMs,
      maxOutputChars: 64 * 1024,
      signal: options.signal,
      what: `writing ${target} (${step})`,
    });

  if (chunks === 1) {
    let output: ScriptOutput;
    try {
      output = await run(["oneshot", target, tmp, chunk(0), total, expect], "single step");
    } catch (err) {
      await removeTemp(env, tmp);
      throw err;
    }
    const error = writeError(output, target);
    if (error) throw error;
    return { bytes: Number(output.fields.get("bytes") ?? total), created: output.fields.get("created") === "1" };
  }

  let committed = false;
  try {
    let output = await run(["begin", target, tmp, chunk(0)], `part 1 of ${chunks}`);
    let error = writeError(output, target);
    if (error) throw error;
    for (let i = 1; i < chunks - 1; i++) {
      output = await run(["append", tmp, chunk(i)], `part ${i + 1} of ${chunks}`);
      error = writeError(output, target);
      if (error) throw error;
    }
    output = await run(["commit", target, tmp, chunk(chunks - 1), total, expect], `part ${chunks} of ${chunks}`);
    error = writeError(output, target);
    if (error) throw error;
    committed = true;
    return { bytes: Number(output.fields.get("bytes") ?? total), created: output.fields.get("created") === "1" };
  } finally {
    if (!committed) await removeTemp(env, tmp);
  }
}

/**
 * The base64 characters one command can carry on `backend`: its command limit,
 * less the wrapper allowance and the longest step's command without data,
 * quoted once more (ssh sends the command inside a quoted remote command line,
 * where every `'` of the script and the paths grows to four characters).
 */
export function chunkCharsFor(backend: string, target: string, tmp: string, total: string, expect: string): number {
  const limit = COMMAND_LIMITS[backend] ?? DEFAULT_COMMAND_LIMIT;
  const bare = shellQuote(scriptCommand(WRITE_SCRIPT, "mibyan-000000000000000000", ["commit", target, tmp, "", total, expect]));
  const room = limit - WRAPPER_ALLOWANCE - Buffer.byteLength(bare) - 64;
  if (room < 4096) {
    throw new FileToolError("invalid_args", `The path ${JSON.stringify(target)} is too long to write through the ${backend} environment's commands.`);
  }
  return Math.floor(room / 4) * 4;
}

/** Best effort: the caller's signal may be the reason we are cleaning up, so it is not passed on. */
async function removeTemp(env: Environment, tmp: string): Promise<void> {
  try {
    await runFileScript(env, WRITE_SCRIPT, ["abort", tmp], { timeoutMs: CLEANUP_TIMEOUT_MS, maxOutputChars: 16 * 1024, what: "removing a temporary file" });
  } catch {
    // The environment is gone or stuck; the temporary file stays (it never replaces the target).
  }
}

/** The paths a write to a described target touches, for the approval gate: as named, and with symlinks resolved. */
export function pathsToApprove(d: Described): string[] {
  const paths = [normalizeAbsolute(d.path)];
  if (d.real !== undefined) paths.push(normalizeAbsolute(d.real));
  if (d.kind === "missing" && d.ancestor !== undefined && d.ancestorReal !== undefined) {
    // The part below the existing ancestor will be created as real directories, so folding it is exact.
    const rest = d.path.slice(d.ancestor.length);
    paths.push(normalizeAbsolute(`${d.ancestorReal}/${rest}`));
  }
  return [...new Set(paths)];
}

/**
 * Where a write to a described path goes: through a symlink, the file it
 * points to (so the link stays a link). Not folded lexically: `a/../b` means
 * what the kernel makes of it when `a` is a symlink, as in a terminal command.
 */
export function writeTarget(d: Described): string {
  return d.real ?? d.path;
}

/** Why a described path cannot be written, or undefined when it can be (an existing writable file, or a missing one). */
export function notWritableError(d: Described): FileToolError | undefined {
  const path = normalizeAbsolute(d.path);
  if (d.kind === "missing") return d.blocker !== undefined ? notAFileError(d, []) : undefined;
  if (d.kind === "file") {
    return d.writable ? undefined : new FileToolError("io", `Permission denied: ${path} is not writable (mode ${d.mode ?? "?"}). Nothing was written.`);
  }
  if (d.kind === "broken-symlink") {
    return new FileToolError("not_a_file", `${path} is a symbolic link to ${d.target ?? "?"}, which does not exist. Write to the real path instead.`);
  }
  return notAFileError(d, []);
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
  if (rawPath.endsWith("/")) throw new FileToolError("invalid_args", `path ends with "/": give the path of a file, not a directory (got ${JSON.stringify(rawPath)}).`);
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
  await options.approve(pathsToApprove(d));
  const target = writeTarget(d);
  const outcome = await writeBytes(env, target, bytes, { chunkChars: options.chunkChars, signal: options.signal, timeoutMs: options.timeoutMs });
  return { path: normalizeAbsolute(d.path), bytes_written: outcome.bytes, created: outcome.created };
}
