/**
 * Hands out one environment per (task, backend), created on first use through
 * the backend's factory, and closes it again: on request, after it sat unused
 * for `terminal.idle_timeout_seconds` (default 600), and when the process exits.
 *
 * - `get(taskId)` for a task that has no environment yet creates one; calls
 *   that arrive while it is being created wait for the same one (never two).
 *   A failed creation is not remembered: the next `get` tries again.
 * - The backend is `setBackend(taskId, name)` for that task, else the
 *   manager's default (config `terminal.backend`, re-read for every new
 *   environment, so editing config.yaml takes effect for new tasks).
 * - What `get` returns is a thin wrapper around the backend's environment
 *   that tells the manager when it is in use: an environment running a command
 *   is never idle, and the idle clock starts when its last command ends. Its
 *   `close()` closes it and forgets it (the task's next `get` starts afresh).
 * - Idle timers are `unref`'d: they never keep the process alive.
 * - Process exit: once a manager holds an environment it registers (once per
 *   process, removed again when no manager holds any) handlers for
 *   `beforeExit` (asynchronous `closeAll`: the event loop is empty, so this is
 *   the natural end of the program), `exit` (synchronous `disposeSync` of every
 *   environment that has one: kill running commands, delete local state) and
 *   SIGINT/SIGTERM/SIGHUP. A signal handler only acts when nobody else listens
 *   for that signal: it disposes synchronously, removes itself and re-raises
 *   the signal, so the process still dies the way it would have. When the
 *   program has its own handler, that handler decides, and if it then exits,
 *   the `exit` handler cleans up. Nothing runs on SIGKILL, on a crash of the
 *   runtime itself or when `process.abort()` is called; environments without
 *   `disposeSync` (remote ones) get only what `beforeExit` gave them.
 */

import { getConfig } from "../config/load-config.js";
import { BACKENDS, UnknownBackendError, type BackendLoader, type BackendName } from "./backends.js";
import { exitHooks } from "./exit-hooks.js";
import { ManagedEnvironment } from "./managed-environment.js";
import { setSharedEnvironmentManager, sharedEnvironmentManager } from "./shared-manager.js";
import type { EnvironmentFactory, EnvironmentProvider } from "./types.js";

export { ManagedEnvironment };

/** Seconds an unused environment is kept when config does not say. */
export const DEFAULT_IDLE_TIMEOUT_SECONDS = 600;
/** The backend when neither the task nor the config names one. */
export const DEFAULT_BACKEND = "local";

export interface EnvironmentManagerOptions {
  /** Backend for tasks without their own. Default: config `terminal.backend` (else `local`), read for every new environment. */
  defaultBackend?: string | (() => string);
  /**
   * Milliseconds an environment may sit unused before it is closed; `0` or
   * `Infinity`: never. Default: config `terminal.idle_timeout_seconds` (else 600 s),
   * read whenever an idle timer starts.
   */
  idleTimeoutMs?: number | (() => number);
  /** Backend name → loader, consulted for backends no factory was registered for. Default: `BACKENDS`. */
  backends?: Readonly<Record<string, BackendLoader>>;
  /** Factories to use before `backends` (same as calling `registerBackend` with each). */
  factories?: Iterable<EnvironmentFactory>;
  /** Close the environments when the process exits (see the module comment). Default true. */
  closeOnExit?: boolean;
}

/** A backend that exists but cannot be used here (its `unavailableReason`). */
export class EnvironmentUnavailableError extends Error {
  constructor(
    readonly backend: string,
    readonly reason: string,
  ) {
    super(`The "${backend}" terminal backend is not available: ${reason}`);
    this.name = "EnvironmentUnavailableError";
  }
}

/** What `list()` reports about one environment. */
export interface ManagedEnvironmentInfo {
  taskId: string;
  backend: string;
  /** Still being created. */
  starting: boolean;
  /** Commands running right now. */
  running: number;
  /** Milliseconds since it was last used (0 while running). */
  idleMs: number;
}

interface Entry {
  readonly key: string;
  readonly taskId: string;
  readonly backend: string;
  ready: Promise<ManagedEnvironment>;
  env?: ManagedEnvironment;
  running: number;
  lastUsed: number;
  timer?: NodeJS.Timeout;
  closed: boolean;
  closing?: Promise<void>;
}

const keyOf = (backend: string, taskId: string): string => `${backend}\u0000${taskId}`;

/**
 * `Custom` names the backends an embedder registers with `registerBackend`
 * (`new EnvironmentManager<"my_sandbox">()`), so `setBackend` accepts them;
 * without it, only the built-in `BackendName`s type-check.
 */
export class EnvironmentManager<Custom extends string = never> implements EnvironmentProvider {
  readonly #options: EnvironmentManagerOptions;
  readonly #factories = new Map<string, EnvironmentFactory>();
  readonly #loading = new Map<string, Promise<EnvironmentFactory>>();
  readonly #taskBackends = new Map<string, string>();
  readonly #entries = new Map<string, Entry>();

