/**
 * Reading `config.yaml` without trusting what is at its path. Whatever can put
 * a symlink there can point it at `/dev/zero` (read without end: 16 GB, then an
 * abort) or at a FIFO (a read that never returns). So the file is opened
 * without blocking, the opened descriptor is checked to be a regular file
 * (after the symlink, and with no window for a swap between check and read),
 * and at most `MAX_CONFIG_BYTES` are read.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

import { ConfigError } from "./config-error.js";

/** The largest `config.yaml` read: far above any real configuration, far below any harm. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

// O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting. O_NOCTTY: a terminal never becomes ours.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/** The file's text, or `undefined` when there is no file. Throws `ConfigError` for anything but a regular file of bounded size. */
export function readConfigFile(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw new ConfigError(`cannot read the configuration: ${(err as Error).message}`, { kind: "io", file, cause: err });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      throw new ConfigError(`the configuration is ${kindOf(stat)}, not a regular file; config.yaml must be a file`, { kind: "not_file", file });
    }
    if (stat.size > MAX_CONFIG_BYTES) throw tooLarge(file, stat.size);
    // Read one byte past the limit: a file growing after the fstat is still caught.
    const buffer = Buffer.allocUnsafe(Math.min(stat.size, MAX_CONFIG_BYTES) + 1);
    let length = 0;
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > MAX_CONFIG_BYTES) throw tooLarge(file, length);
    return buffer.toString("utf8", 0, length);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`cannot read the configuration: ${(err as Error).message}`, { kind: "io", file, cause: err });
  } finally {
    closeSync(fd);
  }
}

function tooLarge(file: string, size: number): ConfigError {
  return new ConfigError(`the configuration is larger than ${MAX_CONFIG_BYTES} bytes (${size}${size > MAX_CONFIG_BYTES + 1 ? "" : " or more"}); config.yaml must be smaller`, {
    kind: "too_large",
    file,
  });
}

function kindOf(stat: import("node:fs").Stats): string {
  if (stat.isDirectory()) return "a directory";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isSocket()) return "a socket";
  return "not a regular file";
}
