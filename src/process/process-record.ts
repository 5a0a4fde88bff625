/**
 * A background process as the registry holds it in memory, and `ProcessInfo`,
 * the view of it callers get (also made from a checkpoint entry of another
 * registry, or from a receipt).
 */

import type { Environment } from "../environments/types.js";
import { CappedOutput } from "../terminal/output-buffer.js";
import { OutputWatcher, type WatchLimits } from "./process-watch.js";
import type { CheckpointEntry, ProcessEnding, ProcessReceipt } from "./types.js";

/** How a process is doing. */
export type ProcessStatus = "running" | ProcessEnding;

/** What the registry reports about one process. */
export interface ProcessInfo {
  id: string;
  /** The command line, secrets redacted. */
  command: string;
  taskId: string;
  backend: string;
  pid: number;
  pty: boolean;
  status: ProcessStatus;
  /** Exit code once it ended by itself (or by a signal it did not survive: 128 + n). */
  exitCode: number | undefined;
  startedAt: number;
  endedAt: number | undefined;
  /** Bytes the process has printed so far (as far as read). */
  outputBytes: number;
  /** The directory it started in, when known. */
  cwd: string | null;
  /** Why it ended as it did, when that needs saying (always for `lost`). */
  reason: string | null;
  /**
   * Where the answer comes from: `live` (this registry manages it), `elsewhere`
   * (another running mibyan process does; `managedBy` says which), `receipt`
   * (it ended; its retained result).
   */
  source: "live" | "elsewhere" | "receipt";
  managedBy?: { pid: number; host: string };
  /** Something the caller should know (it was not checkpointed, its receipt could not be written). */
  warning?: string;
}

export interface ProcessRecord {
  readonly entry: CheckpointEntry;
  env: Environment | undefined;
  readonly buffer: CappedOutput;
  readonly watcher: OutputWatcher | undefined;
  status: ProcessStatus;
  exitCode: number | undefined;
  endedAt: number | undefined;
  reason: string | null;
  /** Log bytes read so far. */
  offset: number;
  /** Set once `kill` signalled it, so an end without exit code reads as killed, not lost. */
  killRequested: boolean;
  /** Taken over from the checkpoint of a registry that died. */
  adopted: boolean;
  /** Serialises reads of the log, so no output is read twice. */
  refreshing: Promise<void>;
  /** Reads queued or under way (the background polling skips a process that has one). */
  inFlight: number;
  /** Set while (and after) the receipt is written; the record reads as ended only once it settles. */
  finishing: Promise<void> | undefined;
  release: (() => void) | undefined;
  receipt: ProcessReceipt | undefined;
  /** Its directory in the environment was removed (the receipt keeps the end of the output). */
  logRemoved: boolean;
  /** Its environment is this machine as Node sees it: status reads and removal go through Node's file system calls. */
  local: boolean;
  warning: string | undefined;
}

export function newProcessRecord(entry: CheckpointEntry, env: Environment | undefined, bufferChars: number, watch: WatchLimits): ProcessRecord {
  return {
    entry,
    env,
    buffer: new CappedOutput(bufferChars, { headRatio: 0 }),
    watcher: entry.watchPatterns.length > 0 ? new OutputWatcher(entry.watchPatterns, watch) : undefined,
    status: "running",
    exitCode: undefined,
    endedAt: undefined,
    reason: null,
    offset: 0,
    killRequested: false,
    adopted: false,
    refreshing: Promise.resolve(),
    inFlight: 0,
    finishing: undefined,
    release: undefined,
    receipt: undefined,
    logRemoved: false,
    local: false,
    warning: undefined,
  };
}

export function recordInfo(record: ProcessRecord): ProcessInfo {
  const info: ProcessInfo = {
    ...entryInfo(record.entry),
    status: record.status,
    exitCode: record.exitCode,
    endedAt: record.endedAt,
    outputBytes: record.offset,
    reason: record.reason,
    source: "live",
  };
  delete info.managedBy;
  if (record.warning !== undefined) info.warning = record.warning;
  return info;
}

/** A process another registry manages, as its checkpoint entry describes it. */
export function entryInfo(entry: CheckpointEntry): ProcessInfo {
  return {
    id: entry.id,
    command: entry.command,
    taskId: entry.taskId,
    backend: entry.backend,
    pid: entry.pid,
    pty: entry.pty,
    status: "running",
    exitCode: undefined,
    startedAt: Date.parse(entry.startedAt),
    endedAt: undefined,
    outputBytes: 0,
    cwd: entry.cwd,
    reason: null,
    source: "elsewhere",
    managedBy: { pid: entry.writer.pid, host: entry.writer.host },
  };
}

export function receiptInfo(receipt: ProcessReceipt): ProcessInfo {
  return {
    id: receipt.id,
    command: receipt.command,
    taskId: receipt.taskId,
    backend: receipt.backend,
    pid: receipt.pid,
    pty: receipt.pty,
    status: receipt.ended,
    exitCode: receipt.exitCode ?? undefined,
    startedAt: Date.parse(receipt.startedAt),
    endedAt: Date.parse(receipt.endedAt),
    outputBytes: receipt.outputBytes,
    cwd: receipt.cwd,
    reason: receipt.reason,
    source: "receipt",
  };
}
