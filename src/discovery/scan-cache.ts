import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ModuleAnalysis } from "./static-analysis.js";

const CACHE_VERSION = 1;

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
 */
export class ScanCache {
  private data: CacheFile = { version: CACHE_VERSION, files: {} };
  private dirty = false;

  constructor(private readonly file: string | undefined) {
    if (file === undefined) return;
    try {
      const parsed = JSON.parse(readFileSync(file, "utf8")) as CacheFile;
      if (parsed.version === CACHE_VERSION && parsed.files !== null && typeof parsed.files === "object") this.data = parsed;
    } catch {
      // No cache yet, or an unreadable one: start empty and rebuild it.
    }
  }

  get(modulePath: string, stamp: FileStamp): ModuleAnalysis | undefined {
    const hit = this.data.files[modulePath];
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
      mkdirSync(path.dirname(this.file), { recursive: true });
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
