/**
 * The memory files on disk: `<home>/memories/MEMORY.md` and `USER.md`.
 *
 * What goes into these files goes into every system prompt, which is sent to the model provider,
 * so they are read only when they are what they claim to be: the `memories` folder a real
 * directory inside the profile home (not a symlink to elsewhere), each file a regular file that is
 * not a symlink (opened with O_NOFOLLOW, so a link planted between the check and the open fails
 * too), at most MAX_MEMORY_FILE_BYTES, valid UTF-8. A link `USER.md -> ~/.ssh/id_rsa` would
 * otherwise put a private key into the prompt. Writes replace the file atomically
 * (util/atomic-file.ts), so a reader sees the old file or the new one, never half of one.
 */

import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync, realpathSync } from "node:fs";
import path from "node:path";

import { createFileAtomic, writeFileAtomic } from "../../../util/atomic-file.js";
import { MEMORY_FILE_NAMES, type MemoryTarget } from "./entries.js";

/** Largest memory file read (far above any limit: 60,000 characters are at most 240 KB of UTF-8). */
export const MAX_MEMORY_FILE_BYTES = 1024 * 1024;

export type MemoryFileProblem = "symlink" | "not_directory" | "outside_home" | "not_file" | "too_large" | "not_utf8" | "io";

/** A memory file or folder the store refuses to use; the message names the path and what to do. */
export class MemoryFileError extends Error {
  override readonly name = "MemoryFileError";
  constructor(
    readonly problem: MemoryFileProblem,
    readonly file: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** The memory folder of `home`. */
export function memoriesDir(home: string): string {
  return path.join(home, "memories");
}

export function memoryFilePath(home: string, target: MemoryTarget): string {
  return path.join(memoriesDir(home), MEMORY_FILE_NAMES[target]);
}

/**
 * Checks (and, with `create`, creates, mode 0700) the memory folder: a real directory, not a
 * symlink, whose real path is `<real home>/memories`. Returns its path; undefined when it does not
 * exist and `create` is false.
 */
export function checkMemoriesDir(home: string, create: boolean): string | undefined {
  const dir = memoriesDir(home);
  if (create) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      // EEXIST: something that is not a directory (a dangling link, a file) has the name; judged below.
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new MemoryFileError("io", dir, `cannot create the memory folder ${dir}: ${(err as Error).message}`, { cause: err });
      }
    }
  }
  let stat;
  try {
    stat = lstatSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new MemoryFileError("io", dir, `cannot use the memory folder ${dir}: ${(err as Error).message}`, { cause: err });
  }
  if (stat.isSymbolicLink()) {
    throw new MemoryFileError(
      "symlink",
      dir,
      `the memory folder ${dir} is a symbolic link; memory is only read and written inside the profile home. Replace the link with a real directory (move the files into it) to use memory again.`,
    );
  }
  if (!stat.isDirectory()) throw new MemoryFileError("not_directory", dir, `${dir} is not a directory; move it away so the memory folder can be created.`);
  let real: string;
  let realHome: string;
  try {
    real = realpathSync(dir);
    realHome = realpathSync(home);
  } catch (err) {
    throw new MemoryFileError("io", dir, `cannot use the memory folder ${dir}: ${(err as Error).message}`, { cause: err });
  }
  if (real !== path.join(realHome, "memories")) {
    throw new MemoryFileError("outside_home", dir, `the memory folder ${dir} resolves to ${real}, outside the profile home ${realHome}; memory is not used until it is a real folder inside the home.`);
  }
  return dir;
}

/**
 * The text of `file`, or undefined when it does not exist. Throws `MemoryFileError` for a
 * symlink, anything but a regular file, a file over MAX_MEMORY_FILE_BYTES, or text that is not UTF-8.
 */
export function readMemoryFile(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP" || code === "EMLINK") {
      throw new MemoryFileError("symlink", file, `${file} is a symbolic link; memory files must be regular files in the memory folder. Replace the link with the file's content (or remove it) to use this memory again.`);
    }
    throw new MemoryFileError("io", file, `cannot read ${file}: ${(err as Error).message}`, { cause: err });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new MemoryFileError("not_file", file, `${file} is not a regular file; move it away to use this memory again.`);
    if (stat.size > MAX_MEMORY_FILE_BYTES) throw tooLarge(file, stat.size);
    const buffer = Buffer.allocUnsafe(stat.size + 1);
    let length = 0;
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    if (length > MAX_MEMORY_FILE_BYTES) throw tooLarge(file, length);
    try {
      return UTF8.decode(buffer.subarray(0, length));
    } catch {
      throw new MemoryFileError("not_utf8", file, `${file} is not valid UTF-8 text; fix or remove it to use this memory again.`);
    }
  } catch (err) {
    if (err instanceof MemoryFileError) throw err;
    throw new MemoryFileError("io", file, `cannot read ${file}: ${(err as Error).message}`, { cause: err });
  } finally {
    closeSync(fd);
  }
}

function tooLarge(file: string, size: number): MemoryFileError {
  return new MemoryFileError(
    "too_large",
    file,
    `${file} is ${size} bytes, more than the ${MAX_MEMORY_FILE_BYTES} bytes a memory file may have; shorten it by hand to use this memory again.`,
  );
}

/** Replaces `file` with `text` in one step (mode 0600). */
export async function writeMemoryFile(file: string, text: string): Promise<void> {
  await writeFileAtomic(file, text, 0o600);
}

/**
 * Keeps a copy of `raw` beside `file` as `<file>.bak.<ms>` (never replacing one) and returns its path.
 * Written before a write is refused, so what was in the file is kept whatever happens next.
 */
export async function backupMemoryFile(file: string, raw: string, now: number = Date.now()): Promise<string> {
  for (let stamp = now; ; stamp++) {
    const backup = `${file}.bak.${stamp}`;
    if (await createFileAtomic(backup, raw, 0o600)) return backup;
  }
}
