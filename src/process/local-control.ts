/**
 * The fast path of a background process whose environment is this machine as
 * Node sees it (the launcher found the same pid namespace and mounts, and the
 * directory with the owner token is there): status reads, the gate's `go`
 * and the removal of its directory are done with file system calls from
 * Node, instead of a bash in the environment for each. A status read was a
 * spawned bash, `stat` and often `tail`/`head`; this is a few system calls.
 *
 * The calls are synchronous: each is a few microseconds on small files, and
 * an asynchronous call's thread-pool hop waited behind whatever blocked the
 * event loop (spawning a launcher blocks it for milliseconds), which made a
 * start or a status read wait for nothing. The functions stay async for their
 * callers.
 *
 * The same rules as the scripts of `background-scripts.ts` hold: only the
 * recorded pid and start time are trusted, nothing is followed through a
 * symlink (O_NOFOLLOW, lstat), and only a directory holding the owner token,
 * at its real path, is removed.
 */

import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, realpathSync, rmSync, writeFileSync, writeSync, type Stats } from "node:fs";
import path from "node:path";

import { GONE_STATUS, type BackgroundStatus, type TrustedProcess } from "./background-scripts.js";

const NOFOLLOW = constants.O_NOFOLLOW;

/** `/proc/<pid>/stat` fields after the command name ([0] state, [2] group, [19] start time); undefined when there is no such process. */
function procStat(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "latin1");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

function lstatOrUndefined(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch {
    return undefined;
  }
}

/** Up to `max` bytes of a file from `position`, never through a symlink; undefined when it cannot be opened. */
function readNoFollow(file: string, max: number, position = 0): { bytes: Buffer; size: number; mtimeMs: number } | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    const length = Math.max(0, Math.min(max, st.size - position));
    const bytes = Buffer.alloc(length);
    const read = length > 0 ? readSync(fd, bytes, 0, length, position) : 0;
    return { bytes: bytes.subarray(0, read), size: st.size, mtimeMs: st.mtimeMs };
  } finally {
    closeSync(fd);
  }
}

function ownerOf(dir: string): string | undefined {
  return readNoFollow(path.join(dir, "owner"), 256)?.bytes.toString("latin1").trim();
}

/** Whether the directory is one this registry made (owner token, no symlink) and is visible from here. */
export async function visibleHere(dir: string, nonce: string): Promise<boolean> {
  return lstatOrUndefined(dir)?.isDirectory() === true && ownerOf(dir) === nonce;
}

/** The same answer as `statusScript` + `parseStatus`, from Node. */
export async function localStatus(dir: string, target: TrustedProcess, offset: number, maxBytes: number): Promise<BackgroundStatus> {
  if (lstatOrUndefined(dir)?.isDirectory() !== true) return { ...GONE_STATUS };
  const fields = procStat(target.pid);
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
  const exit = readNoFollow(path.join(dir, "exit"), 16);
  const exitText = exit?.bytes.toString("latin1").trim() ?? "";
  if (exit && /^\d{1,3}$/.test(exitText)) {
    exitCode = Number(exitText);
    endedAt = Math.round(exit.mtimeMs);
  }
  const timedOut = lstatOrUndefined(path.join(dir, "timedout")) !== undefined;
  const neverRan = lstatOrUndefined(path.join(dir, "notrun")) !== undefined;
  const log = readNoFollow(path.join(dir, "log"), maxBytes, offset);
  const size = log?.size ?? 0;
  const end = log ? offset + log.bytes.length : offset;
  const output = log ? log.bytes.toString("utf8") : "";
  return { gone: false, alive, pidState, timedOut, neverRan, endedAt, exitCode, end, size, output };
}

/** Says `go` or `abort` at the runner's gate; false when nobody waits there (the runner gave up or is gone). */
export async function localGate(dir: string, word: "go" | "abort"): Promise<boolean> {
  let fd: number;
  try {
    // Non-blocking: with no reader, open fails (ENXIO) instead of waiting; never follows a symlink.
    fd = openSync(path.join(dir, "gate"), constants.O_WRONLY | constants.O_NONBLOCK | NOFOLLOW);
  } catch {
    return false;
  }
  try {
    if (!fstatSync(fd).isFIFO()) return false;
    writeSync(fd, `${word}\n`);
    return true;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** Removes the directory when it is a real directory at its real path holding the owner token; false when it was left alone. */
export async function localRemove(dir: string, nonce: string | undefined): Promise<boolean> {
  if (nonce === undefined || lstatOrUndefined(dir)?.isDirectory() !== true) return false;
  try {
    if (realpathSync(dir) !== dir || ownerOf(dir) !== nonce) return false;
    rmSync(dir, { recursive: true, force: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes the process's directory and owner file from Node (the launcher then
 * only checks them): under a root that is a real directory owned by this
 * user and writable by nobody else; `mkdir` fails on anything already there.
 */
export async function prepareLocalDir(root: string, dir: string, nonce: string): Promise<void> {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const st = lstatSync(root);
  if (!st.isDirectory() || (process.geteuid !== undefined && st.uid !== process.geteuid()) || (st.mode & 0o022) !== 0) {
    throw new Error(`the control root ${root} is not a directory of this user's that only it can write`);
  }
  mkdirSync(dir, { mode: 0o700 });
  writeFileSync(path.join(dir, "owner"), `${nonce}\n`, { flag: "wx", mode: 0o600 });
}
