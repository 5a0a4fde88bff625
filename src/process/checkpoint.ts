/**
 * The checkpoint file: the background processes that run, kept in the profile
 * home so that a registry started after a crash (or a later one-shot CLI
 * process) can find and adopt them.
 *
 * Several registries (several Node processes, or several in one) write the
 * same file. Every change is a read-modify-write under the file's lock, and
 * merged: a writer changes only the entries it names, so it never drops what
 * another wrote meanwhile. The file is replaced atomically, so a reader without
 * the lock still always sees a whole file. See docs/process-checkpoint.md.
 */

import { randomBytes } from "node:crypto";
import { readFileSync, renameSync, statSync, unlinkSync, writeFileSync, type BigIntStats } from "node:fs";
import { mkdir, readFile, chmod, rename, stat } from "node:fs/promises";
import path from "node:path";
import { TEMP_SUFFIX } from "../util/atomic-file.js";
import { withFileLock } from "../util/file-lock.js";
import { createStderrLogger } from "../util/logger.js";
import { PROCESS_ID_PATTERN, type CheckpointEntry, type WriterIdentity } from "./types.js";
import { writerGone } from "./writer-identity.js";

const FORMAT_VERSION = 1;
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/** `<home>/processes/checkpoint.json`. */
export function checkpointPath(home: string): string {
  return path.join(home, "processes", "checkpoint.json");
}

/** The checkpoint file exists but is not a whole checkpoint (bad JSON, wrong shape, unknown version). */
export class CorruptCheckpointError extends Error {
  readonly code = "corrupt_checkpoint";
  constructor(
    readonly file: string,
    /** What is wrong, without the file name. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`checkpoint file ${file} is corrupt: ${reason}`, options);
    this.name = "CorruptCheckpointError";
  }
}

export interface CheckpointStoreOptions {
  file: string;
  /** Written into the entries this store claims; `remove` drops only entries with its `instance`. */
  writer: WriterIdentity;
  /** Age after which a lock left by a killed holder is taken over (proper-lockfile raises anything under 2 s to 2 s). Default 10 s. */
  lockStaleMs?: number;
  /** Told about a corrupt file moved aside, and about invalid entries dropped. Default: a warning on stderr. */
  onCorrupt?: (file: string, error: Error) => void;
}

type Problem = (message: string) => void;

function isPosInt(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What is wrong with a writer identity, or undefined when it is whole. */
function writerProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "writer is not an object";
  if (!isPosInt(value.pid)) return "writer.pid is not a positive integer";
  if (typeof value.startTime !== "string" || !/^\d*$/.test(value.startTime)) return "writer.startTime is not a string of digits";
  if (typeof value.host !== "string") return "writer.host is not a string";
  if (typeof value.instance !== "string" || value.instance === "") return "writer.instance is not a non-empty string";
  if (value.bootId !== undefined && typeof value.bootId !== "string") return "writer.bootId is not a string";
  if (value.pidNamespace !== undefined && typeof value.pidNamespace !== "string") return "writer.pidNamespace is not a string";
  return undefined;
}

/** What is wrong with an entry, or undefined when every field has its type. */
export function checkpointEntryProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "not an object";
  if (typeof value.id !== "string" || !PROCESS_ID_PATTERN.test(value.id)) return "id is not a process id";
  for (const key of ["owner", "taskId", "backend", "startTime", "command", "dir", "logPath", "startedAt"] as const) {
    if (typeof value[key] !== "string") return `${key} is not a string`;
  }
  if (!Number.isFinite(Date.parse(value.startedAt as string))) return "startedAt is not a date";
  if (value.phase !== undefined && value.phase !== "launching") return "phase is neither absent nor \"launching\"";
  if (value.phase === "launching") {
    // Written before the launcher ran: nothing is known of the process yet.
    if (value.pid !== 0 || value.pgid !== 0 || value.startTime !== "") return "a launching entry has a pid";
  } else {
    if (!isPosInt(value.pid)) return "pid is not a positive integer";
    if (!isPosInt(value.pgid)) return "pgid is not a positive integer";
  }
  if (value.nonce !== undefined && (typeof value.nonce !== "string" || !/^[0-9a-f]{16,64}$/.test(value.nonce))) return "nonce is not a hex token";
  if (value.holderPid !== undefined && !isPosInt(value.holderPid)) return "holderPid is not a positive integer";
  if (value.holderStartTime !== undefined && (typeof value.holderStartTime !== "string" || !/^\d+$/.test(value.holderStartTime))) return "holderStartTime is not digits";
  if (value.cwd !== null && typeof value.cwd !== "string") return "cwd is neither a string nor null";
  if (typeof value.pty !== "boolean") return "pty is not a boolean";
  if (typeof value.notifyOnComplete !== "boolean") return "notifyOnComplete is not a boolean";
  if (!Array.isArray(value.watchPatterns) || !value.watchPatterns.every((p) => typeof p === "string")) return "watchPatterns is not a list of strings";
  return writerProblem(value.writer);
}

