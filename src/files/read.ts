/**
 * Reading a text file through the environment, as a window of lines.
 *
 * One script run does it all (READ_SCRIPT): resolve the path, describe it,
 * refuse what is not a readable regular file, look for a NUL byte in the first
 * 8 KiB, count the lines (`wc -l`, plus one for a last line without a newline)
 * and send the requested lines as base64, at most `WINDOW_BYTES` of them (so a
 * file of any size can be read, a window at a time). Here the window is
 * checked (no NUL, valid UTF-8), numbered like `cat -n` (the number
 * right-aligned in 6 columns, a tab, the line), overlong lines are cut, and the
 * whole is kept under `MAX_CONTENT_CHARS`.
 *
 * `readWholeText` reads an entire file for patching: the bytes exactly as they
 * are, up to `MAX_PATCH_BYTES`.
 */

import { createHash } from "node:crypto";

import type { Environment } from "../environments/types.js";
import { REDACTED } from "../redaction/redact.js";
import { groupDigits } from "../util/format.js";
import { decodeUtf8, formatBytes, hasNul, lineEndings, notTextMessage, trimPartialUtf8 } from "./content.js";
import { FileToolError } from "./errors.js";
import { DEFAULT_COMMAND_TIMEOUT_MS, MAX_CONTENT_CHARS, MAX_LINE_CHARS, MAX_PATCH_BYTES, WINDOW_BYTES } from "./limits.js";
import { normalizeAbsolute } from "./paths.js";
import { redactShownRuns } from "./redact-lines.js";
import { commonScriptError, described, READ_SCRIPT, runFileScript, type Described } from "./scripts.js";
import { listingNames, notAFileError } from "./targets.js";


export interface ReadWindowOptions {
  /** First line, 1-based. */
  offset: number;
  /** Lines wanted. */
  limit: number;
  /** Replace secrets with `[REDACTED]` (src/redaction/tool-output.ts), line for line. */
  redact?: boolean;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** What read_file returns (snake_case: it goes to the model as JSON). */
export interface ReadWindowResult {
  path: string;
  content: string;
  start_line: number;
  end_line: number;
  total_lines: number;
  file_size: number;
  /** More lines follow `end_line`. */
  truncated: boolean;
  next_offset?: number;
  line_endings?: "crlf" | "mixed";
  /** Lines of the window in which secrets were replaced by `[REDACTED]`. */
  redacted_lines?: number;
  note?: string;
}

/** Base64 output length for `bytes` bytes, as `base64` prints it (76-column lines). */
function base64Chars(bytes: number): number {
  const chars = Math.ceil(bytes / 3) * 4;
  return chars + Math.ceil(chars / 76);
}

function decodeBase64(data: string | undefined): Buffer {
  return Buffer.from(data ?? "", "base64");
}

function checkScriptErrors(output: Awaited<ReturnType<typeof runFileScript>>, rawPath: string): void {
  const common = commonScriptError(output, rawPath);
  if (common) throw common;
  const code = output.fields.get("error");
  if (code !== undefined) throw new FileToolError("environment", `Reading ${rawPath} failed in the environment (${code}: ${output.fields.get("detail") ?? ""}).`);
}

/**
 * Runs the read script and refuses what is not a text file (a directory, a
 * missing path, NUL bytes); returns its output, the file's description, its
 * absolute path and its first bytes.
 */
async function readTextScript(env: Environment, rawPath: string, args: string[], maxBytes: number, options: { signal?: AbortSignal; timeoutMs?: number }) {
  const output = await runFileScript(env, READ_SCRIPT, [rawPath, ...args], {
    timeoutMs: options.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    maxOutputChars: base64Chars(maxBytes + 1) + 1_000_000,
    signal: options.signal,
    what: `reading ${rawPath}`,
  });
  checkScriptErrors(output, rawPath);
  const d = described(output);
  const path = normalizeAbsolute(d.path);
  const problem = notAFileError(d, d.kind === "file" ? undefined : listingNames(output.data));
  if (problem) throw problem;
  const magic = output.fields.get("magic") ?? "";
  // A readable file always comes with its first bytes and a payload; without them it changed mid-way.
  if (d.readable && (!output.fields.has("magic") || (output.data === undefined && output.fields.get("nul") !== "1" && output.fields.get("too_large") !== "1"))) {
    throw new FileToolError("conflict", `${path} changed while it was being read (something is changing the path); nothing was done. Read it again.`);
  }
  if (output.fields.get("nul") === "1") throw new FileToolError("unsupported_content", notTextMessage(path, d.size, magic, "nul"));
  return { output, d, path, magic };
}

/** Reads lines `offset .. offset + limit - 1` of a text file. */
export async function readWindow(env: Environment, rawPath: string, options: ReadWindowOptions): Promise<ReadWindowResult> {
  const { output, d, path, magic } = await readTextScript(env, rawPath, ["window", String(options.offset), String(options.limit), String(WINDOW_BYTES)], WINDOW_BYTES, options);

  const totalLines = Number(output.fields.get("lines") ?? "0");
  const fileSize = d.size ?? 0;
  if (totalLines === 0) {
    return { path, content: "", start_line: 0, end_line: 0, total_lines: 0, file_size: fileSize, truncated: false, note: "The file is empty." };
  }
  if (options.offset > totalLines) {
    throw new FileToolError(
      "invalid_args",
      `offset ${options.offset} is past the end of ${path}, which has ${totalLines} line${totalLines === 1 ? "" : "s"}. Use an offset from 1 to ${totalLines}.`,
    );
  }

  let bytes: Uint8Array = decodeBase64(output.data);
  // A window over the byte cap ends with a partial line: drop it (unless it is the only one).
  let cutByBytes = false;
  if (bytes.length > WINDOW_BYTES) {
    cutByBytes = true;
    bytes = bytes.subarray(0, WINDOW_BYTES);
    const lastNewline = bytes.lastIndexOf(0x0a);
    bytes = lastNewline >= 0 ? bytes.subarray(0, lastNewline + 1) : trimPartialUtf8(bytes);
  }
  if (hasNul(bytes)) throw new FileToolError("unsupported_content", notTextMessage(path, d.size, magic, "nul"));
  const text = decodeUtf8(bytes);
  if (text === undefined) throw new FileToolError("unsupported_content", notTextMessage(path, d.size, magic, "utf8"));

  let lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const endings = lineEndings(text);
  lines = lines.slice(0, options.limit).map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
  // Redacted before lines are cut, so a cut never leaves half a secret unrecognised.
  const original = lines;
  if (options.redact) lines = (await redactShownRuns(env, [{ path: d.path, first: options.offset, lines }], options)).runs[0]!.lines;
  const numbered: string[] = [];
  let chars = 0;
  let cutLines = 0;
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!;
    if (line.length > MAX_LINE_CHARS) {
      line = `${line.slice(0, MAX_LINE_CHARS)} … [line cut: ${line.length - MAX_LINE_CHARS} more characters]`;
      cutLines++;
    }
    const entry = `${String(options.offset + i).padStart(6)}\t${line}`;
    if (numbered.length > 0 && chars + entry.length + 1 > MAX_CONTENT_CHARS) break;
    numbered.push(entry);
    chars += entry.length + 1;
  }
  // A single line longer than the whole window: it was cut by bytes, not shown whole.
  if (cutByBytes && lines.length === 1 && cutLines === 0) cutLines = 1;
  let redacted = 0;
  for (let i = 0; i < numbered.length; i++) if (lines[i] !== original[i]) redacted++;

