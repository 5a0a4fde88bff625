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
import { currentWriter } from "./writer-identity.js";
import { closeInputScript, killScript, logLinesScript, writeScript } from "./background-scripts.js";
import { checkControlRoot, ownedDir, signalTarget } from "./control-dir.js";
import { DEFAULT_GATE_SECONDS } from "./launch-script.js";
import { adoptOrphans } from "./process-adoption.js";
import { launchProcess } from "./process-launch.js";
import { adoptOnce, elsewhere, findProcess, managedRecord, receiptFor, type Found } from "./process-lookup.js";
import { ProcessNotFoundError, ProcessStateError } from "./process-errors.js";
import { ProcessPersistence, type PersistenceOptions } from "./process-persistence.js";
import { recordInfo, receiptInfo, entryInfo, type ProcessInfo, type ProcessRecord } from "./process-record.js";
import { checkWatchPatterns, DEFAULT_WATCH_LIMITS, type ProcessNotification, type WatchLimits } from "./process-watch.js";
import { RegistryCore, SCRIPT_TIMEOUT_MS, tail } from "./registry-core.js";
import { SessionLineage } from "./session-lineage.js";
import { MAX_BACKGROUND_TIMEOUT_SECONDS, type ProcessReceipt } from "./types.js";

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
  /**
   * Where processes' directories go in their environments: an absolute path of
   * plain characters. Default: `/tmp/mibyan-bg-<uid>` of the environment's
   * user, or `MIBYAN_PROCESS_ROOT` of the runtime's own environment when set
   * (every runtime of one profile must agree on it, to adopt each other's
   * processes). Never the task's TMPDIR (see docs/process-trust.md).
   */
  controlRoot?: string;
  /** Seconds a launched runner waits to be released before giving up without running the command. Default 60. */
  launchGateSeconds?: number;
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


export class ProcessRegistry {
  readonly #core: RegistryCore;
  #adopting: Promise<void> | undefined;
  readonly #adopt = () => this.adoptOrphans();

