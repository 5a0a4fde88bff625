/**
 * The registry of background processes: what `terminal` with `background: true`
 * starts and what the `process` tool manages (poll, log, wait, kill, write).
 *
 * - A process runs inside its task's environment, through the file scheme of
 *   `background-scripts.ts` (log file, input FIFO, pid with start time, exit
 *   file), so it works the same on every backend and keeps running when the
 *   runtime that started it goes away.
 * - Every process belongs to the session that started it. Any other session
 *   asking about its id gets `ProcessNotFoundError`, the same answer as for an
 *   id that never existed: an id alone never gives access.
 * - Output is read from the log file on demand (poll, wait, log) and every
 *   `pollIntervalMs` while a process runs, into a bounded rolling buffer (the
 *   latest `bufferChars` characters); the log file keeps everything, and `log`
 *   reads lines from it.
 * - While a process runs, its environment is held (`hold()`), so the idle
 *   cleanup does not close the sandbox under it.
 *
 * Checkpoints, adoption after a restart and receipts build on this (issue 5).
 */

import { randomBytes } from "node:crypto";

import type { Environment, EnvironmentProvider } from "../environments/types.js";
import { redactSecrets } from "../redaction/redact.js";
import { CappedOutput } from "../terminal/output-buffer.js";
import { NO_PTY_MESSAGE } from "../terminal/pty-command.js";
import {
  closeInputScript,
  killScript,
  launchScript,
  logLinesScript,
  parseLaunch,
  parseStatus,
  statusScript,
  writeScript,
  type BackgroundStatus,
} from "./background-scripts.js";

/** How a process is doing. */
export type ProcessStatus = "running" | "exited" | "killed" | "lost";

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
}

/** Thrown for an id that does not exist or is not the caller's: the two are not told apart. */
export class ProcessNotFoundError extends Error {
  readonly code = "not_found";
  constructor(readonly processId: string) {
    super(`No background process with id ${JSON.stringify(processId)} in this session.`);
    this.name = "ProcessNotFoundError";
  }
}

/** A request that the process's state does not allow (writing to one that ended). */
export class ProcessStateError extends Error {
  readonly code = "invalid_state";
  constructor(message: string) {
    super(message);
    this.name = "ProcessStateError";
  }
}

export interface ProcessRegistryOptions {
  /** Characters of recent output kept in memory per process. Default 100,000. */
  bufferChars?: number;
  /** How often running processes are checked in the background; 0 turns it off. Default 2,000 ms. */
  pollIntervalMs?: number;
  /** How often `wait` checks. Default 200 ms. */
  waitIntervalMs?: number;
  /** SIGTERM→SIGKILL grace of `kill`. Default 3,000 ms. */
  killGraceMs?: number;
  /**
   * Where to find a task's environment again when the one a process was
   * started in has been closed (idle cleanup, `closeAll`): the local machine,
   * an ssh host or a kept sandbox still has the process and its files. Without
   * it, a closed environment means the process is lost.
   */
  environments?: EnvironmentProvider | (() => EnvironmentProvider | Promise<EnvironmentProvider>);
}

export interface StartProcessOptions {
  /** The session that owns the process; only it can see and manage it. */
  sessionId: string;
  /** Run it in a pseudo-terminal. */
  pty?: boolean;
  /** Start in this directory instead of the task's. */
  cwd?: string;
  signal?: AbortSignal;
}

export interface LogLines {
  /** 1-based number of the first line returned. */
  from: number;
  lines: string[];
  totalLines: number;
}

/** Longest piece of log read by one status call. */
const READ_CHUNK_BYTES = 256 * 1024;
/** Time allowed for one bookkeeping command in the environment. */
const SCRIPT_TIMEOUT_MS = 30_000;

interface ProcessRecord {
  readonly id: string;
  readonly sessionId: string;
  readonly command: string;
  env: Environment;
  readonly dir: string;
  readonly pid: number;
  readonly startTime: string;
  readonly pty: boolean;
  readonly startedAt: number;
  readonly buffer: CappedOutput;
  status: ProcessStatus;
  exitCode: number | undefined;
  endedAt: number | undefined;
  offset: number;
  /** Set once `kill` signalled it, so an end without exit code reads as killed, not lost. */
  killRequested: boolean;
  /** Serialises reads of the log, so no output is read twice. */
  refreshing: Promise<void>;
  release: (() => void) | undefined;
}

function newId(): string {
  return `proc_${randomBytes(6).toString("hex")}`;
}

export class ProcessRegistry {
  readonly #records = new Map<string, ProcessRecord>();
  readonly #options: Required<Omit<ProcessRegistryOptions, "environments">>;
  readonly #environments: ProcessRegistryOptions["environments"];
  #timer: NodeJS.Timeout | undefined;

