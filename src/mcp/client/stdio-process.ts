/**
 * A stdio MCP server's child process, without the protocol: what `ProcessGroupStdioTransport`
 * (stdio-transport.ts) frames JSON-RPC over, and what launch.ts starts before the MCP SDK has even
 * loaded. This module imports nothing of the SDK (not even its framing, which pulls zod), so the CLI
 * can spawn the servers while the SDK is still loading.
 *
 * - Environment: the child gets exactly `env` (environment.ts builds the minimal one); nothing of
 *   the parent's is added (the SDK's own transport merges its default variables under it).
 * - Process group: the child leads a group of its own, and `terminate()` signals the whole group,
 *   so `npx`'s grandchildren do not survive (hermes #16788, #57355).
 * - Leftovers: every live child is remembered, and a process `exit` handler kills their groups, so
 *   a program that exits without closing (or throws before it could) still leaves nothing behind.
 * - Stdout is held until a consumer attaches (`attach`): a server spawned early loses nothing it
 *   writes before the client is ready, and its exit before then is reported to the consumer too.
 * - Stderr goes to the per-server log and a 4 KiB tail in memory (for connection errors) from the
 *   start, attached or not.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, statSync, truncateSync, type WriteStream } from "node:fs";
import path from "node:path";

/** How much of a server's stderr is kept in memory for error messages. */
const STDERR_TAIL_CHARS = 4_096;
/** A per-server log file larger than this is emptied when the server is next started. */
const MAX_LOG_BYTES = 1_048_576;
/** After stdin closes, how long a server gets to exit by itself before SIGTERM, then before SIGKILL. */
const EXIT_GRACE_MS = 500;
const TERM_GRACE_MS = 1_500;

export interface StdioProcessOptions {
  command: string;
  args: readonly string[];
  /** The child's whole environment (nothing of the parent's is added). */
  env: Record<string, string>;
  cwd?: string | undefined;
  /** Append the child's stderr to this file (created with its directory; mode 0600). */
  stderrLog?: string | undefined;
}

/** What the consumer of a process is told: its stdout, its end, and stream errors. */
export interface StdioProcessEvents {
  stdout(chunk: Uint8Array): void;
  close(): void;
  error(error: Error): void;
}

/** The per-server stderr log. */
export function stderrLogPath(home: string, server: string): string {
  const safe = server.replace(/[^A-Za-z0-9_.-]/gu, "_").replace(/^\.+/u, "_") || "_";
  return path.join(home, "logs", "mcp", `${safe}.log`);
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined || pid <= 1) return;
  try {
    // A negative pid signals the group the child leads (it was spawned detached).
    process.kill(process.platform === "win32" ? pid : -pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of live) killGroup(child, "SIGKILL");
  });
}

/**
 * Ends every stdio server this process started and has not seen exit: SIGTERM to their process
 * groups, then SIGKILL to what is left after `graceMs`. For a program about to die of a signal
 * (the CLI's signal handler), where no `close()` will run and the `exit` hook does not either.
 */
export async function endLiveStdioServers(graceMs: number = TERM_GRACE_MS): Promise<void> {
  const children = [...live];
  if (children.length === 0) return;
  const gone = children.map((child) =>
    child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((done) => child.once("exit", () => done())),
  );
  for (const child of children) killGroup(child, "SIGTERM");
  await settlesWithin(Promise.all(gone).then(() => undefined), graceMs);
  // The leaders are gone or stubborn; either way nothing of their groups may stay.
  for (const child of children) killGroup(child, "SIGKILL");
}

/** The pids of the stdio servers this process started and has not yet seen exit (for tests and `close()` checks). */
export function liveStdioPids(): number[] {
  return [...live].flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
}

type Pending = { kind: "stdout"; chunk: Buffer } | { kind: "error"; error: Error } | { kind: "close" };

export class StdioServerProcess {
  /** Resolves once the child runs; rejects with the spawn error (a missing program: ENOENT). */
  readonly started: Promise<void>;
  /** Resolves when the child has exited and its streams have closed (or it never started). */
  readonly exited: Promise<void>;
  private readonly child: ChildProcess;
  private stderrTailText = "";
  private log: WriteStream | undefined;
  private events: StdioProcessEvents | undefined;
  /** What happened before `attach`, in order. */
  private pending: Pending[] | undefined = [];
  private hasClosed = false;
  private terminating: Promise<void> | undefined;

