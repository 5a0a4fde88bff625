/**
 * What a sandbox backend (singularity, modal, daytona, vercel_sandbox) must
 * provide: a way to start a program inside its sandbox and follow its output,
 * and a way to remove the sandbox. Everything else (shell state, exit codes,
 * the working directory, timeouts, killing a process tree, output caps) is done
 * once, by `SandboxEnvironment`, with the same bash scripts the docker backend
 * runs (`sandbox-scripts.ts`). A backend is then only its transport: the vendor
 * SDK call that runs `argv`, and the one that deletes the sandbox.
 *
 * The transport never interprets output and never kills anything itself: a
 * timeout or an abort makes the environment run the kill script as a second
 * command and then `detach` the first one.
 */

/** How a started command ended, as far as the transport can tell. */
export interface SandboxCommandEnd {
  /** The program's exit code, or null when the transport cannot tell (stream lost, detached). */
  exitCode: number | null;
  /** Set when following the command failed (connection dropped, API error). */
  error?: Error;
}

/** A program started inside a sandbox. */
export interface SandboxCommand {
  /**
   * Settles once the program has ended and all its output was delivered to
   * `onOutput`, or once it was detached. Never rejects: a transport failure
   * resolves with `{ exitCode: null, error }`.
   */
  readonly done: Promise<SandboxCommandEnd>;
  /**
   * Stops following the program here (closes the stream, stops polling) without
   * waiting for it; `done` then settles promptly (`exitCode: null` if it had not
   * ended). The program itself is not signalled: the environment kills it with
   * the kill script. Idempotent; a no-op after `done` settled.
   */
  detach(): void;
}

export interface SandboxTransport {
  /** For messages: `daytona sandbox 3f2c…`, `apptainer instance mibyan-task-1`. */
  readonly description: string;
  /**
   * Starts `argv` inside the sandbox: `argv[0]` is looked up in the sandbox's
   * PATH, the rest are passed as they are (a transport whose API takes one
   * command string quotes each with `shellQuote`), stdin is empty. Every byte
   * the program writes to stdout and stderr goes to `onOutput`, in the order
   * it arrives (the environment's scripts merge stderr into stdout, so the
   * order is the program's own). Rejects only when the program could not be
   * started at all.
   */
  start(argv: readonly string[], onOutput: (chunk: Uint8Array) => void): Promise<SandboxCommand>;
  /** Deletes the sandbox and everything in it. Idempotent. */
  close(): Promise<void>;
  /**
   * Optional best-effort deletion that finishes before returning, for the
   * process's `exit` event (see `Environment.disposeSync`). Cloud transports
   * usually cannot offer it; their sandboxes end by their own timeout.
   */
  closeSync?(): void;
}

/** Creates the sandbox of one task and returns the transport into it. */
export type SandboxOpener = (taskId: string) => Promise<SandboxTransport>;
