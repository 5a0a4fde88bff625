/**
 * The registry of background processes: what `terminal` with `background: true`
 * starts and what the `process` tool manages (poll, log, wait, kill, write).
 *
 * - A process runs inside its task's environment, through the file scheme of
 *   `background-scripts.ts` (log file, input FIFO, pid with start time, exit
 *   file), so it works the same on every backend and keeps running when the
 *   runtime that started it goes away.
 * - Every process belongs to the session that started it (captured before any
 *   output is read) and to that session's continuations (`SessionLineage`).
 *   Any other session asking about its id gets `ProcessNotFoundError`, the
 *   same answer as for an id that never existed: an id alone never gives access.
 * - With a profile home (the default), running processes are listed in a
 *   checkpoint file and every process that ends leaves a receipt
 *   (`process-persistence.ts`): a registry in a later Node process adopts the
 *   orphans of one that died, PID-safely, and answers for finished processes
 *   from their receipts.
 * - Output is read from the log file on demand (poll, wait, log) and every
 *   `pollIntervalMs` while a process runs, into a bounded rolling buffer; the
 *   log file keeps everything, and `log` reads lines from it.
 * - While a process runs, its environment is held (`hold()`), so the idle
 *   cleanup does not close the sandbox under it.
 */

import type { Environment, EnvironmentProvider } from "../environments/types.js";
import { redactSecrets } from "../redaction/redact.js";
import { NO_PTY_MESSAGE } from "../terminal/pty-command.js";
import { currentWriter } from "./writer-identity.js";
import {
  closeInputScript,
  killScript,
  launchScript,
  logLinesScript,
  parseLaunch,
  parseStatus,
  removeScript,
  statusScript,
  writeScript,
} from "./background-scripts.js";
import { ProcessNotFoundError, ProcessStateError } from "./process-errors.js";
import { ProcessPersistence, type PersistenceOptions } from "./process-persistence.js";
import { newProcessRecord, recordInfo, receiptInfo, entryInfo, type ProcessInfo, type ProcessRecord } from "./process-record.js";
import { checkWatchPatterns, DEFAULT_WATCH_LIMITS, NotificationQueue, type ProcessNotification, type WatchLimits } from "./process-watch.js";
import { SessionLineage } from "./session-lineage.js";
import { MAX_BACKGROUND_TIMEOUT_SECONDS, type CheckpointEntry, type ProcessEnding, type ProcessReceipt } from "./types.js";

export { ProcessNotFoundError, ProcessStateError } from "./process-errors.js";
export type { ProcessInfo, ProcessStatus } from "./process-record.js";

export interface ProcessRegistryOptions extends PersistenceOptions {
  /** Characters of recent output kept in memory per process. Default 100,000. */
  bufferChars?: number;
  /** How often running processes are checked in the background; 0 turns it off. Default 2,000 ms. */
  pollIntervalMs?: number;
  /** How often `wait` checks. Default 200 ms. */
  waitIntervalMs?: number;
  /** SIGTERM→SIGKILL grace of `kill`. Default 3,000 ms. */
  killGraceMs?: number;
  /** Rate limits of watch-pattern notifications. */
  watch?: Partial<WatchLimits>;
  /**
   * Where to find a task's environment: again when the one a process was
   * started in has been closed (idle cleanup, `closeAll`), and for processes
   * adopted from the checkpoint. Without it, a closed environment means the
   * process is lost, and orphans are not adopted.
   */
  environments?: EnvironmentProvider | (() => EnvironmentProvider | Promise<EnvironmentProvider>);
}

export interface StartProcessOptions {
  /** The session that owns the process; only it and its continuations can see and manage it. */
  sessionId: string;
  /** Run it in a pseudo-terminal. */
  pty?: boolean;
  /** Start in this directory instead of the task's. */
  cwd?: string;
  /** Kill it (the whole group) after this many seconds; it then ends as `timed_out`. Default: no limit. */
  timeoutSeconds?: number;
  /** Queue a notification for the session when it ends. */
  notifyOnComplete?: boolean;
  /** Queue a notification when a line of its output contains one of these substrings (rate-limited). */
  watchPatterns?: string[];
  signal?: AbortSignal;
}

export interface LogLines {
  /** 1-based number of the first line returned. */
  from: number;
  lines: string[];
  totalLines: number;
}

