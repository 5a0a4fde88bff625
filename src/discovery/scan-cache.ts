import { mkdirSync, renameSync, writeFileSync, type Stats } from "node:fs";
import path from "node:path";
import { readRegularFileSync, RegularFileError } from "../util/read-regular-file.js";
import type { ModuleAnalysis } from "./static-analysis.js";

const CACHE_VERSION = 1;

/** Far above any real cache (a few hundred bytes per tool module). */
export const MAX_SCAN_CACHE_BYTES = 4 * 1024 * 1024;

/** A file's identity for the cache: any write changes at least one of these. */
export interface FileStamp {
  size: string;
  mtimeNs: string;
  ctimeNs: string;
  ino: string;
}

interface CacheFile {
  version: number;
  files: Record<string, { stamp: FileStamp; analysis: ModuleAnalysis }>;
}

/**
 * Remembers which modules register tools, keyed by path and file stamp, so a
 * start-up with no changed tool file parses nothing. A new or changed file
 * misses the cache and is parsed, so adding a tool file still needs no list.
 *
 * The cache is a file anyone who can write to the profile home can change, so
 * it is read like untrusted input: only a regular file of bounded size, owned
 * by this user and writable by no one else, whose every entry has the right
 * shape. Anything else is ignored (with the reason in `ignored`) and rebuilt.
 */
export class ScanCache {
  private data: CacheFile = { version: CACHE_VERSION, files: Object.create(null) as CacheFile["files"] };
  private dirty = false;
  /** Why an existing cache file was not used, if it was not. */
  readonly ignored: string | undefined;

  constructor(private readonly file: string | undefined) {
    if (file === undefined) return;
    let text: string;
    try {
      text = readRegularFileSync(file, MAX_SCAN_CACHE_BYTES, checkOwnership).text;
    } catch (thrown) {
      if (thrown instanceof RegularFileError && thrown.problem === "missing") return;
      this.ignored = (thrown as Error).message;
      this.dirty = true;
      return;
    }
    const parsed = parseCache(text);
    if (typeof parsed === "string") {
      this.ignored = parsed;
      this.dirty = true;
    } else this.data = parsed;
  }

  get(modulePath: string, stamp: FileStamp): ModuleAnalysis | undefined {
    const hit = Object.hasOwn(this.data.files, modulePath) ? this.data.files[modulePath] : undefined;
    if (hit === undefined) return undefined;
    const same = hit.stamp.size === stamp.size && hit.stamp.mtimeNs === stamp.mtimeNs && hit.stamp.ctimeNs === stamp.ctimeNs && hit.stamp.ino === stamp.ino;
    return same ? hit.analysis : undefined;
  }

  set(modulePath: string, stamp: FileStamp, analysis: ModuleAnalysis): void {
    this.data.files[modulePath] = { stamp, analysis };
    this.dirty = true;
  }

  /** Drops entries of files in `dir` that no longer exist. */
  retainOnly(dir: string, present: ReadonlySet<string>): void {
    for (const modulePath of Object.keys(this.data.files)) {
      if (path.dirname(modulePath) === dir && !present.has(modulePath)) {
        delete this.data.files[modulePath];
        this.dirty = true;
      }
    }
  }

  /** Writes the cache atomically (temporary file, then rename); returns the error instead of throwing. */
  save(): Error | undefined {
    if (this.file === undefined || !this.dirty) return undefined;
    try {
      mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      const temporary = `${this.file}.${process.pid}.tmp`;
      writeFileSync(temporary, JSON.stringify(this.data), { mode: 0o600 });
      renameSync(temporary, this.file);
      this.dirty = false;
      return undefined;
    } catch (thrown) {
      return thrown as Error;
    }
  }
}

/** A cache another user owns, or that others may write, may say anything: it is not used. */
function checkOwnership(stat: Stats): void {
  if (typeof process.getuid !== "function") return; // Windows: no POSIX owner or mode bits to go by
  if (stat.uid !== process.getuid()) throw new Error(`it is owned by uid ${stat.uid}, not by this user`);
  if ((stat.mode & 0o022) !== 0) throw new Error(`others may write it (mode ${(stat.mode & 0o777).toString(8)})`);
}

/** The cache, or why it cannot be used. Every entry is checked: one bad entry means the file was not written by us. */
function parseCache(text: string): CacheFile | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (thrown) {
    return `it is not JSON (${(thrown as Error).message})`;
  }
  if (!isRecord(parsed)) return "it is not a JSON object";
  if (parsed.version !== CACHE_VERSION) return `it has version ${JSON.stringify(parsed.version)}, not ${CACHE_VERSION}`;
  if (!isRecord(parsed.files)) return "its files are not an object";
  const files = Object.create(null) as CacheFile["files"];
  for (const [modulePath, entry] of Object.entries(parsed.files)) {
    if (!path.isAbsolute(modulePath) || !isRecord(entry) || !isStamp(entry.stamp) || !isAnalysis(entry.analysis)) {
      return `its entry for ${JSON.stringify(modulePath.slice(0, 200))} is malformed`;
    }
    files[modulePath] = { stamp: entry.stamp, analysis: entry.analysis };
  }
  return { version: CACHE_VERSION, files };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isStamp(value: unknown): value is FileStamp {
  return isRecord(value) && (["size", "mtimeNs", "ctimeNs", "ino"] as const).every((key) => typeof value[key] === "string" && /^\d{1,40}$/.test(value[key] as string));
}

function isAnalysis(value: unknown): value is ModuleAnalysis {
  if (!isRecord(value) || typeof value.registers !== "boolean" || !Array.isArray(value.tools)) return false;
  return value.tools.every(
    (tool) => isRecord(tool) && (tool.name === undefined || typeof tool.name === "string") && (tool.toolset === undefined || typeof tool.toolset === "string"),
  );
}