/**
 * The entries of a parsed file, by id. Throws when the file as a whole is not
 * a checkpoint; drops (and reports) single entries that are not whole, so one
 * bad entry does not cost every other registry its processes.
 */
function parseCheckpoint(file: string, text: string, problem: Problem): Map<string, CheckpointEntry> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new CorruptCheckpointError(file, `not JSON (${(err as Error).message})`, { cause: err });
  }
  if (!isObject(data)) throw new CorruptCheckpointError(file, "not a JSON object");
  if (data.version !== FORMAT_VERSION) throw new CorruptCheckpointError(file, `unknown version ${JSON.stringify(data.version)}`);
  if (!Array.isArray(data.entries)) throw new CorruptCheckpointError(file, "entries is not a list");
  const entries = new Map<string, CheckpointEntry>();
  data.entries.forEach((entry, index) => {
    const wrong = checkpointEntryProblem(entry);
    const label = isObject(entry) && typeof entry.id === "string" ? `entry ${index} (${JSON.stringify(entry.id)})` : `entry ${index}`;
    if (wrong !== undefined) return problem(`${label} dropped: ${wrong}`);
    const valid = entry as CheckpointEntry;
    if (entries.has(valid.id)) problem(`${label} repeats an id; the later one is kept`);
    // Unknown extra fields pass through untouched, so rewriting the file never loses what a newer writer added.
    entries.set(valid.id, valid);
  });
  return entries;
}

/**
 * Each entry's line as UTF-8 bytes, made once: entries are replaced, never
 * changed in place, so a line stays right, and a rewrite of a thousand
 * entries only copies bytes (no JSON, no string encoding per entry).
 */
const lines = new WeakMap<CheckpointEntry, Buffer>();

function lineOf(entry: CheckpointEntry): Buffer {
  let line = lines.get(entry);
  if (line === undefined) {
    line = Buffer.from(JSON.stringify(entry), "utf8");
    lines.set(entry, line);
  }
  return line;
}

const HEAD = Buffer.from(`{"version":${FORMAT_VERSION},"entries":[\n`);
const SEPARATOR = Buffer.from(",\n");
const TAIL = Buffer.from("\n]}\n");

/** One entry a line: readable, without the cost of indenting every field of a thousand entries. */
function serialize(entries: Map<string, CheckpointEntry>): Buffer {
  const parts: Buffer[] = [HEAD];
  let first = true;
  for (const entry of entries.values()) {
    if (!first) parts.push(SEPARATOR);
    parts.push(lineOf(entry));
    first = false;
  }
  parts.push(TAIL);
  return Buffer.concat(parts);
}

