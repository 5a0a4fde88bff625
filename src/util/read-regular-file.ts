/**
 * Reading a file whose path someone else may control (the profile home's
 * config.yaml, the discovery cache). A symlink there can point at `/dev/zero`
 * (a read without end) or a FIFO (a read that never returns). So the file is
 * opened without blocking, the opened descriptor must be a regular file (after
 * any symlink, and with no window for a swap between the check and the read),
 * and at most `maxBytes` are read.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";

/** Why a file was not read: it is missing, not a regular file, too large, or unreadable. */
export type RegularFileProblem = "missing" | "not_file" | "too_large" | "io";

export class RegularFileError extends Error {
  override readonly name = "RegularFileError";
  constructor(
    readonly problem: RegularFileProblem,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

// O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting. O_NOCTTY: a terminal never becomes ours.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/**
 * The file's text (UTF-8) and its status, read from one descriptor. Throws
 * `RegularFileError`; `check` may reject the status (ownership, mode) by throwing too.
 */
export function readRegularFileSync(file: string, maxBytes: number, check?: (stat: Stats) => void): { text: string; stat: Stats } {
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const problem = code === "ENOENT" || code === "ENOTDIR" ? "missing" : "io";
    throw new RegularFileError(problem, (err as Error).message, { cause: err });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new RegularFileError("not_file", `it is ${kindOf(stat)}, not a regular file`);
    if (stat.size > maxBytes) throw tooLarge(maxBytes, stat.size);
    check?.(stat);
    // One byte past the limit: a file that grows after the fstat is still caught.
    const buffer = Buffer.allocUnsafe(Math.min(stat.size, maxBytes) + 1);
    let length = 0;
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > maxBytes) throw tooLarge(maxBytes, length);
    return { text: buffer.toString("utf8", 0, length), stat };
  } catch (err) {
    if (err instanceof RegularFileError) throw err;
    throw new RegularFileError("io", (err as Error).message, { cause: err });
  } finally {
    closeSync(fd);
  }
}

function tooLarge(maxBytes: number, size: number): RegularFileError {
  return new RegularFileError("too_large", `it is larger than ${maxBytes} bytes (${size}${size > maxBytes + 1 ? "" : " or more"})`);
}

function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return "a directory";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isSocket()) return "a socket";
  return "not a regular file";
}
