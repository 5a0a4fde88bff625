/**
 * Where the registry keeps a background process's files in its environment,
 * and what it accepts as one of its own directories and processes.
 *
 * The registry chooses the root itself: `controlRoot` when given, else
 * `/tmp/mibyan-bg-<uid>` of the environment's user (never the task's
 * `TMPDIR`, which a task can set to anything). A process's directory is
 * `<root>/<process id>`: its name is the id the registry chose before the
 * launch, so a directory named anywhere else (a forged checkpoint entry, a
 * forged launch line) is never read, signalled through or deleted.
 */

import type { CheckpointEntry } from "./types.js";

/** The default root, expanded by bash in the environment (`$EUID` is bash's own, read-only variable). */
export const DEFAULT_CONTROL_ROOT = "/tmp/mibyan-bg-$EUID";

/** A default root once expanded. */
const DEFAULT_ROOT_PATTERN = /^\/tmp\/mibyan-bg-\d+$/;

/** Characters a root may have: it is spliced into scripts quoted, but a plain path keeps every check simple. */
const SAFE_PATH = /^(\/[A-Za-z0-9._+-]+)+$/;

export class ControlRootError extends Error {
  readonly code = "invalid_control_root";
  constructor(message: string) {
    super(message);
    this.name = "ControlRootError";
  }
}

/** Checks a configured root: absolute, plain characters, no `.`/`..` components, no trailing slash. */
export function checkControlRoot(root: string): string {
  if (typeof root !== "string" || !SAFE_PATH.test(root) || root.split("/").some((part) => part === "." || part === "..")) {
    throw new ControlRootError(`The control root of background processes must be an absolute path of letters, digits and ._+- (got ${JSON.stringify(root)}).`);
  }
  return root;
}

/** Whether `root` is one the registry could have chosen: the configured one, or a default one. */
export function acceptableRoot(root: string, configured: string | undefined): boolean {
  return root === configured || DEFAULT_ROOT_PATTERN.test(root);
}

/**
 * The entry's directory when it is one the registry made for it
 * (`<acceptable root>/<its id>`); undefined for anything else, which is then
 * never touched.
 */
export function ownedDir(entry: Pick<CheckpointEntry, "id" | "dir">, configured: string | undefined): string | undefined {
  const slash = entry.dir.lastIndexOf("/");
  if (slash <= 0) return undefined;
  const root = entry.dir.slice(0, slash);
  if (entry.dir.slice(slash + 1) !== entry.id || !acceptableRoot(root, configured) || !SAFE_PATH.test(root)) return undefined;
  return entry.dir;
}

/** The process the entry records, when it is one that may ever be signalled: a group leader above pid 1. */
export function signalTarget(entry: Pick<CheckpointEntry, "pid" | "pgid" | "startTime">): { pid: number; startTime: string } | undefined {
  const { pid, pgid, startTime } = entry;
  if (!Number.isSafeInteger(pid) || pid <= 1 || pgid !== pid || !/^\d+$/.test(startTime)) return undefined;
  return { pid, startTime };
}

/** Why an entry (from the checkpoint) is not one the registry can manage, or undefined when it is. */
export function untrustedEntryReason(entry: CheckpointEntry, configured: string | undefined): string | undefined {
  if (ownedDir(entry, configured) === undefined) return `its checkpoint entry names a directory mibyan did not create (${JSON.stringify(entry.dir)}); nothing was read, signalled or deleted`;
  if (entry.phase === "launching") return undefined;
  if (signalTarget(entry) === undefined) return `its checkpoint entry names pid ${entry.pid} in group ${entry.pgid}, which is not a process group mibyan started; it was not signalled`;
  return undefined;
}
