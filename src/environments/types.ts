/**
 * One interface for every place a command can run: the local machine, a
 * docker container, an ssh host, a singularity instance, a cloud sandbox. The
 * terminal tool knows only this interface; each backend is a module of its own.
 */
import type { BackendInfo } from "../approval/flow/types.js";
import type { ProcessGroupResult } from "../terminal/process-group-types.js";

export interface ExecOptions {
  /** Time limit in milliseconds; on expiry the command's whole process tree is killed (exit code 124). */
  timeoutMs: number;
  /** The caller's cancellation; kills the process tree (exit code 130). */
  signal?: AbortSignal;
  /** Output kept (head and tail); the rest is counted and dropped. */
  maxOutputChars: number;
  /** Share of the kept output taken from the start. Default 0.2. */
  headRatio?: number;
  /**
   * Working directory for this command only, inside the environment. The
   * task's tracked directory does not move, not even by a `cd` inside the
   * command; exported variables the command sets still carry to the next one.
   * A directory that cannot be entered makes the command fail (bash's `cd`
   * error, exit code 1) without running it.
   */
  cwd?: string;
  /**
   * Save what the command changes (working directory, exported variables) for
   * the task's next command. Default true. `false` runs in the task's state
   * without touching it: the runtime's own helper commands (file tools,
   * background-process bookkeeping) use it, so that they can run while a
   * command of the task runs without overwriting what that command saves.
   */
  saveState?: boolean;
}

/** What a command produced; the same shape on every backend. */
export type ExecResult = ProcessGroupResult;

export interface Environment {
  /** `local`, `docker`, `ssh`, `singularity`, `modal`, `daytona`, `vercel_sandbox`. */
  readonly backend: string;
  /** The task this environment belongs to. */
  readonly taskId: string;
  /** What the approval gate needs: the backend, and whether the host's files are reachable from it. */
  readonly isolation: BackendInfo;
  /** The task's working directory, as the last command left it. */
  readonly cwd: string;
  /**
   * Runs a command in the task's shell state: the working directory and the
   * exported variables that earlier commands of this task left carry over to
   * this one, and never to another task.
   */
  exec(command: string, options: ExecOptions): Promise<ExecResult>;
  /**
   * Releases everything (container removed, connection closed, state files
   * deleted). Idempotent. Commands still running are killed first. After it,
   * `exec` rejects.
   */
  close(): Promise<void>;
  /**
   * Optional best-effort cleanup that finishes before returning, for the
   * process's `exit` event and fatal signals, where nothing asynchronous runs
   * any more (kill running process groups, delete local files, a blocking
   * `docker rm -f`). Leaves the environment closed. Without it, an environment
   * still open at exit is simply abandoned.
   */
  disposeSync?(): void;
  /**
   * Optional: keeps the environment from being closed as idle until the
   * returned function is called (a background process runs in it). The
   * manager's environments have it.
   */
  hold?(): () => void;
}

/** Creates environments of one backend. */
export interface EnvironmentFactory {
  readonly backend: string;
  /** Why the backend cannot be used here (missing binary, credentials, daemon), or undefined when it can. */
  unavailableReason(): string | undefined;
  create(taskId: string): Promise<Environment>;
}

/**
 * What the terminal tool needs from whatever hands out environments: the
 * task's environment, created on first use. `EnvironmentManager` is the real one.
 */
export interface EnvironmentProvider {
  get(taskId: string): Promise<Environment>;
}
