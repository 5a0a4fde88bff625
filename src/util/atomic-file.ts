/**
 * Files that are either absent or whole: written to a temporary file in the
 * same directory, fsynced, then put in place in one step, and the directory
 * fsynced. A crash at any point leaves the old file (or none) and at most a
 * stray `.<name>.<pid>.<random>.tmp`, never a half-written file under the
 * real name. Readers must ignore names starting with "." and ending in ".tmp".
 */

import { randomBytes } from "node:crypto";
import { link, open, rename, unlink } from "node:fs/promises";
import path from "node:path";

/** The suffix of temporary files; readers skip names that start with "." and end with it. */
export const TEMP_SUFFIX = ".tmp";

export interface AtomicWriteHooks {
  /** Runs after the temporary file is complete and synced, before it takes the real name (tests simulate a crash here). */
  beforeCommit?: (tempFile: string) => void | Promise<void>;
}

/** Whether `name` is one of the temporary files these functions leave after a crash. */
export function isTempFileName(name: string): boolean {
  return name.startsWith(".") && name.endsWith(TEMP_SUFFIX);
}

async function writeTemp(file: string, data: string | Uint8Array, mode: number): Promise<string> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString("hex")}${TEMP_SUFFIX}`);
  const handle = await open(tmp, "wx", mode);
  try {
    await handle.chmod(mode);
    await handle.writeFile(data);
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  } finally {
    await handle.close().catch(() => undefined);
  }
  return tmp;
}

async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Directories cannot be fsynced on every platform; the rename or link itself is atomic.
  }
}

/** Replaces `file` with `data` (creating it when absent). */
export async function writeFileAtomic(file: string, data: string | Uint8Array, mode = 0o600, hooks: AtomicWriteHooks = {}): Promise<void> {
  const tmp = await writeTemp(file, data, mode);
  try {
    await hooks.beforeCommit?.(tmp);
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await syncDir(path.dirname(file));
}

/**
 * Creates `file` with `data` only if no file has that name: `link` never
 * replaces, so of two writers racing for one name exactly one wins. Returns
 * false (and leaves the existing file alone) when the name was taken.
 */
export async function createFileAtomic(file: string, data: string | Uint8Array, mode = 0o600, hooks: AtomicWriteHooks = {}): Promise<boolean> {
  const tmp = await writeTemp(file, data, mode);
  let created = true;
  try {
    await hooks.beforeCommit?.(tmp);
    await link(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    created = false;
  }
  await unlink(tmp).catch(() => undefined);
  if (created) await syncDir(path.dirname(file));
  return created;
}
