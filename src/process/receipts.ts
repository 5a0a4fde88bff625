/**
 * The receipt store: one JSON file per ended background process under
 * `<profile home>/logs/process-results/<id>.json` (docs/process-receipts.md).
 *
 * - Files are created with `createFileAtomic` (temporary file, fsync, link):
 *   a receipt is whole or absent, and the first one written for an id stands;
 *   a later or concurrent writer gets the existing one back.
 * - What goes to disk is redacted here whatever the caller did, and the
 *   output is bounded to its end, so no caller can leak a secret into a file
 *   that outlives the process.
 * - Reading is passive; pruning (age and count) is idempotent, so two pruners
 *   in different processes may race without harm.
 */

import { mkdir, readdir, readFile, stat, unlink } from "node:fs/promises";
import path from "node:path";

import { REDACTED, redactSecrets } from "../redaction/redact.js";
import { createFileAtomic, isTempFileName, type AtomicWriteHooks } from "../util/atomic-file.js";
import { PROCESS_ID_PATTERN, type ProcessEnding, type ProcessReceipt, type WriterIdentity } from "./types.js";

export interface ReceiptRetention {
  /** Receipts whose process ended longer ago than this are removed. */
  maxAgeMs: number;
  /** At most this many receipts are kept (the newest). */
  maxCount: number;
}

export const DEFAULT_RECEIPT_RETENTION: ReceiptRetention = Object.freeze({ maxAgeMs: 7 * 24 * 60 * 60 * 1000, maxCount: 1000 });
export const DEFAULT_RECEIPT_OUTPUT_CHARS = 50_000;
const DEFAULT_PRUNE_INTERVAL_MS = 60_000;
/** A temporary file this old belongs to a writer that died: a live one links it within milliseconds. */
const STALE_TEMP_MS = 60_000;
/** Files read at once by `list` and `prune`: a thousand receipts must not exhaust file descriptors. */
const READ_CONCURRENCY = 32;
const RECEIPT_FILE = /^proc_[0-9a-f]{12}\.json$/;
const ENDINGS: readonly ProcessEnding[] = ["exited", "killed", "timed_out", "lost"];

export interface ReceiptStoreOptions {
  dir: string;
  retention?: Partial<ReceiptRetention>;
  maxOutputChars?: number;
  pruneIntervalMs?: number;
  /** Passed to `createFileAtomic` (tests simulate crashes). */
  hooks?: AtomicWriteHooks;
  /** Told about each receipt file `list` skips because it cannot be read or is malformed. */
  onCorrupt?: (file: string, error: Error) => void;
  /** The clock for retention, in ms since the epoch. */
  now?: () => number;
}

/** Where the receipts of the profile at `home` live. */
export function receiptsDir(home: string): string {
  return path.join(home, "logs", "process-results");
}

export class InvalidProcessIdError extends Error {
  readonly code = "invalid_id";
  constructor(id: unknown) {
    // The id may be hostile and long: quote a bounded piece of it only.
    super(`invalid process id ${JSON.stringify(String(id).slice(0, 80))}: expected proc_ followed by 12 hex digits`);
    this.name = "InvalidProcessIdError";
  }
}

export class CorruptReceiptError extends Error {
  readonly code = "corrupt_receipt";
  constructor(
    readonly file: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`corrupt process receipt ${file}: ${detail}`, options);
    this.name = "CorruptReceiptError";
  }
}

function checkId(id: unknown): asserts id is string {
  if (typeof id !== "string" || !PROCESS_ID_PATTERN.test(id)) throw new InvalidProcessIdError(id);
}

/** Drops a partial `[REDACTED]` marker or a lone low surrogate that a cut at `start` would leave at the front of `text.slice(start)`. */
function safeCutStart(text: string, start: number): number {
  if (start <= 0) return 0;
  const marker = text.lastIndexOf(REDACTED, start - 1);
  if (marker >= 0 && marker + REDACTED.length > start) start = marker + REDACTED.length;
  const unit = text.charCodeAt(start);
  if (unit >= 0xdc00 && unit <= 0xdfff) start += 1;
  return start;
}