  constructor(options: ProcessRegistryOptions = {}) {
    this.#options = {
      bufferChars: options.bufferChars ?? 100_000,
      pollIntervalMs: options.pollIntervalMs ?? 2_000,
      waitIntervalMs: options.waitIntervalMs ?? 200,
      killGraceMs: options.killGraceMs ?? 3_000,
    };
    this.#environments = options.environments;
  }

  /** Starts `command` in the background in `env`; returns at once with its id. */
  async start(env: Environment, command: string, options: StartProcessOptions): Promise<ProcessInfo> {
    const pty = options.pty === true;
    const launched = await env.exec(launchScript(command, { pty }), {
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
    const record: ProcessRecord = {
      id: newId(),
      sessionId: options.sessionId,
      command: redactSecrets(command),
      env,
      dir: where.dir,
      pid: where.pid,
      startTime: where.startTime,
      pty,
      startedAt: Date.now(),
      buffer: new CappedOutput(this.#options.bufferChars, { headRatio: 0 }),
      status: "running",
      exitCode: undefined,
      endedAt: undefined,
      offset: 0,
      killRequested: false,
      refreshing: Promise.resolve(),
      release: env.hold?.(),
    };
    this.#records.set(record.id, record);
    this.#schedulePolling();
    return this.#info(record);
  }

  /** The session's processes, newest first. */
  list(sessionId: string): ProcessInfo[] {
    return [...this.#records.values()]
      .filter((r) => r.sessionId === sessionId)
      .sort((a, b) => b.startedAt - a.startedAt)
      .map((r) => this.#info(r));
  }

  /** Fresh status and the latest output (at most `previewChars`, from the rolling buffer). */
  async poll(sessionId: string, id: string, previewChars = 2_000): Promise<ProcessInfo & { preview: string }> {
    const record = this.#get(sessionId, id);
    await this.#refresh(record);
    return { ...this.#info(record), preview: tail(record.buffer.toString(), previewChars) };
  }

  /**
   * Lines of the whole log. Without `offset`, the last `limit` lines; `offset`
   * is the 1-based first line.
   */
  async log(sessionId: string, id: string, options: { offset?: number; limit?: number } = {}): Promise<LogLines> {
    const record = this.#get(sessionId, id);
    const limit = Math.max(1, Math.floor(options.limit ?? 200));
    const script = (from: number, to: number) => logLinesScript(record.dir, from, to, 4 * 1024 * 1024);
    const read = async (from: number, to: number) => {
      const r = await this.#script(record, script(from, to), 8 * 1024 * 1024);
      if (r.startsWith("gone")) throw new ProcessStateError(`The log of process ${id} no longer exists.`);
      const newline = r.indexOf("\n");
      const total = Number(r.slice(0, newline));
      const body = r.slice(newline + 1);
      const lines = body === "" ? [] : body.replace(/\n$/, "").split("\n");
      return { total, lines };
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
   */
  async wait(sessionId: string, id: string, timeoutMs: number, signal?: AbortSignal): Promise<ProcessInfo & { output: string; timedOut: boolean }> {
    const record = this.#get(sessionId, id);
    const deadline = Date.now() + Math.max(0, timeoutMs);
    await this.#refresh(record);
    while (record.status === "running" && Date.now() < deadline && !signal?.aborted) {
      await sleep(Math.min(this.#options.waitIntervalMs, Math.max(0, deadline - Date.now())), signal);
      await this.#refresh(record);
    }
    return { ...this.#info(record), output: record.buffer.toString(), timedOut: record.status === "running" };
  }

  /** SIGTERM to the process's group, SIGKILL after the grace period. */
  async kill(sessionId: string, id: string): Promise<ProcessInfo> {
    const record = this.#get(sessionId, id);
    await this.#refresh(record);
    if (record.status !== "running") return this.#info(record);
    record.killRequested = true;
    const answer = (await this.#script(record, killScript(record.dir, this.#options.killGraceMs), 4096, this.#options.killGraceMs + SCRIPT_TIMEOUT_MS)).trim();
    if (answer === "recycled") {
      // The pid now belongs to another program: not ours to signal.
      this.#finish(record, "lost", undefined);
    }
    await this.#refresh(record);
    return this.#info(record);
  }

  /** Sends `data` to the process's input (stdin, or the terminal in PTY mode). */
  async write(sessionId: string, id: string, data: string): Promise<ProcessInfo> {
    const record = this.#get(sessionId, id);
    if (data.includes("\0")) throw new ProcessStateError("The input must not contain NUL characters.");
    await this.#refresh(record);
    if (record.status !== "running") throw new ProcessStateError(`Process ${id} has ended (${record.status}); it reads no more input.`);
    await this.#script(record, writeScript(record.dir, data), 4096);
    return this.#info(record);
  }

  /** `write` with Enter after it (a newline; a carriage return in PTY mode, as a keyboard sends). */
  submit(sessionId: string, id: string, data: string): Promise<ProcessInfo> {
    const record = this.#get(sessionId, id);
    return this.write(sessionId, id, `${data}${record.pty ? "\r" : "\n"}`);
  }

  /** Ends the process's input: a program reading it sees end-of-file. */
  async closeInput(sessionId: string, id: string): Promise<ProcessInfo> {
    const record = this.#get(sessionId, id);
    await this.#script(record, closeInputScript(record.dir), 4096);
    return this.#info(record);
  }

  /** Stops the background polling (processes keep running). */
  dispose(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    for (const record of this.#records.values()) {
      record.release?.();
      record.release = undefined;
    }
  }

  #get(sessionId: string, id: string): ProcessRecord {
    const record = typeof id === "string" ? this.#records.get(id) : undefined;
    if (!record || record.sessionId !== sessionId) throw new ProcessNotFoundError(String(id));
    return record;
  }

  #info(record: ProcessRecord): ProcessInfo {
    return {
      id: record.id,
      command: record.command,
      taskId: record.env.taskId,
      backend: record.env.backend,
      pid: record.pid,
      pty: record.pty,
      status: record.status,
      exitCode: record.exitCode,
      startedAt: record.startedAt,
      endedAt: record.endedAt,
      outputBytes: record.offset,
    };
  }

  async #script(record: ProcessRecord, script: string, maxOutputChars: number, timeoutMs = SCRIPT_TIMEOUT_MS): Promise<string> {
    const options = { timeoutMs, maxOutputChars, saveState: false };
    let result;
    try {
      result = await record.env.exec(script, options);
    } catch (err) {
      if (!/is closed|was closed/.test((err as Error).message)) throw err;
      const again = await this.#reacquire(record);
      if (again === undefined) {
        this.#finish(record, "lost", undefined);
        throw new ProcessStateError(`Process ${record.id} is gone: the environment of task ${record.env.taskId} was closed.`);
      }
      result = await again.exec(script, options);
    }
    if (result.timedOut) throw new Error(`the environment of process ${record.id} did not answer within ${Math.round(timeoutMs / 1000)} s`);
    return result.output;
  }

  /** The task's environment anew, after the process's one was closed; undefined without a provider. */
  async #reacquire(record: ProcessRecord): Promise<Environment | undefined> {
    if (this.#environments === undefined) return undefined;
    const provider = typeof this.#environments === "function" ? await this.#environments() : this.#environments;
    const env = await provider.get(record.env.taskId);
    record.release?.();
    record.env = env;
    record.release = record.status === "running" ? env.hold?.() : undefined;
    return env;
  }

  /**
   * Reads new output and the process's state; one read at a time per process.
   * Rejects when the environment cannot be asked (the next read tries again);
   * an environment that was closed means the process is lost.
   */
  #refresh(record: ProcessRecord): Promise<void> {
    if (record.status !== "running") return record.refreshing;
    const current = record.refreshing.then(() => this.#readStatus(record));
    record.refreshing = current.catch(() => undefined);
    return current;
  }

  async #readStatus(record: ProcessRecord): Promise<void> {
    if (record.status !== "running") return;
    let status: BackgroundStatus | undefined;
    do {
      const text = await this.#script(record, statusScript(record.dir, record.offset, READ_CHUNK_BYTES), READ_CHUNK_BYTES * 2 + 256);
      status = parseStatus(text);
      if (status === undefined) throw new Error(`unexpected answer from the environment of process ${record.id}`);
      if (status.gone) {
        this.#finish(record, "lost", undefined);
        return;
      }
      if (status.output !== "") record.buffer.push(status.output);
      record.offset = status.end;
    } while (status.end < status.size);
    if (status.exitCode !== undefined) this.#finish(record, record.killRequested ? "killed" : "exited", status.exitCode);
    else if (!status.alive) this.#finish(record, record.killRequested ? "killed" : "lost", undefined);
  }

  #finish(record: ProcessRecord, status: ProcessStatus, exitCode: number | undefined): void {
    if (record.status !== "running") return;
    record.status = status;
    record.exitCode = exitCode;
    record.endedAt = Date.now();
    record.release?.();
    record.release = undefined;
  }

  #schedulePolling(): void {
    if (this.#timer || this.#options.pollIntervalMs <= 0) return;
    this.#timer = setInterval(() => {
      const running = [...this.#records.values()].filter((r) => r.status === "running");
      if (running.length === 0) {
        clearInterval(this.#timer);
        this.#timer = undefined;
        return;
      }
      for (const record of running) this.#refresh(record).catch(() => undefined);
    }, this.#options.pollIntervalMs);
    this.#timer.unref();
  }
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
