/**
 * The stdio transport for MCP servers: the SDK's `Transport` over a child process, written here
 * rather than taken from the SDK's `StdioClientTransport` for three reasons:
 *
 * - Environment. The SDK always merges its `getDefaultEnvironment()` (HOME, LOGNAME, PATH, SHELL,
 *   TERM, USER of the parent) *under* the `env` it is given, so a server would see variables the
 *   entry never named. Here the child gets exactly the environment passed in.
 * - Process group. `npx -y some-server` is npm, then a shell, then node: the SDK kills only the
 *   direct child, so closing left the real server running (hermes #16788, #57355). The child runs
 *   in its own process group and `close()` signals the whole group.
 * - Leftovers. Every live child is remembered, and a process `exit` handler kills their groups, so a
 *   program that exits without `close()` still leaves nothing behind.
 *
 * Framing (newline-delimited JSON-RPC) is the SDK's own `ReadBuffer` / `serializeMessage`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, statSync, truncateSync, type WriteStream } from "node:fs";
import path from "node:path";

import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** How much of a server's stderr is kept in memory for error messages. */
const STDERR_TAIL_CHARS = 4_096;
/** A per-server log file larger than this is emptied when the server is next started. */
const MAX_LOG_BYTES = 1_048_576;
/** After stdin closes, how long a server gets to exit by itself before SIGTERM, then before SIGKILL. */
const EXIT_GRACE_MS = 500;
const TERM_GRACE_MS = 1_500;

export interface StdioTransportOptions {
  command: string;
  args: readonly string[];
  /** The child's whole environment (nothing of the parent's is added). */
  env: Record<string, string>;
  cwd?: string | undefined;
  /** Append the child's stderr to this file (created with its directory; mode 0600). */
  stderrLog?: string | undefined;
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

/** The pids of the stdio servers this process started and has not yet seen exit (for tests and `close()` checks). */
export function liveStdioPids(): number[] {
  return [...live].flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
}

export class ProcessGroupStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;

  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;
  private readonly readBuffer = new ReadBuffer();
  private stderrTailText = "";
  private log: WriteStream | undefined;
  private closing = false;

  constructor(private readonly options: StdioTransportOptions) {}

  /** The child's pid once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last few KiB the server wrote to stderr. */
  get stderrTail(): string {
    return this.stderrTailText;
  }

  start(): Promise<void> {
    if (this.child !== undefined) throw new Error("stdio transport already started");
    installExitHook();
    this.openLog();
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.command, [...this.options.args], {
        env: this.options.env,
        cwd: this.options.cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: process.platform !== "win32",
        shell: false,
        windowsHide: true,
      });
      this.child = child;
      this.exited = new Promise((done) => child.once("close", () => done()));
      child.once("error", (error) => {
        live.delete(child);
        reject(error);
        this.onerror?.(error);
      });
      child.once("spawn", () => {
        live.add(child);
        resolve();
      });
      child.once("close", () => {
        live.delete(child);
        this.log?.end();
        this.log = undefined;
        this.onclose?.();
      });
      child.stdin?.on("error", (error) => this.onerror?.(error));
      child.stdout?.on("error", (error) => this.onerror?.(error));
      child.stdout?.on("data", (chunk: Buffer) => {
        try {
          this.readBuffer.append(chunk);
        } catch (error) {
          this.onerror?.(error as Error);
          void this.close();
          return;
        }
        this.drain();
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        const text = chunk.toString("utf8");
        this.stderrTailText = (this.stderrTailText + text).slice(-STDERR_TAIL_CHARS);
        this.log?.write(chunk);
      });
    });
  }

  private drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        // A line that is not JSON-RPC (a server logging to stdout): reported, the stream goes on.
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
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

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (stdin === undefined || stdin === null || this.closing || stdin.destroyed) {
      return Promise.reject(new Error("Not connected"));
    }
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  /** Ends the server: stdin closed, then SIGTERM to its process group, then SIGKILL. Resolves once it exited. */
  async close(): Promise<void> {
    const child = this.child;
    if (child === undefined || this.closing) {
      await this.exited;
      return;
    }
    this.closing = true;
    const exited = this.exited!;
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.stdin?.end();
      } catch {
        // ignore: the pipe may be broken already
      }
      if (!(await settlesWithin(exited, EXIT_GRACE_MS))) {
        killGroup(child, "SIGTERM");
        if (!(await settlesWithin(exited, TERM_GRACE_MS))) {
          killGroup(child, "SIGKILL");
          await settlesWithin(exited, TERM_GRACE_MS);
        }
      }
    }
    // The direct child is gone; grandchildren still in its group would be orphans.
    killGroup(child, "SIGKILL");
    live.delete(child);
    this.readBuffer.clear();
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
