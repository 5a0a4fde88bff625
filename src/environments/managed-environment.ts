import type { Environment, ExecOptions, ExecResult } from "./types.js";

/**
 * The environment `EnvironmentManager.get` returns: the backend's own, with
 * use tracked for the idle timer. `unwrap()` gives the backend's object.
 */
export class ManagedEnvironment implements Environment {
  readonly #inner: Environment;
  readonly #onStart: () => void;
  readonly #onEnd: () => void;
  readonly #close: () => Promise<void>;

  /** @internal Created by `EnvironmentManager`. */
  constructor(inner: Environment, hooks: { onStart: () => void; onEnd: () => void; close: () => Promise<void> }) {
    this.#inner = inner;
    this.#onStart = hooks.onStart;
    this.#onEnd = hooks.onEnd;
    this.#close = hooks.close;
  }

  get backend(): string {
    return this.#inner.backend;
  }

  get taskId(): string {
    return this.#inner.taskId;
  }

  get isolation() {
    return this.#inner.isolation;
  }

  get cwd(): string {
    return this.#inner.cwd;
  }

  /** The backend's environment object. */
  unwrap(): Environment {
    return this.#inner;
  }

  async exec(command: string, options: ExecOptions): Promise<ExecResult> {
    this.#onStart();
    try {
      return await this.#inner.exec(command, options);
    } finally {
      this.#onEnd();
    }
  }

  /**
   * Counts as in use (never idle) until the returned function is called, as a
   * running command does. Calling it more than once releases once.
   */
  hold(): () => void {
    this.#onStart();
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#onEnd();
    };
  }

  /** Closes the environment and removes it from its manager. */
  close(): Promise<void> {
    return this.#close();
  }

  disposeSync(): void {
    this.#inner.disposeSync?.();
  }
}