/**
 * Ended processes kept in memory (with their output buffers) for quick follow-up
 * calls; older ones are answered from their receipts. Without receipts (no
 * home) a larger number is kept, then the oldest are forgotten.
 */
const KEEP_ENDED_WITH_RECEIPT = 64;
const KEEP_ENDED_WITHOUT_RECEIPT = 512;
/** Status reads the background polling starts per tick at most. */
const MAX_POLLS_PER_TICK = 16;
/** Longest piece of log read by one status call. */
const READ_CHUNK_BYTES = 256 * 1024;
/** Time allowed for one bookkeeping command in the environment. */
const SCRIPT_TIMEOUT_MS = 30_000;

export class ProcessRegistry {
  readonly #records = new Map<string, ProcessRecord>();
  readonly #options: { bufferChars: number; pollIntervalMs: number; waitIntervalMs: number; killGraceMs: number; watch: WatchLimits };
  readonly #environments: ProcessRegistryOptions["environments"];
  readonly #persistence: ProcessPersistence | undefined;
  readonly #lineage: SessionLineage;
  readonly #notifications = new NotificationQueue();
  readonly #writer = currentWriter();
  #timer: NodeJS.Timeout | undefined;
  #pollTurn = 0;
  #adopting: Promise<void> | undefined;

  constructor(options: ProcessRegistryOptions = {}) {
    this.#options = {
      bufferChars: options.bufferChars ?? 100_000,
      pollIntervalMs: options.pollIntervalMs ?? 2_000,
      waitIntervalMs: options.waitIntervalMs ?? 200,
      killGraceMs: options.killGraceMs ?? 3_000,
      watch: { ...DEFAULT_WATCH_LIMITS, ...options.watch },
    };
    this.#environments = options.environments;
    this.#persistence = ProcessPersistence.create(options, this.#writer);
    this.#lineage = this.#persistence?.lineage ?? new SessionLineage();
  }

  /** The profile home the registry keeps its checkpoint and receipts in; undefined when it keeps nothing on disk. */
  get home(): string | undefined {
    return this.#persistence?.home;
  }

  /** Starts `command` in the background in `env`; returns at once with its id. */
  async start(env: Environment, command: string, options: StartProcessOptions): Promise<ProcessInfo> {
    const pty = options.pty === true;
    const watchPatterns = checkWatchPatterns(options.watchPatterns);
    const timeoutSeconds = options.timeoutSeconds ?? 0;
    if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 0 || timeoutSeconds > MAX_BACKGROUND_TIMEOUT_SECONDS) {
      throw new ProcessStateError(`The time limit of a background process must be a whole number of seconds from 1 to ${MAX_BACKGROUND_TIMEOUT_SECONDS}.`);
    }
    // The owner is fixed here, before anything reads the process's output.
    const owner = options.sessionId;
    const launched = await env.exec(launchScript(command, { pty, timeoutSeconds }), {
      timeoutMs: SCRIPT_TIMEOUT_MS,
      maxOutputChars: 64 * 1024,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      saveState: false,
    });
    if (launched.output.includes(NO_PTY_MESSAGE)) throw new ProcessStateError(NO_PTY_MESSAGE);
    const where = parseLaunch(launched.output);
    if (launched.exitCode !== 0 || where === undefined) {
      throw new Error(`could not start the background process (exit code ${launched.exitCode}): ${launched.output.trim().slice(0, 500)}`);
    }
    const entry: CheckpointEntry = {
      id: ProcessPersistence.newId(),
      owner,
      taskId: env.taskId,
      backend: env.backend,
      pid: where.pid,
      pgid: where.pid,
      startTime: where.startTime,
      command: redactSecrets(command),
      cwd: options.cwd ?? env.cwd ?? null,
      dir: where.dir,
      logPath: `${where.dir}/log`,
      pty,
      startedAt: new Date().toISOString(),
      notifyOnComplete: options.notifyOnComplete === true,
      watchPatterns,
      writer: this.#writer,
    };
    const record = newProcessRecord(entry, env, this.#options.bufferChars, this.#options.watch);
    record.release = env.hold?.();
    this.#records.set(entry.id, record);
    if (this.#persistence) {
      try {
        await this.#persistence.checkpoint.put([entry]);
      } catch (err) {
        // The process runs and this registry manages it; only a later one could not adopt it.
        record.warning = `not recorded in the checkpoint (a later mibyan process cannot adopt it): ${(err as Error).message}`;
      }
    }
    this.#schedulePolling();
    return recordInfo(record);
  }

  /** Records that session `child` continues `parent`: it may see and manage `parent`'s processes and results. */
  recordContinuation(parent: string, child: string): Promise<void> {
    return this.#lineage.recordContinuation(parent, child);
  }

  /**
   * Takes over the processes of registries that are gone (their Node process
   * died): checks each one's pid and start time in its environment, and keeps
   * only the ones that still run (the others are written off with a receipt
   * saying why). Runs by itself before the first listing or lookup; call it
   * at start-up to get their notifications without waiting for that.
   */
  adoptOrphans(): Promise<void> {
    this.#adopting ??= this.#adopt().finally(() => {
      this.#adopting = undefined;
    });
    return this.#adopting;
  }

  /** The session's processes (its own and its continuations'): managed here, by another live registry, newest first. */
  async list(sessionId: string): Promise<ProcessInfo[]> {
    await this.#adoptOnce();
    const infos: ProcessInfo[] = [];
    for (const record of this.#records.values()) {
      if (await this.#lineage.mayRead(record.entry.owner, sessionId)) infos.push(recordInfo(record));
    }
    for (const entry of await this.#elsewhere()) {
      if (await this.#lineage.mayRead(entry.owner, sessionId)) infos.push(entryInfo(entry));
    }
    return infos.sort((a, b) => b.startedAt - a.startedAt);
  }

  /**
   * What the session may see, without touching anything: processes that run
   * (managed here or by any other registry, as the checkpoint lists them) and
   * retained results. Adopts nothing, reads no output, notifies nobody.
   */
  async snapshot(sessionId: string): Promise<{ running: ProcessInfo[]; results: ProcessReceipt[] }> {
    const running: ProcessInfo[] = [];
    for (const record of this.#records.values()) {
      if (record.status === "running" && (await this.#lineage.mayRead(record.entry.owner, sessionId))) running.push(recordInfo(record));
    }
    for (const entry of await this.#elsewhere(true)) {
      if (await this.#lineage.mayRead(entry.owner, sessionId)) {
        const info = entryInfo(entry);
        // Nobody manages an orphan until a registry adopts it.
        if (this.#persistence?.orphaned(entry)) delete info.managedBy;
        running.push(info);
      }
    }
    const results = await this.results(sessionId);
    // A process that just ended can be in both for a moment (receipt written, checkpoint entry not yet removed).
    const ended = new Set(results.map((r) => r.id));
    return { running: running.filter((p) => !ended.has(p.id)).sort((a, b) => b.startedAt - a.startedAt), results };
  }

  /** Retained results (receipts) the session may read, newest first. Passive: adopts nothing, notifies nobody. */
  async results(sessionId: string): Promise<ProcessReceipt[]> {
    if (!this.#persistence) return [];
    const all = await this.#persistence.receipts.list();
    const readable: ProcessReceipt[] = [];
    for (const receipt of all) if (await this.#lineage.mayRead(receipt.owner, sessionId)) readable.push(receipt);
    return readable;
  }

  /** One retained result; `ProcessNotFoundError` when there is none the session may read. Passive. */
  async result(sessionId: string, id: string): Promise<ProcessReceipt> {
    const receipt = await this.#receiptFor(sessionId, id);
    if (!receipt) throw new ProcessNotFoundError(id);
    return receipt;
  }

  /** Fresh status and the latest output (at most `previewChars`, from the rolling buffer). */
  async poll(sessionId: string, id: string, previewChars = 2_000): Promise<ProcessInfo & { preview: string }> {
    const found = await this.#find(sessionId, id);
    if (found.kind === "receipt") return { ...receiptInfo(found.receipt), preview: tail(found.receipt.output, previewChars) };
    if (found.kind === "elsewhere") return { ...entryInfo(found.entry), preview: "" };
    await this.#refresh(found.record);
    return { ...recordInfo(found.record), preview: tail(found.record.buffer.toString(), previewChars) };
  }

  /**
   * Lines of the whole log. Without `offset`, the last `limit` lines; `offset`
   * is the 1-based first line. For a process known only by its receipt, the
   * lines of the output the receipt kept.
   */
  async log(sessionId: string, id: string, options: { offset?: number; limit?: number } = {}): Promise<LogLines> {
    const found = await this.#find(sessionId, id);
    const limit = Math.max(1, Math.floor(options.limit ?? 200));
    if (found.kind === "receipt") return sliceLines(found.receipt.output, options.offset, limit);
    // Its log was removed once the receipt held what is kept of it.
    if (found.kind === "live" && found.record.logRemoved && found.record.receipt) return sliceLines(found.record.receipt.output, options.offset, limit);
    const env = found.kind === "live" ? undefined : await this.#provider().then((p) => p?.get(found.entry.taskId));
    const dir = found.kind === "live" ? found.record.entry.dir : found.entry.dir;
    const read = async (from: number, to: number) => {
      const script = logLinesScript(dir, from, to, 4 * 1024 * 1024);
      const r = found.kind === "live" ? await this.#script(found.record, script, 8 * 1024 * 1024) : await runIn(env, script, 8 * 1024 * 1024);
      if (r.startsWith("gone")) throw new ProcessStateError(`The log of process ${id} no longer exists.`);
      const newline = r.indexOf("\n");
      const total = Number(r.slice(0, newline));
      const body = r.slice(newline + 1);
      return { total, lines: body === "" ? [] : body.replace(/\n$/, "").split("\n") };
    };
    if (options.offset !== undefined) {
      const from = Math.max(1, Math.floor(options.offset));
      const { total, lines } = await read(from, from + limit - 1);
      return { from, lines, totalLines: total };
    }
    // The last `limit` lines: learn the count first (one cheap read of line 1).
    const { total } = await read(1, 1);
    const from = Math.max(1, total - limit + 1);
    const { lines } = await read(from, total);
    return { from, lines, totalLines: total };
  }

  /**
   * Waits until the process ends, `timeoutMs` passes or `signal` aborts.
   * Returns its state then (`status: "running"` when it did not end in time).
   * The receipt of a process that ended is written before this returns.
   */
  async wait(sessionId: string, id: string, timeoutMs: number, signal?: AbortSignal): Promise<ProcessInfo & { output: string; timedOut: boolean }> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    let found = await this.#find(sessionId, id);
    // Managed by another live registry: its receipt appears when it ends (or it dies and we adopt).
    while (found.kind === "elsewhere" && Date.now() < deadline && !signal?.aborted) {
      await sleep(Math.min(this.#options.waitIntervalMs, Math.max(0, deadline - Date.now())), signal);
      found = await this.#find(sessionId, id);
    }
    if (found.kind === "receipt") return { ...receiptInfo(found.receipt), output: found.receipt.output, timedOut: false };
    if (found.kind === "elsewhere") return { ...entryInfo(found.entry), output: "", timedOut: true };
    const record = found.record;
    await this.#refresh(record);
    while (record.status === "running" && Date.now() < deadline && !signal?.aborted) {
      await sleep(Math.min(this.#options.waitIntervalMs, Math.max(0, deadline - Date.now())), signal);
      await this.#refresh(record);
    }
    return { ...recordInfo(record), output: record.buffer.toString(), timedOut: record.status === "running" };
  }

  /** SIGTERM to the process's group, SIGKILL after the grace period. Never signals a pid that was recycled. */
  async kill(sessionId: string, id: string): Promise<ProcessInfo> {
    const record = await this.#managed(sessionId, id, "kill");
    if (!record) return this.#endedInfo(sessionId, id);
    await this.#refresh(record);
    if (record.status !== "running") return recordInfo(record);
    record.killRequested = true;
    const answer = (await this.#script(record, killScript(record.entry.dir, this.#options.killGraceMs), 4096, this.#options.killGraceMs + SCRIPT_TIMEOUT_MS)).trim();
    if (answer === "recycled") {
      await this.#finish(record, "lost", undefined, `pid ${record.entry.pid} now belongs to another process (its start time changed); it was not signalled`);
    }
    await this.#refresh(record);
    return recordInfo(record);
  }

  /** Sends `data` to the process's input (stdin, or the terminal in PTY mode). */
  async write(sessionId: string, id: string, data: string): Promise<ProcessInfo> {
    if (data.includes("\0")) throw new ProcessStateError("The input must not contain NUL characters.");
    const record = await this.#managed(sessionId, id, "write to");
    if (!record) throw new ProcessStateError(`Process ${id} has ended; it reads no more input.`);
    await this.#refresh(record);
    if (record.status !== "running") throw new ProcessStateError(`Process ${id} has ended (${record.status}); it reads no more input.`);
    await this.#script(record, writeScript(record.entry.dir, data), 4096);
    return recordInfo(record);
  }

  /** `write` with Enter after it (a newline; a carriage return in PTY mode, as a keyboard sends). */
  async submit(sessionId: string, id: string, data: string): Promise<ProcessInfo> {
    const found = await this.#find(sessionId, id);
    const pty = found.kind === "live" ? found.record.entry.pty : found.kind === "elsewhere" ? found.entry.pty : found.receipt.pty;
    return this.write(sessionId, id, `${data}${pty ? "\r" : "\n"}`);
  }

  /** Ends the process's input: a program reading it sees end-of-file. */
  async closeInput(sessionId: string, id: string): Promise<ProcessInfo> {
    const record = await this.#managed(sessionId, id, "close the input of");
    if (!record) return this.#endedInfo(sessionId, id);
    await this.#script(record, closeInputScript(record.entry.dir), 4096);
    return recordInfo(record);
  }

  /** Removes and returns the session's queued notifications (completions, watch matches), oldest first. */
  takeNotifications(sessionId: string): ProcessNotification[] {
    return this.#notifications.take(sessionId);
  }

  /** Calls `listener` for every notification as it is queued; returns the unsubscribe function. */
  onNotification(listener: (notification: ProcessNotification) => void): () => void {
    return this.#notifications.subscribe(listener);
  }

  /**
   * Stops the background polling (processes keep running, and stay in the
   * checkpoint for a later registry) and removes the logs of ended processes
   * whose receipts are written (their environments permitting).
   */
  async dispose(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    const ended: ProcessRecord[] = [];
    for (const record of this.#records.values()) {
      record.release?.();
      record.release = undefined;
      if (record.status !== "running" && record.receipt) ended.push(record);
    }
    await Promise.all(ended.map((record) => this.#removeFiles(record)));
  }

  // ---- lookup -------------------------------------------------------------

  async #adoptOnce(): Promise<void> {
    if (!this.#persistence || this.#environments === undefined) return;
    if (!this.#persistence.adoptedOnce) {
      this.#persistence.adoptedOnce = true;
      await this.adoptOrphans();
    }
  }

  /** Where a process the session may see is: managed here, by another live registry, or only a receipt. */
  async #find(
    sessionId: string,
    id: string,
  ): Promise<{ kind: "live"; record: ProcessRecord } | { kind: "elsewhere"; entry: CheckpointEntry } | { kind: "receipt"; receipt: ProcessReceipt }> {
    if (typeof id !== "string") throw new ProcessNotFoundError(String(id));
    let record = this.#records.get(id);
    if (!record && this.#persistence && ProcessPersistence.validId(id)) {
      await this.#adoptOnce();
      record = this.#records.get(id);
      if (!record) {
        const inCheckpoint = async () => (await this.#persistence!.checkpoint.read().catch(() => [] as CheckpointEntry[])).find((e) => e.id === id);
        let entry = await inCheckpoint();
        if (entry && this.#environments !== undefined && this.#persistence.orphaned(entry)) {
          await this.adoptOrphans();
          record = this.#records.get(id);
          // Another registry may have claimed it first.
          if (!record) entry = await inCheckpoint();
        }
        if (!record && entry && entry.writer.instance !== this.#writer.instance) {
          if (await this.#lineage.mayRead(entry.owner, sessionId)) return { kind: "elsewhere", entry };
          throw new ProcessNotFoundError(id);
        }
      }
    }
    if (record) {
      if (await this.#lineage.mayRead(record.entry.owner, sessionId)) {
        // Ended here and forgotten by nothing: its receipt, when there is one, is the answer of record.
        return { kind: "live", record };
      }
      throw new ProcessNotFoundError(id);
    }
    const receipt = await this.#receiptFor(sessionId, id);
    if (receipt) return { kind: "receipt", receipt };
    throw new ProcessNotFoundError(id);
  }

  async #receiptFor(sessionId: string, id: string): Promise<ProcessReceipt | undefined> {
    if (!this.#persistence || !ProcessPersistence.validId(id)) return undefined;
    let receipt: ProcessReceipt | undefined;
    try {
      receipt = await this.#persistence.receipts.read(id);
    } catch (err) {
      // A corrupt file must not tell another session that the id exists; the owner is warned.
      if ((err as { code?: unknown }).code !== "corrupt_receipt") throw err;
      process.emitWarning((err as Error).message, "MibyanWarning");
      return undefined;
    }
    if (!receipt || !(await this.#lineage.mayRead(receipt.owner, sessionId))) return undefined;
    return receipt;
  }

  /** The record this registry manages; undefined when the process only has a receipt; refuses one another live registry manages. */
  async #managed(sessionId: string, id: string, what: string): Promise<ProcessRecord | undefined> {
    const found = await this.#find(sessionId, id);
    if (found.kind === "live") return found.record;
    if (found.kind === "receipt") return undefined;
    const w = found.entry.writer;
    throw new ProcessStateError(`Cannot ${what} process ${id} from here: another mibyan process (pid ${w.pid} on ${w.host}) manages it; use that one, or wait for it to end.`);
  }

  async #endedInfo(sessionId: string, id: string): Promise<ProcessInfo> {
    return receiptInfo(await this.result(sessionId, id));
  }

  /**
   * Checkpoint entries that another registry manages (or managed). `strict`:
   * a corrupt checkpoint is an error (a listing must not say "nothing runs"
   * when it cannot tell); otherwise only this registry's own processes count.
   */
  async #elsewhere(strict = false): Promise<CheckpointEntry[]> {
    if (!this.#persistence) return [];
    const read = this.#persistence.checkpoint.read();
    const entries = strict ? await read : await read.catch(() => [] as CheckpointEntry[]);
    return entries.filter((e) => e.writer.instance !== this.#writer.instance && !this.#records.has(e.id));
  }

  // ---- adoption -----------------------------------------------------------

  async #adopt(): Promise<void> {
    if (!this.#persistence || this.#environments === undefined) return;
    const claimed = await this.#persistence.checkpoint.claimOrphans((entry) => !this.#records.has(entry.id));
    await Promise.all(claimed.map((entry) => this.#adoptEntry(entry)));
    if (claimed.length > 0) this.#schedulePolling();
  }

  async #adoptEntry(entry: CheckpointEntry): Promise<void> {
    const record = newProcessRecord(entry, undefined, this.#options.bufferChars, this.#options.watch);
    record.adopted = true;
    this.#records.set(entry.id, record);
    let env: Environment | undefined;
    try {
      env = await (await this.#provider())?.get(entry.taskId);
    } catch (err) {
      await this.#finish(record, "lost", undefined, `its environment (task ${entry.taskId}) could not be opened again: ${(err as Error).message}`);
      return;
    }
    if (!env || env.backend !== entry.backend) {
      await this.#finish(record, "lost", undefined, `it ran on the ${entry.backend} backend, and task ${entry.taskId} now uses ${env?.backend ?? "none"}`);
      return;
    }
    record.env = env;
    record.release = env.hold?.();
    // The first status read decides: still running (adopted), ended meanwhile (receipt), or gone/recycled (lost, never signalled).
    await this.#refresh(record).catch(() => undefined);
  }

  async #provider(): Promise<EnvironmentProvider | undefined> {
    const given = this.#environments;
    if (given === undefined) return undefined;
    return typeof given === "function" ? await given() : given;
  }

  // ---- environment commands -----------------------------------------------

  async #script(record: ProcessRecord, script: string, maxOutputChars: number, timeoutMs = SCRIPT_TIMEOUT_MS): Promise<string> {
    const options = { timeoutMs, maxOutputChars, saveState: false };
    let result;
    try {
      if (!record.env) throw new Error("environment was closed");
      result = await record.env.exec(script, options);
    } catch (err) {
      if (!/is closed|was closed/.test((err as Error).message)) throw err;
      const again = await this.#reacquire(record);
      if (again === undefined) {
        await this.#finish(record, "lost", undefined, `the environment of task ${record.entry.taskId} was closed`);
        throw new ProcessStateError(`Process ${record.entry.id} is gone: the environment of task ${record.entry.taskId} was closed.`);
      }
      result = await again.exec(script, options);
    }
    if (result.timedOut) throw new Error(`the environment of process ${record.entry.id} did not answer within ${Math.round(timeoutMs / 1000)} s`);
    return result.output;
  }

  /** The task's environment anew, after the process's one was closed; undefined without a provider. */
  async #reacquire(record: ProcessRecord): Promise<Environment | undefined> {
    const provider = await this.#provider();
    if (provider === undefined) return undefined;
    const env = await provider.get(record.entry.taskId);
    record.release?.();
    record.env = env;
    record.release = record.status === "running" ? env.hold?.() : undefined;
    return env;
  }

  /**
   * Reads new output and the process's state; one read at a time per process.
   * Rejects when the environment cannot be asked (the next read tries again).
   */
  #refresh(record: ProcessRecord): Promise<void> {
    if (record.status !== "running") return record.finishing ?? record.refreshing;
    record.inFlight += 1;
    const current = record.refreshing.then(() => this.#readStatus(record));
    record.refreshing = current.catch(() => undefined).finally(() => {
      record.inFlight -= 1;
    });
    return current;
  }

  async #readStatus(record: ProcessRecord): Promise<void> {
    if (record.status !== "running" || record.finishing) return record.finishing;
    for (;;) {
      const text = await this.#script(record, statusScript(record.entry.dir, record.offset, READ_CHUNK_BYTES), READ_CHUNK_BYTES * 2 + 256);
      const status = parseStatus(text);
      if (status === undefined) throw new Error(`unexpected answer from the environment of process ${record.entry.id}`);
      if (status.gone) {
        return this.#finish(record, "lost", undefined, "its files in the environment are gone (the environment was reset or cleaned up)");
      }
      if (status.output !== "") {
        record.buffer.push(status.output);
        this.#watch(record, status.output);
      }
      record.offset = status.end;
      if (status.end < status.size) continue;
      if (status.exitCode !== undefined) {
        const ending: ProcessEnding = record.killRequested ? "killed" : status.timedOut ? "timed_out" : "exited";
        // An adopted process may have ended long before anyone looked: its exit file says when.
        const endedAt = record.adopted && status.endedAt !== undefined ? Math.min(Date.now(), status.endedAt) : undefined;
        return this.#finish(record, ending, status.exitCode, status.timedOut ? "its time limit ran out" : null, endedAt);
      }
      if (status.pidState === "recycled") {
        return this.#finish(record, "lost", undefined, `pid ${record.entry.pid} now belongs to another process (its start time changed); it was not signalled`);
      }
      if (!status.alive) {
        return this.#finish(record, record.killRequested ? "killed" : "lost", undefined, record.killRequested ? null : "it ended without recording an exit code");
      }
      return;
    }
  }

  #watch(record: ProcessRecord, output: string): void {
    const match = record.watcher?.feed(output, Date.now());
    if (match) this.#notifications.push(this.#watchNotification(record, match));
  }

  #watchNotification(record: ProcessRecord, match: { pattern: string; line: string; suppressed: number; final: boolean }): ProcessNotification {
    return { type: "watch", processId: record.entry.id, sessionId: record.entry.owner, command: record.entry.command, ...match, at: Date.now() };
  }

  /**
   * Ends a record: writes its receipt, drops it from the checkpoint, and only
   * then marks it ended, so whoever waits on it finds the receipt written.
   */
  #finish(record: ProcessRecord, ending: ProcessEnding, exitCode: number | undefined, reason: string | null, endedAtGiven?: number): Promise<void> {
    if (record.status !== "running") return Promise.resolve();
    record.finishing ??= (async () => {
      const endedAt = endedAtGiven ?? Date.now();
      if (this.#persistence) {
        try {
          record.receipt = await this.#persistence.writeReceipt(record, ending, exitCode, reason, endedAt);
        } catch (err) {
          record.warning = `its receipt could not be written: ${(err as Error).message}`;
        }
        await this.#persistence.checkpoint.remove([record.entry.id], { force: true }).catch(() => undefined);
      }
      // The log holds the output unredacted: once the receipt keeps all of it (redacted), it goes.
      // A longer log stays for `log` until the record is evicted or the registry disposed.
      if (record.receipt && !record.receipt.outputTruncated) await this.#removeFiles(record);
      record.status = ending;
      record.exitCode = exitCode;
      record.endedAt = endedAt;
      record.reason = reason;
      record.release?.();
      record.release = undefined;
      this.#evictEnded();
      const last = record.watcher?.end(endedAt);
      if (last) this.#notifications.push(this.#watchNotification(record, last));
      if (record.entry.notifyOnComplete) {
        this.#notifications.push({
          type: "completed",
          processId: record.entry.id,
          sessionId: record.entry.owner,
          command: record.entry.command,
          status: ending,
          exitCode: exitCode ?? null,
          outputTail: redactSecrets(tail(record.buffer.toString(), 2_000)),
          at: endedAt,
        });
      }
    })();
    return record.finishing;
  }

  /** Forgets the oldest ended records beyond the limits (callers holding one keep their reference). */
  #evictEnded(): void {
    const ended = [...this.#records.values()].filter((r) => r.status !== "running").sort((a, b) => (a.endedAt ?? 0) - (b.endedAt ?? 0));
    const withReceipt = ended.filter((r) => r.receipt !== undefined);
    for (const record of withReceipt.slice(0, Math.max(0, withReceipt.length - KEEP_ENDED_WITH_RECEIPT))) {
      this.#records.delete(record.entry.id);
      void this.#removeFiles(record);
    }
    const without = ended.filter((r) => r.receipt === undefined);
    for (const record of without.slice(0, Math.max(0, without.length - KEEP_ENDED_WITHOUT_RECEIPT))) {
      this.#records.delete(record.entry.id);
      void this.#removeFiles(record);
    }
  }

  /** Removes the process's directory in its environment (log, FIFO, pid and exit files); best effort. */
  async #removeFiles(record: ProcessRecord): Promise<void> {
    if (record.logRemoved || !record.env) return;
    try {
      await record.env.exec(removeScript(record.entry.dir), { timeoutMs: SCRIPT_TIMEOUT_MS, maxOutputChars: 4096, saveState: false });
      record.logRemoved = true;
    } catch {
      // A closed environment took the files with it, or a later registry's pruning will not find them: nothing to keep.
    }
  }

  #schedulePolling(): void {
    if (this.#timer || this.#options.pollIntervalMs <= 0) return;
    this.#timer = setInterval(() => {
      const running = [...this.#records.values()].filter((r) => r.status === "running" && r.env !== undefined);
      if (running.length === 0) {
        clearInterval(this.#timer);
        this.#timer = undefined;
        return;
      }
      const now = Date.now();
      for (const record of running) {
        const due = record.watcher?.due(now);
        if (due) this.#notifications.push(this.#watchNotification(record, due));
      }
      // A bounded number of reads per tick, taking turns, and none for a process still being
      // read: with hundreds of processes the reads must not pile up faster than they finish.
      const idle = running.filter((r) => r.inFlight === 0);
      const start = this.#pollTurn % Math.max(1, idle.length);
      const turn = [...idle.slice(start), ...idle.slice(0, start)].slice(0, MAX_POLLS_PER_TICK);
      this.#pollTurn = start + turn.length;
      for (const record of turn) this.#refresh(record).catch(() => undefined);
    }, this.#options.pollIntervalMs);
    this.#timer.unref();
  }
}

async function runIn(env: Environment | undefined, script: string, maxOutputChars: number): Promise<string> {
  if (!env) throw new ProcessStateError("The environment of this process cannot be opened from here.");
  const result = await env.exec(script, { timeoutMs: SCRIPT_TIMEOUT_MS, maxOutputChars, saveState: false });
  return result.output;
}

function sliceLines(text: string, offset: number | undefined, limit: number): LogLines {
  const all = text === "" ? [] : text.replace(/\n$/, "").split("\n");
  const from = offset !== undefined ? Math.max(1, Math.floor(offset)) : Math.max(1, all.length - limit + 1);
  return { from, lines: all.slice(from - 1, from - 1 + limit), totalLines: all.length };
}

function tail(text: string, chars: number): string {
  return text.length <= chars ? text : text.slice(text.length - chars);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