/**
 * The end of `text`, at most `maxChars` characters, redacted. The whole text
 * is redacted before the cut, because a cut through a secret can leave a tail
 * no pattern recognises (a PEM body without its BEGIN line, half a token); the
 * tail is redacted again since a cut changes what precedes it (`^`, `\b`).
 */
export function boundOutput(text: string, maxChars: number): { output: string; truncated: boolean } {
  let out = redactSecrets(text);
  let truncated = false;
  // A second redaction can lengthen the tail (a short value becomes the
  // marker), hence the loop; each round only removes text from the front.
  for (let round = 0; out.length > maxChars; round++) {
    truncated = true;
    if (round === 8) return { output: "", truncated }; // never seen; bounded and secret-free beats complete
    out = redactSecrets(out.slice(safeCutStart(out, out.length - maxChars)));
  }
  return { output: out, truncated };
}

type Check = (value: unknown) => boolean;
const isString: Check = (v) => typeof v === "string";
const isStringOrNull: Check = (v) => v === null || typeof v === "string";
const isBoolean: Check = (v) => typeof v === "boolean";
const isInteger: Check = (v) => Number.isSafeInteger(v);
const isCount: Check = (v) => Number.isSafeInteger(v) && (v as number) >= 0;
const isDate: Check = (v) => typeof v === "string" && Number.isFinite(Date.parse(v));