  /** Spawns the child now. Never throws for a bad command: `started` rejects instead. */
  constructor(private readonly options: StdioProcessOptions) {
    installExitHook();
    this.openLog();
    const child = spawn(options.command, [...options.args], {
      env: options.env,
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe"],
      detached: process.platform !== "win32",
      shell: false,
      windowsHide: true,
    });
    this.child = child;
    // Remembered from the moment it has a pid (before its 'spawn' event), so a program that exits on
    // this very turn still ends it.
    if (child.pid !== undefined) live.add(child);
    this.exited = new Promise((done) => child.once("close", () => done()));
    this.started = new Promise((resolve, reject) => {
      // `on`, not `once`: a second error (a failed kill) must not be an uncaught exception.
      child.on("error", (error) => {
        reject(error);
        this.emit({ kind: "error", error });
      });
      child.once("spawn", () => resolve());
    });
    this.started.catch(() => undefined); // reported to whoever awaits it; never an unhandled rejection
    child.once("close", () => {
      live.delete(child);
      this.hasClosed = true;
      this.log?.end();
      this.log = undefined;
      this.emit({ kind: "close" });
    });
    child.stdin?.on("error", (error) => this.emit({ kind: "error", error }));
    child.stdout?.on("error", (error) => this.emit({ kind: "error", error }));
    child.stdout?.on("data", (chunk: Buffer) => this.emit({ kind: "stdout", chunk }));
    child.stderr?.on("data", (chunk: Buffer) => {
      this.stderrTailText = (this.stderrTailText + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
      this.log?.write(chunk);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The last few KiB the server wrote to stderr. */
  get stderrTail(): string {
    return this.stderrTailText;
  }

  /** Whether the child has exited (its streams closed). */
  get closed(): boolean {
    return this.hasClosed;
  }

  /** Whether its stdin still takes writes. */
  get writable(): boolean {
    const stdin = this.child.stdin;
    return stdin !== null && !stdin.destroyed && this.terminating === undefined;
  }

  /**
   * Hands the process to its consumer. What happened before (stdout, stream errors, the exit) is
   * delivered on a later turn of the event loop, in order, so a consumer that sends its first
   * message right after attaching sees an early exit as the end of that exchange, as it would have
   * with a child it had just spawned. Later events go straight through. Only one consumer, once.
   */
  attach(events: StdioProcessEvents): void {
    if (this.events !== undefined) throw new Error("stdio server process already attached");
    this.events = events;
    const earlier = this.pending ?? [];
    if (earlier.length === 0) {
      this.pending = undefined;
      return;
    }
    setImmediate(() => {
      // Anything that arrived meanwhile was queued behind these, so the order holds.
      const queued = this.pending ?? [];
      this.pending = undefined;
      for (const event of queued) this.deliver(event);
    });
  }

  private emit(event: Pending): void {
    if (this.pending !== undefined) this.pending.push(event);
    else this.deliver(event);
  }

  private deliver(event: Pending): void {
    const events = this.events;
    if (events === undefined) return;
    if (event.kind === "stdout") events.stdout(event.chunk);
    else if (event.kind === "error") events.error(event.error);
    else events.close();
  }

  /** Writes to the child's stdin; resolves when written (or buffered), rejects when stdin is gone. */
  write(text: string): Promise<void> {
    const stdin = this.child.stdin;
    if (stdin === null || !this.writable) return Promise.reject(new Error("Not connected"));
    return new Promise((resolve) => {
      if (stdin.write(text)) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /**
   * Ends the server: stdin closed, then SIGTERM to its process group, then SIGKILL; resolves once it
   * has exited. Idempotent. A child that never started resolves at once.
   */
  terminate(): Promise<void> {
    this.terminating ??= this.end();
    return this.terminating;
  }

  private async end(): Promise<void> {
    const child = this.child;
    if (child.pid === undefined) {
      // Never spawned (the 'error' event may still be on its way): nothing runs.
      await this.started.catch(() => undefined);
      return;
    }
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.stdin?.end();
      } catch {
        // ignore: the pipe may be broken already
      }
      if (!(await settlesWithin(this.exited, EXIT_GRACE_MS))) {
        killGroup(child, "SIGTERM");
        if (!(await settlesWithin(this.exited, TERM_GRACE_MS))) {
          killGroup(child, "SIGKILL");
          await settlesWithin(this.exited, TERM_GRACE_MS);
        }
      }
    }
    // The direct child is gone; grandchildren still in its group would be orphans.
    killGroup(child, "SIGKILL");
    live.delete(child);
  }

  private openLog(): void {
    const file = this.options.stderrLog;
    if (file === undefined) return;
    try {
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      const size = statSync(file, { throwIfNoEntry: false })?.size ?? 0;
      if (size > MAX_LOG_BYTES) truncateSync(file, 0);
      this.log = createWriteStream(file, { flags: "a", mode: 0o600 });
      this.log.on("error", () => {
        this.log = undefined; // logging is best effort; the tail in memory stays
      });
      this.log.write(`--- ${new Date().toISOString()} start ${this.options.command}\n`);
    } catch {
      this.log = undefined;
    }
  }
}

function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref?.();
    void promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