  constructor(options: EnvironmentManagerOptions = {}) {
    this.#options = options;
    for (const factory of options.factories ?? []) this.registerBackend(factory);
  }

  /** Makes `factory` the one used for `factory.backend` (replacing a registered or built-in one) for environments created from now on. */
  registerBackend(factory: EnvironmentFactory): void {
    this.#factories.set(factory.backend, factory);
    this.#loading.delete(factory.backend);
  }

  /**
   * Runs `taskId`'s next environments on `backend`; `undefined` returns it to the default. An environment it
   * already has is kept (idle cleanup closes it). A name that is neither built in nor registered (register
   * custom backends first) throws `UnknownBackendError` at once, not when the task's next command fails.
   */
  setBackend(taskId: string, backend: BackendName | Custom | undefined): void {
    if (backend === undefined) {
      this.#taskBackends.delete(taskId);
      return;
    }
    // Checked at run time too: the name may come from JavaScript, JSON or a cast.
    if (!this.isKnownBackend(backend)) throw new UnknownBackendError(String(backend), this.knownBackends());
    this.#taskBackends.set(taskId, backend);
  }

  /** Whether `name` is a backend this manager can try (a registered factory or the loader table). */
  isKnownBackend(name: string): boolean {
    return typeof name === "string" && (this.#factories.has(name) || Object.hasOwn(this.#loaders(), name));
  }

  /** The backend `get(taskId)` uses. May throw a `ConfigError` when config.yaml is invalid. */
  backendFor(taskId: string): string {
    const own = this.#taskBackends.get(taskId);
    if (own !== undefined) return own;
    return this.defaultBackend();
  }

  /**
   * The backend of tasks without their own: the `defaultBackend` option, else config `terminal.backend`,
   * else `local`. Not checked here (it may name a backend registered later). May throw a `ConfigError`.
   */
  defaultBackend(): string {
    const configured = this.#options.defaultBackend;
    if (typeof configured === "function") return configured();
    if (configured !== undefined) return configured;
    return getConfig().config.terminal.backend ?? DEFAULT_BACKEND;
  }

  /** Backend names this manager can try: registered factories and the loader table. */
  knownBackends(): string[] {
    return [...new Set([...Object.keys(this.#loaders()), ...this.#factories.keys()])];
  }

  #loaders(): Readonly<Record<string, BackendLoader>> {
    return this.#options.backends ?? BACKENDS;
  }

  /**
   * The task's environment on `backend` (default: `backendFor(taskId)`),
   * created on first use. Rejects when the backend is unknown, unavailable
   * (`EnvironmentUnavailableError`) or its creation fails.
   */
  get(taskId: string, backend?: string): Promise<ManagedEnvironment> {
    let name: string;
    try {
      name = backend ?? this.backendFor(taskId);
    } catch (err) {
      return Promise.reject(err);
    }
    const key = keyOf(name, taskId);
    const existing = this.#entries.get(key);
    if (existing) {
      existing.lastUsed = Date.now();
      if (existing.env && existing.running === 0) this.#schedule(existing);
      return existing.ready;
    }
    const entry: Entry = { key, taskId, backend: name, ready: undefined!, running: 0, lastUsed: Date.now(), closed: false };
    this.#entries.set(key, entry);
    entry.ready = this.#create(entry).catch((err: unknown) => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
      this.#updateExitHooks();
      throw err;
    });
    // Handled by the caller; keep an unobserved failure from being reported twice.
    entry.ready.catch(() => {});
    return entry.ready;
  }

  /** The task's environment if it has one that is ready (no creation). */
  peek(taskId: string, backend?: string): ManagedEnvironment | undefined {
    let name = backend;
    if (name === undefined) {
      try {
        name = this.backendFor(taskId);
      } catch {
        return undefined;
      }
    }
    return this.#entries.get(keyOf(name, taskId))?.env;
  }

  /** Environments held right now. */
  list(): ManagedEnvironmentInfo[] {
    const now = Date.now();
    return [...this.#entries.values()].map((e) => ({
      taskId: e.taskId,
      backend: e.backend,
      starting: e.env === undefined,
      running: e.running,
      idleMs: e.running > 0 ? 0 : now - e.lastUsed,
    }));
  }

  /** How many environments are held (including ones being created). */
  get size(): number {
    return this.#entries.size;
  }

