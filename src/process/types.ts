/**
 * The records the process registry keeps on disk: checkpoint entries for
 * processes that run, receipts for processes that ended. Both are JSON files in
 * the profile home; these shapes are what is written (snake_case is not used:
 * they are read back only by this package and shown by `mibyan processes --json`).
 */

/** How a process ended. `lost`: it can no longer be observed (its pid was recycled, its environment is gone). */
export type ProcessEnding = "exited" | "killed" | "timed_out" | "lost";

/**
 * Who wrote a record: one registry in one Node process. A checkpoint entry
 * whose writer is gone (no process with that pid and start time on this host)
 * is an orphan a new registry may adopt.
 */
export interface WriterIdentity {
  /** The Node process's pid. */
  pid: number;
  /** Its start time as the kernel reports it (/proc/<pid>/stat field 22, clock ticks since boot); "" where unknown (not Linux). */
  startTime: string;
  /** `os.hostname()`: a writer on another host is never judged dead from here. */
  host: string;
  /** Random id of the registry instance (two registries in one Node process differ). */
  instance: string;
  /** The kernel's boot id (Linux): another boot means every process of the writer's is gone. */
  bootId?: string;
  /** The pid namespace (`pid:[n]`, Linux): containers sharing a hostname and a home see other pids, so a writer in another namespace is never judged from here. */
  pidNamespace?: string;
}

/** One running background process, as the checkpoint file keeps it. */
export interface CheckpointEntry {
  /** `proc_` + 12 hex digits. */
  id: string;
  /** The session that started it (captured before any output was read). */
  owner: string;
  taskId: string;
  backend: string;
  /** The runner's pid inside its environment; it leads the process group (pgid === pid). */
  pid: number;
  pgid: number;
  /** The runner's start time as the environment's kernel reports it (clock ticks since boot). */
  startTime: string;
  /** The command line, secrets redacted. */
  command: string;
  /** The directory it started in, when known. */
  cwd: string | null;
  /** Its private directory inside the environment (log, exit file, pid file, input FIFO). */
  dir: string;
  /** `<dir>/log`. */
  logPath: string;
  pty: boolean;
  /** ISO 8601. */
  startedAt: string;
  notifyOnComplete: boolean;
  watchPatterns: string[];
  /** The registry that manages it now (the one that started it, or the one that adopted it). */
  writer: WriterIdentity;
  /**
   * `launching`: written before the launcher runs (write-ahead), so a registry
   * that dies in the middle of a start leaves an entry a later one finds; pid,
   * pgid and startTime are 0/0/"" until the launcher has reported them.
   */
  phase?: "launching";
  /** Random token the launcher wrote into `<dir>/owner`: only a directory carrying it is ever deleted. */
  nonce?: string;
  /** The placeholder writer that keeps the input open (`close` ends it), as the launcher reported it. */
  holderPid?: number;
  holderStartTime?: string;
}

/** What is kept of a process that ended: one file per process under `<home>/logs/process-results/`. */
export interface ProcessReceipt {
  version: 1;
  id: string;
  owner: string;
  taskId: string;
  backend: string;
  /** Redacted, always. */
  command: string;
  cwd: string | null;
  pid: number;
  pty: boolean;
  /** ISO 8601. */
  startedAt: string;
  /** ISO 8601. */
  endedAt: string;
  durationMs: number;
  /** The exit code when the process ended by itself (128 + n for a signal it did not survive); null when unknown (lost). */
  exitCode: number | null;
  ended: ProcessEnding;
  /** Why, for `lost` (and anything else worth saying), in one sentence. */
  reason: string | null;
  /** The end of its output (at most the store's limit), redacted, always. */
  output: string;
  /** Bytes the process printed in all. */
  outputBytes: number;
  /** Whether `output` is only the end of it. */
  outputTruncated: boolean;
  /** The full log inside the environment, while it lasts. */
  logPath: string;
  /** The registry that wrote the receipt. */
  writer: WriterIdentity;
}

/** Process ids as the registry makes them; anything else is refused before it reaches a file name. */
export const PROCESS_ID_PATTERN = /^proc_[0-9a-f]{12}$/;

/** Longest time limit a background process may be given: a week. */
export const MAX_BACKGROUND_TIMEOUT_SECONDS = 7 * 24 * 3600;