  constructor(options: ProcessRegistryOptions = {}) {
    const writer = currentWriter();
    const persistence = ProcessPersistence.create(options, writer);
    const gateSeconds = options.launchGateSeconds ?? DEFAULT_GATE_SECONDS;
    if (!Number.isInteger(gateSeconds) || gateSeconds < 1 || gateSeconds > 3600) throw new ProcessStateError("launchGateSeconds must be a whole number of seconds from 1 to 3600.");
    this.#core = new RegistryCore(
      {
        bufferChars: options.bufferChars ?? 100_000,
        pollIntervalMs: options.pollIntervalMs ?? 2_000,
        waitIntervalMs: options.waitIntervalMs ?? 200,
        killGraceMs: options.killGraceMs ?? 3_000,
        watch: { ...DEFAULT_WATCH_LIMITS, ...options.watch },
        controlRoot: controlRootOf(options),
        gateSeconds,
      },
      persistence,
      persistence?.lineage ?? new SessionLineage(),
      writer,
      options.environments,
    );
  }

  /** The profile home the registry keeps its checkpoint and receipts in; undefined when it keeps nothing on disk. */
  get home(): string | undefined {
    return this.#core.persistence?.home;
  }

  /**
   * Starts `command` in the background in `env`; returns once it runs, with
   * its id. Its pid is in the checkpoint before the command runs
   * (`process-launch.ts`); an unwritable profile home fails here, before
   * anything is started.
   */
  async start(env: Environment, command: string, options: StartProcessOptions): Promise<ProcessInfo> {
    const watchPatterns = checkWatchPatterns(options.watchPatterns);
    const timeoutSeconds = options.timeoutSeconds ?? 0;
    if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 0 || timeoutSeconds > MAX_BACKGROUND_TIMEOUT_SECONDS) {
      throw new ProcessStateError(`The time limit of a background process must be a whole number of seconds from 1 to ${MAX_BACKGROUND_TIMEOUT_SECONDS}.`);
    }
    const record = await launchProcess(this.#core, env, {
      // The owner is fixed here, before anything reads the process's output.
      owner: options.sessionId,
      command,
      pty: options.pty === true,
      cwd: options.cwd,
      timeoutSeconds,
      notifyOnComplete: options.notifyOnComplete === true,
      watchPatterns,
      signal: options.signal,
    });
    return recordInfo(record);
  }

  /** Records that session `child` continues `parent`: it may see and manage `parent`'s processes and results. */
  recordContinuation(parent: string, child: string): Promise<void> {
    return this.#core.lineage.recordContinuation(parent, child);
  }

  /**
   * Takes over the processes of registries that are gone (their Node process
   * died); see `process-adoption.ts`. Runs by itself before the first listing
   * or lookup; call it at start-up to get their notifications without
   * waiting for that.
   */
  adoptOrphans(): Promise<void> {
    this.#adopting ??= adoptOrphans(this.#core).finally(() => {
      this.#adopting = undefined;
    });
    return this.#adopting;
  }

  /** The session's processes (its own and its continuations'): managed here, by another live registry, newest first. */
  async list(sessionId: string): Promise<ProcessInfo[]> {
    const core = this.#core;
    await adoptOnce(core, this.#adopt);
    const infos: ProcessInfo[] = [];
    for (const record of core.records.values()) {
      if (await core.lineage.mayRead(record.entry.owner, sessionId)) infos.push(recordInfo(record));
    }
    for (const entry of await elsewhere(core)) {
      if (await core.lineage.mayRead(entry.owner, sessionId)) infos.push(entryInfo(entry));
    }
    return infos.sort((a, b) => b.startedAt - a.startedAt);
  }

  /**
   * What the session may see, without touching anything: processes that run
   * (managed here or by any other registry, as the checkpoint lists them) and
   * retained results. Adopts nothing, reads no output, notifies nobody.
   */
  async snapshot(sessionId: string): Promise<{ running: ProcessInfo[]; results: ProcessReceipt[] }> {
    const core = this.#core;
    const running: ProcessInfo[] = [];
    for (const record of core.records.values()) {
      if (record.status === "running" && (await core.lineage.mayRead(record.entry.owner, sessionId))) running.push(recordInfo(record));
    }
    for (const entry of await elsewhere(core, true)) {
      if (await core.lineage.mayRead(entry.owner, sessionId)) {
        const info = entryInfo(entry);
        // Nobody manages an orphan until a registry adopts it.
        if (core.persistence?.orphaned(entry)) delete info.managedBy;
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
    const core = this.#core;
    if (!core.persistence) return [];
    const all = await core.persistence.receipts.list();
    const readable: ProcessReceipt[] = [];
    for (const receipt of all) if (await core.lineage.mayRead(receipt.owner, sessionId)) readable.push(receipt);
    return readable;
  }

  /** One retained result; `ProcessNotFoundError` when there is none the session may read. Passive. */
  async result(sessionId: string, id: string): Promise<ProcessReceipt> {
    const receipt = await receiptFor(this.#core, sessionId, id);
    if (!receipt) throw new ProcessNotFoundError(id);
    return receipt;
  }

  /** Fresh status and the latest output (at most `previewChars`, from the rolling buffer). */
  async poll(sessionId: string, id: string, previewChars = 2_000): Promise<ProcessInfo & { preview: string }> {
    const found = await this.#find(sessionId, id);
    if (found.kind === "receipt") return { ...receiptInfo(found.receipt), preview: tail(found.receipt.output, previewChars) };
    if (found.kind === "elsewhere") return { ...entryInfo(found.entry), preview: "" };
    await this.#core.refresh(found.record);
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
    const entry = found.kind === "live" ? found.record.entry : found.entry;
    const dir = ownedDir(entry, this.#core.options.controlRoot);
    if (dir === undefined) throw new ProcessStateError(`The log of process ${id} is not in a directory mibyan made; it is not read.`);
    const env = found.kind === "live" ? undefined : await this.#core.provider().then((p) => p?.get(found.entry.taskId));
    const read = async (from: number, to: number) => {
      const script = logLinesScript(dir, from, to, 4 * 1024 * 1024);
      const r = found.kind === "live" ? await this.#core.script(found.record, script, 8 * 1024 * 1024) : await runIn(env, script, 8 * 1024 * 1024);
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
    const interval = this.#core.options.waitIntervalMs;
    const deadline = Date.now() + Math.max(0, timeoutMs);
    let found = await this.#find(sessionId, id);
    // Managed by another live registry: its receipt appears when it ends (or it dies and we adopt).
    while (found.kind === "elsewhere" && Date.now() < deadline && !signal?.aborted) {
      await sleep(Math.min(interval, Math.max(0, deadline - Date.now())), signal);
      found = await this.#find(sessionId, id);
    }
    if (found.kind === "receipt") return { ...receiptInfo(found.receipt), output: found.receipt.output, timedOut: false };
    if (found.kind === "elsewhere") return { ...entryInfo(found.entry), output: "", timedOut: true };
    const record = found.record;
    await this.#core.refresh(record);
    while (record.status === "running" && Date.now() < deadline && !signal?.aborted) {
      await sleep(Math.min(interval, Math.max(0, deadline - Date.now())), signal);
      await this.#core.refresh(record);
    }
    return { ...recordInfo(record), output: record.buffer.toString(), timedOut: record.status === "running" };
  }

  /**
   * SIGTERM to the process's group, SIGKILL after the grace period: the group
   * the launcher reported, checked against the kernel before each signal.
   * Never signals a recycled pid, pid 1, or another group.
   */
  async kill(sessionId: string, id: string): Promise<ProcessInfo> {
    const core = this.#core;
    const record = await managedRecord(core, this.#adopt, sessionId, id, "kill");
    if (!record) return receiptInfo(await this.result(sessionId, id));
    await core.refresh(record);
    if (record.status !== "running") return recordInfo(record);
    const target = signalTarget(record.entry);
    if (target === undefined) {
      await core.finish(record, "lost", undefined, `pid ${record.entry.pid} is not a process group mibyan started; it was not signalled`);
      return recordInfo(record);
    }
    record.killRequested = true;
    const grace = core.options.killGraceMs;
    const answer = (await core.script(record, killScript(target, grace), 4096, grace + SCRIPT_TIMEOUT_MS)).trim();
    if (answer === "recycled") {
      await core.finish(record, "lost", undefined, `pid ${record.entry.pid} now belongs to another process (its start time or group changed); it was not signalled`);
    }
    await core.refresh(record);
    return recordInfo(record);
  }

  /** Sends `data` to the process's input (stdin, or the terminal in PTY mode). */
  async write(sessionId: string, id: string, data: string): Promise<ProcessInfo> {
    if (data.includes("\0")) throw new ProcessStateError("The input must not contain NUL characters.");
    const record = await managedRecord(this.#core, this.#adopt, sessionId, id, "write to");
    if (!record) throw new ProcessStateError(`Process ${id} has ended; it reads no more input.`);
    await this.#core.refresh(record);
    if (record.status !== "running") throw new ProcessStateError(`Process ${id} has ended (${record.status}); it reads no more input.`);
    await this.#core.script(record, writeScript(record.entry.dir, data), 4096);
    return recordInfo(record);
  }

  /** `write` with Enter after it (a newline; a carriage return in PTY mode, as a keyboard sends). */
  async submit(sessionId: string, id: string, data: string): Promise<ProcessInfo> {
    const found = await this.#find(sessionId, id);
    const pty = found.kind === "live" ? found.record.entry.pty : found.kind === "elsewhere" ? found.entry.pty : found.receipt.pty;
    return this.write(sessionId, id, `${data}${pty ? "\r" : "\n"}`);
  }

  /** Ends the process's input: a program reading it sees end-of-file. Signals only the placeholder writer the launcher reported, checked. */
  async closeInput(sessionId: string, id: string): Promise<ProcessInfo> {
    const record = await managedRecord(this.#core, this.#adopt, sessionId, id, "close the input of");
    if (!record) return receiptInfo(await this.result(sessionId, id));
    const group = signalTarget(record.entry);
    const { holderPid, holderStartTime } = record.entry;
    if (record.status === "running" && group !== undefined && holderPid !== undefined && holderStartTime !== undefined) {
      await this.#core.script(record, closeInputScript(group, { pid: holderPid, startTime: holderStartTime }), 4096);
    }
    return recordInfo(record);
  }

  /** Removes and returns the session's queued notifications (completions, watch matches), oldest first. */
  takeNotifications(sessionId: string): ProcessNotification[] {
    return this.#core.notifications.take(sessionId);
  }

  /** Calls `listener` for every notification as it is queued; returns the unsubscribe function. */
  onNotification(listener: (notification: ProcessNotification) => void): () => void {
    return this.#core.notifications.subscribe(listener);
  }

  /**
   * Stops the background polling (processes keep running, and stay in the
   * checkpoint for a later registry) and removes the logs of ended processes
   * whose receipts are written (their environments permitting).
   */
  async dispose(): Promise<void> {
    this.#core.stopPolling();
    const ended: ProcessRecord[] = [];
    for (const record of this.#core.records.values()) {
      record.release?.();
      record.release = undefined;
      if (record.status !== "running" && record.receipt) ended.push(record);
    }
    await Promise.all(ended.map((record) => this.#core.removeFiles(record)));
  }

  #find(sessionId: string, id: string): Promise<Found> {
    return findProcess(this.#core, this.#adopt, sessionId, id);
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

/** The configured control root: the option, else `MIBYAN_PROCESS_ROOT` (the runtime's environment, not a task's), checked. */
function controlRootOf(options: Pick<ProcessRegistryOptions, "controlRoot">): string | undefined {
  const root = options.controlRoot ?? (process.env.MIBYAN_PROCESS_ROOT || undefined);
  return root === undefined ? undefined : checkControlRoot(root);
}