  /** Closes the task's environments (only the one on `backend` when given). */
  async close(taskId: string, backend?: string): Promise<void> {
    const entries = [...this.#entries.values()].filter((e) => e.taskId === taskId && (backend === undefined || e.backend === backend));
    await settleAll(entries.map((e) => this.#closeEntry(e)));
  }

  /** Closes every environment. Rejects with an `AggregateError` when some failed to close (all were tried). */
  async closeAll(): Promise<void> {
    await settleAll([...this.#entries.values()].map((e) => this.#closeEntry(e)));
  }

  /** Synchronous best effort for process exit: `disposeSync` on every environment that has it, then forgets them all. */
  disposeAllSync(): void {
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    for (const entry of entries) {
      entry.closed = true;
      if (entry.timer) clearTimeout(entry.timer);
      try {
        entry.env?.disposeSync();
      } catch {
        // Best effort.
      }
    }
    this.#updateExitHooks();
  }

  async #factory(name: string): Promise<EnvironmentFactory> {
    const registered = this.#factories.get(name);
    if (registered) return registered;
    let loading = this.#loading.get(name);
    if (!loading) {
      const table = this.#loaders();
      const loader = Object.hasOwn(table, name) ? table[name] : undefined;
      if (!loader) throw new UnknownBackendError(name, this.knownBackends());
      loading = loader();
      this.#loading.set(name, loading);
      // A failed import is retried next time.
      loading.catch(() => {
        if (this.#loading.get(name) === loading) this.#loading.delete(name);
      });
    }
    return loading;
  }

  async #create(entry: Entry): Promise<ManagedEnvironment> {
    const factory = await this.#factory(entry.backend);
    let reason: string | undefined;
    try {
      reason = factory.unavailableReason();
    } catch (err) {
      // A backend reads its options here: a malformed one is why it cannot be used.
      reason = `its configuration is invalid: ${(err as Error).message}`;
    }
    if (reason !== undefined) throw new EnvironmentUnavailableError(entry.backend, reason);
    const inner = await factory.create(entry.taskId);
    if (entry.closed) {
      // close()/closeAll() came while it was being created.
      await inner.close();
      throw new Error(`The ${entry.backend} environment of task ${JSON.stringify(entry.taskId)} was closed while it was starting.`);
    }
    const env = new ManagedEnvironment(inner, {
      onStart: () => {
        entry.running++;
        if (entry.timer) {
          clearTimeout(entry.timer);
          entry.timer = undefined;
        }
      },
      onEnd: () => {
        entry.running--;
        entry.lastUsed = Date.now();
        if (entry.running === 0) this.#schedule(entry);
      },
      close: () => this.#closeEntry(entry),
    });
    entry.env = env;
    entry.lastUsed = Date.now();
    this.#schedule(entry);
    this.#updateExitHooks();
    return env;
  }

  #idleTimeoutMs(): number {
    const option = this.#options.idleTimeoutMs;
    if (typeof option === "function") return option();
    if (option !== undefined) return option;
    let seconds: number | undefined;
    try {
      seconds = getConfig().config.terminal.idleTimeoutSeconds;
    } catch {
      // An invalid config.yaml is reported where it is read for real; keep the default here.
    }
    return (seconds ?? DEFAULT_IDLE_TIMEOUT_SECONDS) * 1000;
  }

  #schedule(entry: Entry): void {
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
    if (entry.closed || entry.running > 0) return;
    const idleMs = this.#idleTimeoutMs();
    if (!(idleMs > 0) || !Number.isFinite(idleMs)) return;
    const due = entry.lastUsed + idleMs;
    entry.timer = setTimeout(
      () => {
        entry.timer = undefined;
        if (entry.closed || entry.running > 0) return;
        if (Date.now() < due) {
          this.#schedule(entry);
          return;
        }
        void this.#closeEntry(entry).catch(() => {});
      },
      Math.max(0, due - Date.now()),
    );
    entry.timer.unref();
  }

  #closeEntry(entry: Entry): Promise<void> {
    if (entry.closing) return entry.closing;
    entry.closed = true;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
    if (this.#entries.get(entry.key) === entry) this.#entries.delete(entry.key);
    entry.closing = (async () => {
      try {
        const env = entry.env ?? (await entry.ready.catch(() => undefined));
        // A creation that saw `closed` closed its environment itself.
        if (env) await env.unwrap().close();
      } finally {
        this.#updateExitHooks();
      }
    })();
    return entry.closing;
  }

  #updateExitHooks(): void {
    if (this.#options.closeOnExit === false) return;
    if (this.#entries.size > 0) exitHooks.add(this);
    else exitHooks.remove(this);
  }
}

async function settleAll(promises: Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(promises);
  const errors = results.filter((r): r is PromiseRejectedResult => r.status === "rejected").map((r) => r.reason as unknown);
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} environments failed to close`);
}

// ---------------------------------------------------------------------------
// The process-wide manager
// ---------------------------------------------------------------------------

/**
 * The manager the built-in tools use, created on first use with the defaults (config-driven backend and idle
 * timeout). `Custom`: the names of backends you registered on it, for `setBackend` to accept them.
 */
export function getEnvironmentManager<Custom extends string = never>(): EnvironmentManager<Custom> {
  let shared = sharedEnvironmentManager();
  if (shared === undefined) {
    shared = new EnvironmentManager();
    setSharedEnvironmentManager(shared);
  }
  return shared as EnvironmentManager<Custom>;
}

/** Whether the process-wide manager exists yet (availability checks ask it only then, never creating it). */
export function peekEnvironmentManager(): EnvironmentManager | undefined {
  return sharedEnvironmentManager();
}

/** Replaces the process-wide manager (the previous one is not closed). Returns the new one. */
export function setEnvironmentManager(manager: EnvironmentManager): EnvironmentManager {
  setSharedEnvironmentManager(manager);
  return manager;
}