/** What identifies one version of the file: a rename gives it a new inode and change time. */
function versionOf(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/**
 * Replaces the file in one step (a temporary file renamed over it), so a
 * reader or a killed writer never sees half a file. Not fsynced, unlike the
 * receipts: the checkpoint lists processes that run, and a crash of the
 * machine that could lose an unsynced rename ends every one of them anyway
 * (the boot id tells a later registry so). The two fsyncs were most of the
 * time a background start took.
 *
 * Synchronous, like the stat and read around it in `applyBatch`: the
 * rewrites of one store are serial, and each thread-pool hop of an
 * asynchronous call waited behind whatever blocked the event loop (spawning
 * a launcher blocks it for milliseconds), so a rewrite took tens of
 * milliseconds of waiting for about one of work.
 */
function replaceFile(file: string, data: Buffer): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString("hex")}${TEMP_SUFFIX}`);
  writeFileSync(tmp, data, { flag: "wx", mode: FILE_MODE });
  try {
    renameSync(tmp, file);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // Already gone.
    }
    throw err;
  }
}

function statOrUndefined(file: string): BigIntStats | undefined {
  try {
    return statSync(file, { bigint: true });
  } catch {
    return undefined;
  }
}

type Change<T> = (entries: Map<string, CheckpointEntry>) => { changed: boolean; result: T };

function sameInstance(a: WriterIdentity, b: WriterIdentity): boolean {
  return a.instance === b.instance;
}

export class CheckpointStore {
  readonly file: string;
  readonly writer: WriterIdentity;
  private readonly lockStaleMs: number | undefined;
  private readonly onCorrupt: (file: string, error: Error) => void;
  private readonly pending: Array<{ change: Change<unknown>; resolve: (value: unknown) => void; reject: (error: unknown) => void }> = [];
  private draining: Promise<void> | undefined;
  /** The entries of the version of the file this store wrote last (see `applyBatch`). */
  private lastWritten: { version: string; entries: Map<string, CheckpointEntry> } | undefined;
  private dirReady: Promise<void> | undefined;

  constructor(options: CheckpointStoreOptions) {
    const wrong = writerProblem(options.writer);
    if (wrong !== undefined) throw new TypeError(`invalid checkpoint writer: ${wrong}`);
    this.file = path.resolve(options.file);
    this.writer = { ...options.writer };
    this.lockStaleMs = options.lockStaleMs;
    if (options.onCorrupt) {
      this.onCorrupt = options.onCorrupt;
    } else {
      const logger = createStderrLogger();
      this.onCorrupt = (_file, error) => logger.warn(error.message);
    }
  }

  /** All entries on disk (no lock; the file is replaced atomically so a read is always whole). Invalid entries are dropped and reported through onCorrupt. */
  async read(): Promise<CheckpointEntry[]> {
    const text = await this.readText();
    if (text === undefined) return [];
    return [...parseCheckpoint(this.file, text, (m) => this.report(m)).values()];
  }

  /** Adds or replaces entries (by id) under the lock. */
  async put(entries: CheckpointEntry[]): Promise<void> {
    // Refused before the lock: an entry that `read` would drop must never be written.
    for (const entry of entries) {
      const wrong = checkpointEntryProblem(entry);
      if (wrong !== undefined) throw new TypeError(`invalid checkpoint entry: ${wrong}`);
    }
    if (entries.length === 0) return;
    await this.update((current) => {
      for (const entry of entries) current.set(entry.id, structuredClone(entry));
      return { changed: true, result: undefined };
    });
  }

  /**
   * Removes entries by id under the lock, but only those whose writer.instance
   * is this store's, unless `force` (a registry must never drop another live
   * registry's entries). Returns the ids removed.
   */
  async remove(ids: string[], options: { force?: boolean } = {}): Promise<string[]> {
    const wanted = new Set(ids.filter((id) => PROCESS_ID_PATTERN.test(id)));
    if (wanted.size === 0) return [];
    return this.update((current) => {
      const removed: string[] = [];
      for (const id of wanted) {
        const entry = current.get(id);
        if (entry === undefined) continue;
        if (!options.force && !sameInstance(entry.writer, this.writer)) continue;
        current.delete(id);
        removed.push(id);
      }
      return { changed: removed.length > 0, result: removed };
    });
  }

  /**
   * Adoption claim, under the lock: every entry that `select` accepts and
   * whose writer is gone (`writerGone`) gets this store's writer and is
   * returned. Entries whose writer is alive are left alone. Because the
   * judgement and the rewrite happen under one lock, two stores claiming at
   * once each see the other's claim, and every entry goes to exactly one.
   */
  async claimOrphans(select: (entry: CheckpointEntry) => boolean = () => true): Promise<CheckpointEntry[]> {
    return this.update((current) => {
      const claimed: CheckpointEntry[] = [];
      for (const [id, entry] of current) {
        if (sameInstance(entry.writer, this.writer)) continue;
        if (!select(structuredClone(entry))) continue;
        if (!writerGone(entry.writer, this.writer)) continue;
        const adopted: CheckpointEntry = { ...entry, writer: { ...this.writer } };
        current.set(id, adopted);
        claimed.push(structuredClone(adopted));
      }
      return { changed: claimed.length > 0, result: claimed };
    });
  }

  private readTextSync(): string | undefined {
    try {
      return readFileSync(this.file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  }

  /** The file's text; undefined when there is none. */
  private async readText(): Promise<string | undefined> {
    try {
      return await readFile(this.file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  }

  private report(message: string): void {
    this.onCorrupt(this.file, new Error(`checkpoint file ${this.file}: ${message}`));
  }

  /**
   * Queues a change. Changes asked for while another read-modify-write of this
   * store is under way are applied together in the next one (one lock, one
   * read, one write), so concurrent starts and ends in one registry do not
   * each rewrite the whole file.
   */
  private update<T>(change: Change<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ change: change as Change<unknown>, resolve: resolve as (value: unknown) => void, reject });
      this.draining ??= this.drain().finally(() => {
        this.draining = undefined;
      });
    });
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0);
      try {
        const outcomes = await this.applyBatch(batch.map((item) => item.change));
        batch.forEach((item, i) => {
          const outcome = outcomes[i]!;
          if ("error" in outcome) item.reject(outcome.error);
          else item.resolve(outcome.value);
        });
      } catch (err) {
        for (const item of batch) item.reject(err);
      }
    }
  }

  /**
   * One read-modify-write under the lock, applying `changes` in order (each
   * one's own failure is its own). A corrupt file is moved aside (kept for
   * inspection, never silently overwritten) and the changes start from no
   * entries; a file that lost invalid entries is rewritten even when the
   * changes are empty, so they are reported once rather than on every read.
   */
  private async applyBatch(changes: Change<unknown>[]): Promise<Array<{ value: unknown } | { error: unknown }>> {
    // Once per store (again after a failure): a mkdir and a chmod before every rewrite cost two thread-pool hops each time.
    this.dirReady ??= this.ensureDir().catch((err: unknown) => {
      this.dirReady = undefined;
      throw err;
    });
    await this.dirReady;
    return withFileLock(
      this.file,
      async (assertHeld) => {
        // The file as this store last wrote it (nobody wrote since): its entries without reading and parsing it again.
        // With a thousand processes that was most of the cost of a start.
        const before = statOrUndefined(this.file);
        const cached = before !== undefined && this.lastWritten?.version === versionOf(before) ? this.lastWritten.entries : undefined;
        const text = cached ? undefined : this.readTextSync();
        let entries = cached ? new Map(cached) : new Map<string, CheckpointEntry>();
        let dropped = false;
        if (text !== undefined) {
          try {
            entries = parseCheckpoint(this.file, text, (m) => {
              dropped = true;
              this.report(m);
            });
          } catch (err) {
            if (!(err instanceof CorruptCheckpointError)) throw err;
            assertHeld();
            const aside = await this.moveAside();
            this.onCorrupt(this.file, new CorruptCheckpointError(this.file, `${err.reason}; moved to ${aside}`, { cause: err }));
          }
        }
        let changed = false;
        const outcomes = changes.map((change) => {
          try {
            const outcome = change(entries);
            changed ||= outcome.changed;
            return { value: outcome.result };
          } catch (error) {
            return { error };
          }
        });
        if (changed || dropped) {
          assertHeld();
          replaceFile(this.file, serialize(entries));
          const after = statOrUndefined(this.file);
          this.lastWritten = after ? { version: versionOf(after), entries } : undefined;
        }
        return outcomes;
      },
      this.lockStaleMs === undefined ? {} : { staleMs: this.lockStaleMs },
    );
  }

  /** Renames the corrupt file to `<file>.corrupt-<timestamp>` (a free name) and returns that name. */
  private async moveAside(): Promise<string> {
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    for (let n = 0; ; n++) {
      const target = `${this.file}.corrupt-${stamp}${n === 0 ? "" : `-${n}`}`;
      const taken = await stat(target).then(
        () => true,
        () => false,
      );
      if (taken) continue;
      await rename(this.file, target);
      return target;
    }
  }

  /** The file's directory, private to the user: entries hold command lines and paths. */
  private async ensureDir(): Promise<void> {
    const dir = path.dirname(this.file);
    await mkdir(dir, { recursive: true, mode: DIR_MODE });
    // mkdir leaves an existing directory's mode alone (and a umask may narrow a new one differently).
    await chmod(dir, DIR_MODE).catch(() => undefined);
  }
}
