/**
 * What the process registry keeps in the profile home: the checkpoint of
 * running processes, the receipts of ended ones, and which sessions continue
 * which. All three belong to the home the registry was created for, so a
 * registry keeps writing to the profile that started a process even when
 * `MIBYAN_HOME` changes later in the same Node process.
 */

import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { access, mkdir } from "node:fs/promises";
import path from "node:path";

import { mibyanHome } from "../config/home.js";
import { getConfig } from "../config/load-config.js";
import { cleanTerminalOutput } from "../terminal/ansi.js";
import { CheckpointStore, checkpointPath } from "./checkpoint.js";
import type { ProcessRecord } from "./process-record.js";
import { ReceiptStore, receiptsDir, type ReceiptRetention } from "./receipts.js";
import { SessionLineage, sessionsPath } from "./session-lineage.js";
import { PROCESS_ID_PATTERN, type ProcessEnding, type ProcessReceipt, type WriterIdentity, type CheckpointEntry } from "./types.js";
import { writerGone } from "./writer-identity.js";

export interface PersistenceOptions {
  /**
   * The profile home for the checkpoint, receipts and session continuations.
   * Default: `mibyanHome()` when the registry is created. `false` keeps
   * nothing on disk: no adoption by a later process, no receipts.
   */
  home?: string | false;
  /** Receipt retention. Default: config `processes.results.max_age_days` / `max_count`, else 7 days and 1,000. */
  retention?: Partial<ReceiptRetention>;
  /** Characters of output a receipt keeps (the end). Default 50,000. */
  receiptOutputChars?: number;
}

const DAY_MS = 24 * 3600 * 1000;

/** Retention from config.yaml (`processes.results`), where set. */
function configuredRetention(): Partial<ReceiptRetention> {
  try {
    const results = getConfig().config.processes?.results;
    const retention: Partial<ReceiptRetention> = {};
    if (results?.maxAgeDays !== undefined) retention.maxAgeMs = results.maxAgeDays * DAY_MS;
    if (results?.maxCount !== undefined) retention.maxCount = results.maxCount;
    return retention;
  } catch {
    // An unreadable config.yaml is reported where the rest of the runtime loads it.
    return {};
  }
}

export class ProcessPersistence {
  /** Set once the registry has looked for orphans on its first use. */
  adoptedOnce = false;

  private constructor(
    readonly home: string,
    readonly checkpoint: CheckpointStore,
    readonly receipts: ReceiptStore,
    readonly lineage: SessionLineage,
    private readonly writer: WriterIdentity,
  ) {}

  static create(options: PersistenceOptions, writer: WriterIdentity): ProcessPersistence | undefined {
    if (options.home === false) return undefined;
    const home = options.home ?? mibyanHome();
    const retention = { ...configuredRetention(), ...options.retention };
    const receipts = new ReceiptStore({
      dir: receiptsDir(home),
      retention,
      ...(options.receiptOutputChars !== undefined ? { maxOutputChars: options.receiptOutputChars } : {}),
    });
    return new ProcessPersistence(home, new CheckpointStore({ file: checkpointPath(home), writer }), receipts, new SessionLineage(sessionsPath(home)), writer);
  }

  static newId(): string {
    return `proc_${randomBytes(6).toString("hex")}`;
  }

  static validId(id: string): boolean {
    return PROCESS_ID_PATTERN.test(id);
  }

  #writable: Promise<void> | undefined;

  /**
   * Rejects when the checkpoint's or the receipts' directory cannot be made
   * or written: a start must fail up front, not leave a process whose end
   * cannot be recorded. Checked once per registry (again after a failure).
   */
  assertWritable(): Promise<void> {
    this.#writable ??= (async () => {
      for (const dir of [path.dirname(this.checkpoint.file), this.receipts.dir]) {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await access(dir, constants.W_OK | constants.X_OK);
      }
    })();
    this.#writable.catch(() => {
      this.#writable = undefined;
    });
    return this.#writable;
  }

  /** Whether an entry's registry is certainly gone, so the entry may be adopted. */
  orphaned(entry: CheckpointEntry): boolean {
    return writerGone(entry.writer, this.writer);
  }

  /** Writes the receipt of an ended record; returns the receipt that stands (another producer's, if it wrote first). */
  async writeReceipt(record: ProcessRecord, ended: ProcessEnding, exitCode: number | undefined, reason: string | null, endedAt: number): Promise<ProcessReceipt> {
    const { entry } = record;
    const startedAt = Date.parse(entry.startedAt);
    const receipt: ProcessReceipt = {
      version: 1,
      id: entry.id,
      owner: entry.owner,
      taskId: entry.taskId,
      backend: entry.backend,
      command: entry.command,
      cwd: entry.cwd,
      pid: entry.pid,
      pty: entry.pty,
      startedAt: entry.startedAt,
      endedAt: new Date(endedAt).toISOString(),
      durationMs: Math.max(0, endedAt - startedAt),
      exitCode: exitCode ?? null,
      ended,
      reason,
      output: cleanTerminalOutput(record.buffer.toString()),
      outputBytes: record.offset,
      outputTruncated: record.buffer.truncated,
      logPath: entry.logPath,
      writer: this.writer,
    };
    return (await this.receipts.write(receipt)).receipt;
  }
}
