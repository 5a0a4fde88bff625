/**
 * What the parts of the process registry share (its records, options,
 * persistence and notification queue) and how a running process is followed
 * to its end: status reads in its environment (or from Node on the local
 * fast path), the end recorded in a receipt before the record reads as ended,
 * and the removal of its directory once the receipt holds its output.
 * `process-registry.ts` is the public face over it; `process-launch.ts`,
 * `process-adoption.ts` and `process-lookup.ts` are the other parts.
 */

import type { Environment, EnvironmentProvider } from "../environments/types.js";
import { redactSecrets } from "../redaction/redact.js";
import { parseStatus, removeScript, statusScript, type BackgroundStatus } from "./background-scripts.js";
import { ownedDir, signalTarget } from "./control-dir.js";
import { localRemove, localStatus } from "./local-control.js";
import { ProcessStateError } from "./process-errors.js";
import type { ProcessPersistence } from "./process-persistence.js";
import type { ProcessRecord } from "./process-record.js";
import { NotificationQueue, type ProcessNotification, type WatchLimits } from "./process-watch.js";
import type { SessionLineage } from "./session-lineage.js";
import type { ProcessEnding, WriterIdentity } from "./types.js";

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
export const READ_CHUNK_BYTES = 256 * 1024;
/** Time allowed for one bookkeeping command in the environment. */
export const SCRIPT_TIMEOUT_MS = 30_000;

export interface CoreOptions {
  bufferChars: number;
  pollIntervalMs: number;
  waitIntervalMs: number;
  killGraceMs: number;
  watch: WatchLimits;
  /** The configured control root (`control-dir.ts`), when one is. */
  controlRoot: string | undefined;
  gateSeconds: number;
}

export class RegistryCore {
  readonly records = new Map<string, ProcessRecord>();
  readonly notifications = new NotificationQueue();
  #timer: NodeJS.Timeout | undefined;
  #pollTurn = 0;

  constructor(
    readonly options: CoreOptions,
    readonly persistence: ProcessPersistence | undefined,
    readonly lineage: SessionLineage,
    readonly writer: WriterIdentity,
    private readonly environments: EnvironmentProvider | (() => EnvironmentProvider | Promise<EnvironmentProvider>) | undefined,
  ) {}

  get hasEnvironments(): boolean {
    return this.environments !== undefined;
  }

  async provider(): Promise<EnvironmentProvider | undefined> {
    const given = this.environments;
    if (given === undefined) return undefined;
    return typeof given === "function" ? await given() : given;
  }

  // ---- environment commands -----------------------------------------------

  async script(record: ProcessRecord, script: string, maxOutputChars: number, timeoutMs = SCRIPT_TIMEOUT_MS): Promise<string> {
    const options = { timeoutMs, maxOutputChars, saveState: false };
    let result;
    try {
      if (!record.env) throw new Error("environment was closed");
      result = await record.env.exec(script, options);
    } catch (err) {
      if (!/is closed|was closed/.test((err as Error).message)) throw err;
      const again = await this.#reacquire(record);
      if (again === undefined) {
        await this.finish(record, "lost", undefined, `the environment of task ${record.entry.taskId} was closed`);
        throw new ProcessStateError(`Process ${record.entry.id} is gone: the environment of task ${record.entry.taskId} was closed.`);
      }
      result = await again.exec(script, options);
    }
    if (result.timedOut) throw new Error(`the environment of process ${record.entry.id} did not answer within ${Math.round(timeoutMs / 1000)} s`);
    return result.output;
  }

