/**
 * The fast path of a background process whose environment is this machine as
 * Node sees it (the launcher found the same pid namespace and mounts, and the
 * directory with the owner token is there): status reads, the gate's `go`
 * and the removal of its directory are done with file system calls from
 * Node, instead of a bash in the environment for each. A status read was a
 * spawned bash, `stat` and often `tail`/`head`; this is a few system calls.
 *
 * The same rules as the scripts of `background-scripts.ts` hold: only the
 * recorded pid and start time are trusted, nothing is followed through a
 * symlink (O_NOFOLLOW, lstat), and only a directory holding the owner token,
 * at its real path, is removed.
 */

import { constants, type Stats } from "node:fs";
import { lstat, mkdir, open, readFile, realpath, rm, writeFile } from "node:fs/promises";
import path from "node:path";

import { GONE_STATUS, type BackgroundStatus, type TrustedProcess } from "./background-scripts.js";

const NOFOLLOW = constants.O_NOFOLLOW;

/** `/proc/<pid>/stat` fields after the command name ([0] state, [2] group, [19] start time); undefined when there is no such process. */
async function procStat(pid: number): Promise<string[] | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, "latin1");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

async function lstatOrUndefined(file: string): Promise<Stats | undefined> {
  try {
    return await lstat(file);
  } catch {
    return undefined;
  }
}

/** Whether the directory is one this registry made (owner token, no symlink) and is visible from here. */
export async function visibleHere(dir: string, nonce: string): Promise<boolean> {
  const st = await lstatOrUndefined(dir);
  if (!st?.isDirectory()) return false;
  try {
    return (await readSmall(path.join(dir, "owner"))).trim() === nonce;
  } catch {
    return false;
  }
}

async function readSmall(file: string): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | NOFOLLOW);
  try {
    const buffer = Buffer.alloc(256);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.toString("latin1", 0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** The same answer as `statusScript` + `parseStatus`, from Node. */
export async function localStatus(dir: string, target: TrustedProcess, offset: number, maxBytes: number): Promise<BackgroundStatus> {
  const st = await lstatOrUndefined(dir);
  if (!st?.isDirectory()) return { ...GONE_STATUS };
  const fields = await procStat(target.pid);
  let alive = false;
  let pidState: BackgroundStatus["pidState"] = "none";
  if (fields) {
    if (fields[19] !== target.startTime || fields[2] !== String(target.pid)) pidState = "recycled";
    else if (fields[0] !== "Z") {
      alive = true;
      pidState = "alive";
    }
  }
  let exitCode: number | undefined;
  let endedAt: number | undefined;
  try {
    const handle = await open(path.join(dir, "exit"), constants.O_RDONLY | NOFOLLOW);
    try {
      const buffer = Buffer.alloc(16);
      const { bytesRead } = await handle.read(buffer, 0, 16, 0);
      const text = buffer.toString("latin1", 0, bytesRead).trim();
      if (/^\d{1,3}$/.test(text)) {
        exitCode = Number(text);
        endedAt = Math.round((await handle.stat()).mtimeMs);
      }
    } finally {
      await handle.close();
    }
  } catch {
    // No exit file yet.
  }
  const [timedOut, neverRan] = await Promise.all([lstatOrUndefined(path.join(dir, "timedout")), lstatOrUndefined(path.join(dir, "notrun"))]);
  let size = 0;
  let output = "";
  let end = offset;
  try {
    const handle = await open(path.join(dir, "log"), constants.O_RDONLY | NOFOLLOW);
    try {
      size = (await handle.stat()).size;
      end = Math.max(offset, Math.min(size, offset + maxBytes));
      if (end > offset) {
        const buffer = Buffer.alloc(end - offset);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
        end = offset + bytesRead;
        output = buffer.toString("utf8", 0, bytesRead);
      }
    } finally {
      await handle.close();
    }
  } catch {
    // No log (removed meanwhile): nothing new.
  }
  return { gone: false, alive, pidState, timedOut: timedOut !== undefined, neverRan: neverRan !== undefined, endedAt, exitCode, end, size, output };
}

/** Says `go` or `abort` at the runner's gate; false when nobody waits there (the runner gave up or is gone). */
export async function localGate(dir: string, word: "go" | "abort"): Promise<boolean> {
  let handle;
  try {
    // Non-blocking: with no reader, open fails (ENXIO) instead of waiting; never follows a symlink.
    handle = await open(path.join(dir, "gate"), constants.O_WRONLY | constants.O_NONBLOCK | NOFOLLOW);
  } catch {
    return false;
  }
  try {
    if (!(await handle.stat()).isFIFO()) return false;
    await handle.write(`${word}\n`);
    return true;
  } finally {
    await handle.close();
  }
}

/** Removes the directory when it is a real directory at its real path holding the owner token; false when it was left alone. */
export async function localRemove(dir: string, nonce: string | undefined): Promise<boolean> {
  if (nonce === undefined) return false;
  const st = await lstatOrUndefined(dir);
  if (!st?.isDirectory()) return false;
  try {
    if ((await realpath(dir)) !== dir) return false;
    if ((await readSmall(path.join(dir, "owner"))).trim() !== nonce) return false;
  } catch {
    return false;
  }
  await rm(dir, { recursive: true, force: true });
  return true;
}

/**
 * Makes the process's directory and owner file from Node (the launcher then
 * only checks them): under a root that is a real directory owned by this
 * user and writable by nobody else; `mkdir` fails on anything already there.
 */
export async function prepareLocalDir(root: string, dir: string, nonce: string): Promise<void> {
  await mkdir(root, { recursive: true, mode: 0o700 });
  const st = await lstat(root);
  if (!st.isDirectory() || (process.geteuid !== undefined && st.uid !== process.geteuid()) || (st.mode & 0o022) !== 0) {
    throw new Error(`the control root ${root} is not a directory of this user's that only it can write`);
  }
  await mkdir(dir, { mode: 0o700 });
  await writeFile(path.join(dir, "owner"), `${nonce}\n`, { flag: "wx", mode: 0o600 });
}
