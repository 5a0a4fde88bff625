/**
 * Where a write goes, decided once.
 *
 * The path is resolved a single time, by the script that looked at it
 * (`__describe ... real` in scripts.ts): an existing file to its physical
 * path (symlinks in every component followed, the last one included), a
 * missing one to the physical path of its nearest existing directory plus
 * the rest, folded (the rest will be created as real directories, so folding
 * it is exact). That location — a physical directory and a final name that is
 * not a symlink — is what the approval gate is asked about (with the path as
 * named), and the only place the write script (write-script.ts) writes: it
 * enters the directory, checks it is still that directory, and refuses when
 * anything in the path changed in between.
 */

import { randomBytes } from "node:crypto";
import { posix } from "node:path";

import { FileToolError } from "./errors.js";
import { normalizeAbsolute } from "./paths.js";
import type { Described } from "./scripts.js";

/** A physical directory (as `pwd -P` prints it) and a name in it. */
export interface WriteLocation {
  dir: string;
  name: string;
}

export const locationPath = (location: WriteLocation): string => (location.dir === "/" ? `/${location.name}` : `${location.dir}/${location.name}`);

/** The location a write to a described path (an existing file, or a missing path under a directory) goes to. */
export function writeLocation(d: Described): WriteLocation {
  let target: string;
  if (d.kind === "file") target = d.real ?? d.path;
  else if (d.kind === "missing" && d.ancestor !== undefined) {
    target = normalizeAbsolute(`${d.ancestorReal ?? d.ancestor}/${d.path.slice(d.ancestor.length)}`);
  } else throw new FileToolError("not_a_file", `${normalizeAbsolute(d.path)} cannot be written.`);
  const name = posix.basename(target);
  if (name === "" || name === "." || name === ".." || target === "/") {
    throw new FileToolError("invalid_args", `${normalizeAbsolute(d.path)} leads to ${target}, which is not a file name: give the path of a file.`);
  }
  return { dir: posix.dirname(target), name };
}

/** The paths a write to a described target touches, for the approval gate: as named, and where it really goes. */
export function pathsToApprove(d: Described): string[] {
  return [...new Set([normalizeAbsolute(d.path), locationPath(writeLocation(d))])];
}

/** Refuses a path whose last component is `.` or `..` (it names a directory). */
export function checkFileName(rawPath: string): void {
  const last = rawPath.slice(rawPath.lastIndexOf("/") + 1);
  if (rawPath.endsWith("/") || last === "." || last === "..") {
    throw new FileToolError("invalid_args", `path ends with "${rawPath.endsWith("/") ? "/" : last}": give the path of a file, not a directory (got ${JSON.stringify(rawPath)}).`);
  }
}

/**
 * The temporary file for a write to `name`: hidden, in the same directory (so
 * the final `mv` is a rename within one directory: atomic), with a random
 * suffix; its parts are `TMP.1`, `TMP.2`, ... At most 100 bytes of the name
 * are kept, so the part names stay under the 255-byte limit of a file name.
 */
export function tempNameFor(name: string): string {
  let base = "";
  for (const ch of Array.from(name).slice(0, 60)) {
    if (Buffer.byteLength(base + ch) > 100) break;
    base += ch;
  }
  return `.${base}.mibyan-${randomBytes(6).toString("hex")}`;
}