  /** The task's environment anew, after the process's one was closed; undefined without a provider. */
  async #reacquire(record: ProcessRecord): Promise<Environment | undefined> {
    const provider = await this.provider();
    if (provider === undefined) return undefined;
    const env = await provider.get(record.entry.taskId);
    record.release?.();
    record.env = env;
    record.release = record.status === "running" ? env.hold?.() : undefined;
    return env;
  }

  // ---- following a process ----------------------------------------------

  /**
   * Reads new output and the process's state; one read at a time per process.
   * Rejects when the environment cannot be asked (the next read tries again).
   */
  refresh(record: ProcessRecord): Promise<void> {
    if (record.status !== "running") return record.finishing ?? record.refreshing;
    record.inFlight += 1;
    const current = record.refreshing.then(() => this.#readStatus(record));
    record.refreshing = current.catch(() => undefined).finally(() => {
      record.inFlight -= 1;
    });
    return current;
  }

  async #status(record: ProcessRecord): Promise<BackgroundStatus> {
    const target = signalTarget(record.entry)!;
    if (record.local) {
      return localStatus(record.entry.dir, target, record.offset, READ_CHUNK_BYTES);
    }
    const text = await this.script(record, statusScript(record.entry.dir, target, record.offset, READ_CHUNK_BYTES), READ_CHUNK_BYTES * 2 + 256);
    const status = parseStatus(text);
    if (status === undefined) throw new Error(`unexpected answer from the environment of process ${record.entry.id}: ${JSON.stringify(text.slice(0, 200))}`);
    return status;
  }

  async #readStatus(record: ProcessRecord): Promise<void> {
    if (record.status !== "running" || record.finishing) return record.finishing;
    for (;;) {
      const status = await this.#status(record);
      if (status.gone) {
        return this.finish(record, "lost", undefined, "its files in the environment are gone (the environment was reset or cleaned up)");
      }
      if (status.output !== "") {
        record.buffer.push(status.output);
        this.#watch(record, status.output);
      }
      record.offset = status.end;
      if (status.end < status.size) continue;
      // An exit file counts once the runner is gone: a command that writes one early does not end its record.
      if (status.alive) return;
      // An adopted process may have ended long before anyone looked: its exit file says when.
      const endedAt = record.adopted && status.endedAt !== undefined ? Math.min(Date.now(), status.endedAt) : undefined;
      if (status.exitCode !== undefined) {
        const ending: ProcessEnding = record.killRequested ? "killed" : status.timedOut ? "timed_out" : "exited";
        return this.finish(record, ending, status.exitCode, status.timedOut ? "its time limit ran out" : null, endedAt);
      }
      if (status.neverRan) {
        return this.finish(record, "lost", undefined, "it never ran: the mibyan process that started it stopped before it had recorded it and released it");
      }
      if (status.pidState === "recycled") {
        return this.finish(record, "lost", undefined, `pid ${record.entry.pid} now belongs to another process (its start time or group changed); it was not signalled`);
      }
      if (record.killRequested) return this.finish(record, "killed", undefined, null);
      if (status.timedOut) {
        // SIGTERM was ignored: the watchdog's SIGKILL took the runner with the command, before it could record an exit code.
        return this.finish(record, "timed_out", undefined, "its time limit ran out; it ignored SIGTERM and was killed with SIGKILL");
      }
      return this.finish(record, "lost", undefined, "it ended without recording an exit code");
    }
  }

  #watch(record: ProcessRecord, output: string): void {
    const match = record.watcher?.feed(output, Date.now());
    if (match) this.notifications.push(this.#watchNotification(record, match));
  }

  #watchNotification(record: ProcessRecord, match: { pattern: string; line: string; suppressed: number; final: boolean }): ProcessNotification {
    return { type: "watch", processId: record.entry.id, sessionId: record.entry.owner, command: record.entry.command, ...match, at: Date.now() };
  }

  // ---- ending ---------------------------------------------------------------

  /**
   * Ends a record: writes its receipt, drops it from the checkpoint, and only
   * then marks it ended, so whoever waits on it finds the receipt written.
   */
  finish(record: ProcessRecord, ending: ProcessEnding, exitCode: number | undefined, reason: string | null, endedAtGiven?: number): Promise<void> {
    if (record.status !== "running") return Promise.resolve();
    record.finishing ??= (async () => {
      const endedAt = endedAtGiven ?? Date.now();
      if (this.persistence) {
        try {
          record.receipt = await this.persistence.writeReceipt(record, ending, exitCode, reason, endedAt);
        } catch (err) {
          record.warning = `its receipt could not be written: ${(err as Error).message}`;
        }
        await this.persistence.checkpoint.remove([record.entry.id], { force: true }).catch(() => undefined);
      }
      // The log holds the output unredacted: once the receipt keeps all of it (redacted), it goes.
      // A longer log stays for `log` until the record is evicted or the registry disposed.
      if (record.receipt && !record.receipt.outputTruncated) await this.removeFiles(record);
      record.status = ending;
      record.exitCode = exitCode;
      record.endedAt = endedAt;
      record.reason = reason;
      record.release?.();
      record.release = undefined;
      this.#evictEnded();
      const last = record.watcher?.end(endedAt);
      if (last) this.notifications.push(this.#watchNotification(record, last));
      if (record.entry.notifyOnComplete) {
        this.notifications.push({
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
    const ended = [...this.records.values()].filter((r) => r.status !== "running").sort((a, b) => (a.endedAt ?? 0) - (b.endedAt ?? 0));
    const withReceipt = ended.filter((r) => r.receipt !== undefined);
    for (const record of withReceipt.slice(0, Math.max(0, withReceipt.length - KEEP_ENDED_WITH_RECEIPT))) {
      this.records.delete(record.entry.id);
      void this.removeFiles(record);
    }
    const without = ended.filter((r) => r.receipt === undefined);
    for (const record of without.slice(0, Math.max(0, without.length - KEEP_ENDED_WITHOUT_RECEIPT))) {
      this.records.delete(record.entry.id);
      void this.removeFiles(record);
    }
  }

  /**
   * Removes the process's directory in its environment (log, FIFOs, exit
   * file); best effort, and only a directory the registry made (its root, its
   * id, its owner token): a record from a forged entry removes nothing.
   */
  async removeFiles(record: ProcessRecord): Promise<void> {
    if (record.logRemoved || (!record.env && !record.local) || record.entry.nonce === undefined) return;
    if (ownedDir(record.entry, this.options.controlRoot) === undefined) return;
    try {
      if (record.local) {
        await localRemove(record.entry.dir, record.entry.nonce);
      } else {
        await record.env!.exec(removeScript(record.entry.dir, record.entry.nonce), { timeoutMs: SCRIPT_TIMEOUT_MS, maxOutputChars: 4096, saveState: false });
      }
      record.logRemoved = true;
    } catch {
      // A closed environment took the files with it, or a later registry's pruning will not find them: nothing to keep.
    }
  }

  // ---- polling --------------------------------------------------------------

  schedulePolling(): void {
    if (this.#timer || this.options.pollIntervalMs <= 0) return;
    this.#timer = setInterval(() => {
      const running = [...this.records.values()].filter((r) => r.status === "running" && r.env !== undefined);
      if (running.length === 0) {
        this.stopPolling();
        return;
      }
      const now = Date.now();
      for (const record of running) {
        const due = record.watcher?.due(now);
        if (due) this.notifications.push(this.#watchNotification(record, due));
      }
      // A bounded number of reads per tick, taking turns, and none for a process still being
      // read: with hundreds of processes the reads must not pile up faster than they finish.
      const idle = running.filter((r) => r.inFlight === 0);
      const start = this.#pollTurn % Math.max(1, idle.length);
      const turn = [...idle.slice(start), ...idle.slice(0, start)].slice(0, MAX_POLLS_PER_TICK);
      this.#pollTurn = start + turn.length;
      for (const record of turn) this.refresh(record).catch(() => undefined);
    }, this.options.pollIntervalMs);
    this.#timer.unref();
  }

  stopPolling(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

export function tail(text: string, chars: number): string {
  return text.length <= chars ? text : text.slice(text.length - chars);
}