const RECEIPT_FIELDS: Record<Exclude<keyof ProcessReceipt, "writer">, Check> = {
  version: (v) => v === 1,
  id: (v) => typeof v === "string" && PROCESS_ID_PATTERN.test(v),
  owner: isString,
  taskId: isString,
  backend: isString,
  command: isString,
  cwd: isStringOrNull,
  pid: isInteger,
  pty: isBoolean,
  startedAt: isDate,
  endedAt: isDate,
  durationMs: (v) => typeof v === "number" && Number.isFinite(v) && v >= 0,
  exitCode: (v) => v === null || Number.isSafeInteger(v),
  ended: (v) => ENDINGS.includes(v as ProcessEnding),
  reason: isStringOrNull,
  output: isString,
  outputBytes: isCount,
  outputTruncated: isBoolean,
  logPath: isString,
};
const isOptionalString: Check = (v) => v === undefined || typeof v === "string";
const WRITER_FIELDS: Record<keyof WriterIdentity, Check> = {
  pid: isInteger,
  startTime: isString,
  host: isString,
  instance: isString,
  bootId: isOptionalString,
  pidNamespace: isOptionalString,
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The `fields` of `value`, each checked, or the name of the first bad one. */
function pick(value: unknown, fields: Record<string, Check>, prefix: string): Record<string, unknown> | string {
  if (!isRecord(value)) return prefix === "" ? "not a JSON object" : `field "${prefix.slice(0, -1)}" is missing or invalid`;
  const out: Record<string, unknown> = {};
  for (const [key, check] of Object.entries(fields)) {
    if (!check(value[key])) return `field "${prefix}${key}" is missing or invalid`;
    if (value[key] !== undefined) out[key] = value[key];
  }
  return out;
}

/**
 * A fresh receipt holding only the known fields of `value`, or the reason it
 * is not one. Unknown fields are dropped so nothing unvalidated leaves here.
 */
export function parseReceipt(value: unknown): { receipt: ProcessReceipt } | { error: string } {
  const receipt = pick(value, RECEIPT_FIELDS, "");
  if (typeof receipt === "string") return { error: receipt };
  const writer = pick((value as Record<string, unknown>).writer, WRITER_FIELDS, "writer.");
  if (typeof writer === "string") return { error: writer };
  return { receipt: { ...receipt, writer } as unknown as ProcessReceipt };
}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === "ENOENT";
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function checkLimit(name: string, value: number): number {
  if (typeof value !== "number" || Number.isNaN(value) || value < 0) throw new RangeError(`ReceiptStore: ${name} must be a number >= 0, got ${String(value)}`);
  return value;
}

export class ReceiptStore {
  readonly dir: string;
  readonly #retention: ReceiptRetention;
  readonly #maxOutputChars: number;
  readonly #pruneIntervalMs: number;
  readonly #hooks: AtomicWriteHooks;
  readonly #onCorrupt: (file: string, error: Error) => void;
  readonly #now: () => number;
  #lastPruneAt: number | undefined;

  constructor(options: ReceiptStoreOptions) {
    this.dir = path.resolve(options.dir);
    this.#retention = {
      maxAgeMs: checkLimit("retention.maxAgeMs", options.retention?.maxAgeMs ?? DEFAULT_RECEIPT_RETENTION.maxAgeMs),
      maxCount: Math.floor(checkLimit("retention.maxCount", options.retention?.maxCount ?? DEFAULT_RECEIPT_RETENTION.maxCount)),
    };
    this.#maxOutputChars = Math.floor(checkLimit("maxOutputChars", options.maxOutputChars ?? DEFAULT_RECEIPT_OUTPUT_CHARS));
    this.#pruneIntervalMs = checkLimit("pruneIntervalMs", options.pruneIntervalMs ?? DEFAULT_PRUNE_INTERVAL_MS);
    this.#hooks = options.hooks ?? {};
    this.#onCorrupt = options.onCorrupt ?? (() => undefined);
    this.#now = options.now ?? Date.now;
  }

  #file(id: string): string {
    return path.join(this.dir, `${id}.json`);
  }

  /** Redacts and bounds the receipt, then creates its file if none exists. */
  async write(receipt: ProcessReceipt): Promise<{ receipt: ProcessReceipt; written: boolean }> {
    checkId(receipt?.id);
    if (typeof receipt.output !== "string") throw new TypeError(`invalid process receipt ${receipt.id}: field "output" is missing or invalid`);
    const { output, truncated } = boundOutput(receipt.output, this.#maxOutputChars);
    const parsed = parseReceipt({
      ...receipt,
      command: typeof receipt.command === "string" ? redactSecrets(receipt.command) : receipt.command,
      cwd: typeof receipt.cwd === "string" ? redactSecrets(receipt.cwd) : receipt.cwd,
      reason: typeof receipt.reason === "string" ? redactSecrets(receipt.reason) : receipt.reason,
      output,
      outputTruncated: receipt.outputTruncated === true || truncated,
    });
    // Refused here rather than written: `read` would call such a file corrupt.
    if ("error" in parsed) throw new TypeError(`invalid process receipt ${receipt.id}: ${parsed.error}`);
    const clean = parsed.receipt;
    const file = this.#file(clean.id);
    const data = `${JSON.stringify(clean, null, 2)}\n`;

    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    // A pruner may remove the existing receipt between our failed link and
    // our read of it; then the name is free again and we try again.
    for (let attempt = 0; ; attempt++) {
      if (await createFileAtomic(file, data, 0o600, this.#hooks)) {
        await this.#maybePrune();
        return { receipt: clean, written: true };
      }
      const existing = await this.read(clean.id);
      if (existing) return { receipt: existing, written: false };
      if (attempt === 2) throw new Error(`could not write process receipt ${file}: it keeps appearing and disappearing`);
    }
  }

  /** The receipt of `id`, or undefined when there is none. Throws `CorruptReceiptError` for a malformed file. */
  async read(id: string): Promise<ProcessReceipt | undefined> {
    checkId(id);
    const file = this.#file(id);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new CorruptReceiptError(file, `not valid JSON (${(err as Error).message})`, { cause: err });
    }
    const parsed = parseReceipt(json);
    if ("error" in parsed) throw new CorruptReceiptError(file, parsed.error);
    // A file renamed by hand to another id would otherwise answer for that id.
    if (parsed.receipt.id !== id) throw new CorruptReceiptError(file, `holds the receipt of ${parsed.receipt.id}`);
    return parsed.receipt;
  }

  /** All valid receipts (passing `filter`), newest first by `endedAt`. Malformed files are skipped and reported to `onCorrupt`. */
  async list(filter?: (receipt: ProcessReceipt) => boolean): Promise<ProcessReceipt[]> {
    const names = await this.#receiptNames();
    const read = await mapLimit(names, READ_CONCURRENCY, async (name) => {
      try {
        return await this.read(name.slice(0, -".json".length));
      } catch (err) {
        try {
          this.#onCorrupt(path.join(this.dir, name), err instanceof Error ? err : new Error(String(err)));
        } catch {
          // A failing report must not cost the caller the other receipts.
        }
        return undefined;
      }
    });
    const receipts = read.filter((r): r is ProcessReceipt => r !== undefined && (!filter || filter(r)));
    return receipts.sort((a, b) => Date.parse(b.endedAt) - Date.parse(a.endedAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /**
   * Removes receipts older than the retention age, then all but the newest
   * `maxCount`, and temporary files left by crashed writers. Safe to run in
   * several processes at once: a file someone else removed first is not an error.
   */
  async prune(): Promise<{ removed: number }> {
    const now = this.#now();
    this.#lastPruneAt = now;
    let entries: string[];
    try {
      entries = await readdir(this.dir);
    } catch (err) {
      if (isMissing(err)) return { removed: 0 };
      throw err;
    }
    const doomed: string[] = [];
    const temps = entries.filter(isTempFileName);
    const tempAges = await mapLimit(temps, READ_CONCURRENCY, (name) => this.#mtime(name));
    temps.forEach((name, i) => {
      const mtime = tempAges[i];
      if (mtime !== undefined && now - mtime > STALE_TEMP_MS) doomed.push(name);
    });

    const names = entries.filter((name) => RECEIPT_FILE.test(name));
    const times = await mapLimit(names, READ_CONCURRENCY, (name) => this.#endedAt(name));
    const kept: { name: string; time: number }[] = [];
    names.forEach((name, i) => {
      const time = times[i];
      if (time === undefined) return; // removed meanwhile
      if (now - time > this.#retention.maxAgeMs) doomed.push(name);
      else kept.push({ name, time });
    });
    kept.sort((a, b) => b.time - a.time || (a.name < b.name ? -1 : 1));
    for (const { name } of kept.slice(this.#retention.maxCount)) doomed.push(name);

    const removed = await mapLimit(doomed, READ_CONCURRENCY, async (name) => {
      try {
        await unlink(path.join(this.dir, name));
        return 1;
      } catch (err) {
        if (isMissing(err)) return 0;
        throw err;
      }
    });
    return { removed: removed.reduce<number>((a, b) => a + b, 0) };
  }

  async #maybePrune(): Promise<void> {
    // `prune` sets #lastPruneAt before its first await, so concurrent writes start one prune, not many.
    if (this.#lastPruneAt !== undefined && this.#now() - this.#lastPruneAt < this.#pruneIntervalMs) return;
    // The receipt is on disk already: a failed prune must not fail the write; the next one retries.
    await this.prune().catch(() => undefined);
  }

  async #receiptNames(): Promise<string[]> {
    try {
      return (await readdir(this.dir)).filter((name) => !isTempFileName(name) && RECEIPT_FILE.test(name));
    } catch (err) {
      if (isMissing(err)) return [];
      throw err;
    }
  }

  async #mtime(name: string): Promise<number | undefined> {
    try {
      return (await stat(path.join(this.dir, name))).mtimeMs;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  /** When the receipt's process ended; the file's mtime when it does not parse, so a corrupt file still ages out. */
  async #endedAt(name: string): Promise<number | undefined> {
    try {
      const parsed = parseReceipt(JSON.parse(await readFile(path.join(this.dir, name), "utf8")));
      if ("receipt" in parsed) return Date.parse(parsed.receipt.endedAt);
    } catch (err) {
      if (isMissing(err)) return undefined;
    }
    return this.#mtime(name);
  }
}