  const startLine = options.offset;
  const endLine = options.offset + numbered.length - 1;
  const result: ReadWindowResult = {
    path,
    content: numbered.join("\n"),
    start_line: startLine,
    end_line: endLine,
    total_lines: totalLines,
    file_size: fileSize,
    truncated: endLine < totalLines,
  };
  const notes: string[] = [];
  if (result.truncated) {
    result.next_offset = endLine + 1;
    const why = numbered.length < options.limit ? ` (the limit of ${groupDigits(MAX_CONTENT_CHARS)} characters per call was reached)` : "";
    notes.push(`Showing lines ${startLine}-${endLine} of ${totalLines}${why}; call read_file with offset=${endLine + 1} to continue.`);
  }
  if (cutLines > 0) notes.push(`${cutLines} line${cutLines === 1 ? " was" : "s were"} longer than ${MAX_LINE_CHARS} characters and cut; use the terminal tool (cut, fold, jq) to see more.`);
  if (redacted > 0) {
    result.redacted_lines = redacted;
    notes.push(
      `Secrets on ${redacted} line${redacted === 1 ? "" : "s"} are shown as ${REDACTED} (the file has the real values there; do not copy ${REDACTED} into patch's old_string).`,
    );
  }
  if (endings !== "lf") {
    result.line_endings = endings;
    notes.push(`The file uses ${endings === "crlf" ? "CRLF" : "mixed LF and CRLF"} line endings; the \\r before each line break is not shown (patch keeps the file's line endings).`);
  }
  if (notes.length > 0) result.note = notes.join(" ");
  return result;
}

/** An entire text file, exactly as stored. */
export interface WholeText {
  /** What the script reported about the path (absolute path, mode, resolved path, ...). */
  described: Described;
  path: string;
  text: string;
  bytes: Buffer;
  /** MD5 of the bytes, so the write can check the file did not change in the meantime. */
  md5: string;
}

/** Reads a whole text file (for patch). */
export async function readWholeText(env: Environment, rawPath: string, options: { signal?: AbortSignal; timeoutMs?: number }): Promise<WholeText> {
  const { output, d, path, magic } = await readTextScript(env, rawPath, ["whole", "1", "0", String(MAX_PATCH_BYTES)], MAX_PATCH_BYTES, options);
  if (output.fields.get("too_large") === "1") {
    throw new FileToolError(
      "unsupported_content",
      `${path} is ${formatBytes(d.size ?? 0)}, more than patch edits (${formatBytes(MAX_PATCH_BYTES)}). Use the terminal tool (sed, a script) for files this large.`,
    );
  }
  const bytes = decodeBase64(output.data);
  if (bytes.length > MAX_PATCH_BYTES) throw new FileToolError("conflict", `${path} grew while it was being read; try again.`);
  if (hasNul(bytes)) throw new FileToolError("unsupported_content", notTextMessage(path, bytes.length, magic, "nul"));
  const text = decodeUtf8(bytes);
  if (text === undefined) throw new FileToolError("unsupported_content", notTextMessage(path, bytes.length, magic, "utf8"));
  return { described: d, path, text, bytes, md5: createHash("md5").update(bytes).digest("hex") };
}
