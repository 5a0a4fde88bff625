/**
 * One MCP server's connection: a state machine (types.ts `McpState`) with hermes' timing.
 *
 * - First connect: one attempt, then up to `initialRetries` (3) retries after 1, 2, 4 s; then
 *   **parked** (#19559). An OAuth error is not retried.
 * - An established session lost (the child exited, a keepalive failed, the transport closed):
 *   **reconnecting**, up to `reconnectRetries` (5) attempts after 1, 2, 4, 8, 16 s (capped at 60);
 *   then parked. Tools stay registered while reconnecting, so a call can wait for the comeback.
 * - Parked: the server's tools are removed; one probe every `parkedProbeMs` (300 s) and on
 *   `reconnect()`. Every transition to **ready** re-lists and re-registers the tools, the revival
 *   included (hermes #67187/#108087 forgot that).
 * - Keepalive: `ping` every `keepaliveMs`; a server that answers -32601 (method not found) is probed
 *   with `tools/list` from then on instead of being reconnected in a loop (#17003, #50028); any other
 *   keepalive failure drops the session and reconnects.
 *
 * Time comes from an injectable clock, so tests check the backoff sequence without waiting for it.
 * What "ready" means for the registry (listing and registering tools) is the owner's `onReady` hook.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

import type { Logger } from "../../registry/types.js";
import { redactText } from "../../redaction/tool-output.js";
import { CircuitBreaker } from "./breaker.js";
import type { ResolvedMcpServer } from "./server-config.js";
import { connectServer, isPermanentConnectError, type Connected, type TransportOptions } from "./transport.js";
import { backoffDelay, DEFAULT_TIMINGS, realClock, type McpClock, type McpState, type McpTimings } from "./types.js";

/** How long a keepalive ping may take before the session counts as dead. */
const KEEPALIVE_TIMEOUT_MS = 30_000;

export interface ConnectionHooks {
  /** The session is up: list and register the tools. A throw counts as a failed attempt. */
  onReady(connection: McpConnection, client: Client): Promise<void>;
  /** Retries ran out (or `close()`): remove the tools. */
  onParked(connection: McpConnection): void;
  /** `setup` lets the owner install notification handlers on a new client before it connects. */
  setup?(connection: McpConnection, client: Client): void;
  onStateChange?(connection: McpConnection, state: McpState): void;
}

export interface McpConnectionOptions {
  server: ResolvedMcpServer;
  transport: TransportOptions;
  hooks: ConnectionHooks;
  logger: Logger;
  clock?: McpClock | undefined;
  timings?: Partial<McpTimings> | undefined;
}

type CycleKind = "initial" | "reconnect" | "probe";

export class McpConnection {
  readonly server: ResolvedMcpServer;
  readonly breaker: CircuitBreaker;
  readonly timings: McpTimings;
  readonly clock: McpClock;
  private readonly logger: Logger;
  private readonly hooks: ConnectionHooks;
  private readonly transportOptions: TransportOptions;

  private currentState: McpState = "connecting";
  private connected: Connected | undefined;
  private cycleId = 0;
  private running: Promise<void> | undefined;
  private attemptAbort: AbortController | undefined;
  private sleeping: { handle: unknown; wake: () => void } | undefined;
  private probeTimer: unknown;
  private keepaliveTimer: unknown;
  private keepaliveViaList = false;
  private waiters = new Set<() => void>();
  private slotBusy = false;
  private readonly slotQueue: (() => void)[] = [];
  /** The last error, redacted; cleared on ready. */
  lastError: string | undefined;
  /** Every backoff delay waited, in order (for status and tests). */
  readonly backoffHistory: number[] = [];
  /** Connection attempts made (each spawns a stdio child or opens HTTP). */
  attempts = 0;

  constructor(options: McpConnectionOptions) {
    this.server = options.server;
    this.hooks = options.hooks;
    this.logger = options.logger;
    this.transportOptions = options.transport;
    this.clock = options.clock ?? realClock;
    this.timings = { ...DEFAULT_TIMINGS, ...stripUndefined(options.timings ?? {}) };
    this.breaker = new CircuitBreaker(this.server.name, this.clock, this.timings.breakerThreshold, this.timings.breakerCooldownMs);
  }

  get name(): string {
    return this.server.name;
  }

  get state(): McpState {
    return this.currentState;
  }

  /** The connected client, when ready. */
  get client(): Client | undefined {
    return this.currentState === "ready" ? this.connected?.client : undefined;
  }

  get pid(): number | undefined {
    return this.connected?.pid;
  }

  get transportKind(): Connected["kind"] | undefined {
    return this.connected?.kind;
  }

  /** Starts the first connection cycle; resolves when it ends (ready or parked). */
  start(): Promise<void> {
    return this.runCycle("initial");
  }

  /**
   * Resolves with the client once ready, or `undefined` after `ms`, when the caller's signal aborts,
   * or as soon as the server is parked or closed (nothing to wait for then).
   */
  waitReady(ms: number, signal?: AbortSignal): Promise<Client | undefined> {
    const ready = this.client;
    if (ready !== undefined || ms <= 0 || !this.isComingBack()) return Promise.resolve(ready);
    return new Promise((resolve) => {
      let handle: unknown;
      const finish = (): void => {
        this.waiters.delete(check);
        this.clock.clearTimeout(handle);
        signal?.removeEventListener("abort", finish);
        resolve(this.client);
      };
      const check = (): void => {
        if (this.client !== undefined || !this.isComingBack()) finish();
      };
      this.waiters.add(check);
      handle = this.clock.setTimeout(finish, ms);
      signal?.addEventListener("abort", finish, { once: true });
    });
  }

  private isComingBack(): boolean {
    return this.currentState === "connecting" || this.currentState === "reconnecting";
  }

  /**
   * Drops the current session (if any) and makes one fresh attempt now; parked again if it fails.
   * Resolves when the attempt is over. A no-op after `close()`.
   */
  async reconnect(): Promise<void> {
    if (this.currentState === "closed") return;
    this.cancelCycle();
    await this.dropConnected();
    await this.runCycle("probe");
  }

  /** The session is unusable (a transport error seen by a call): reconnect in the background. */
  sessionLost(reason: string): void {
    if (this.currentState !== "ready") return;
    this.lastError = redactText(reason);
    const old = this.connected;
    this.connected = undefined;
    if (old !== undefined) void old.transport.close().catch(() => undefined);
    this.stopKeepalive();
    void this.runCycle("reconnect");
  }

  /**
   * Runs `fn` alone among this server's calls unless the server supports parallel calls. A call
   * whose `signal` aborts while it waits for its turn leaves the queue at once (it never runs).
   * An uncontended call runs at once, with no promise chaining (the common case, on the hot path).
   */
  withRpcSlot<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.server.parallel) return fn();
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (!this.slotBusy) {
      this.slotBusy = true;
      return this.inSlot(fn);
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.slotQueue.indexOf(start);
        if (index >= 0) this.slotQueue.splice(index, 1);
        reject(signal!.reason);
      };
      const start = (): void => {
        signal?.removeEventListener("abort", onAbort);
        this.inSlot(fn).then(resolve, reject);
      };
      this.slotQueue.push(start);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  private async inSlot<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } finally {
      // The slot passes straight to the next waiter, so nobody can slip in between.
      const next = this.slotQueue.shift();
      if (next !== undefined) next();
      else this.slotBusy = false;
    }
  }

  /** Ends the connection for good: cycles stop, the child process is ended (awaited), tools removed. */
  async close(): Promise<void> {
    if (this.currentState === "closed") return;
    this.cancelCycle();
    this.setState("closed");
    this.clock.clearTimeout(this.probeTimer);
    const running = this.running;
    await this.dropConnected();
    if (running !== undefined) await running.catch(() => undefined);
    this.hooks.onParked(this);
  }

  // ---- the cycle ------------------------------------------------------------------------

  private runCycle(kind: CycleKind): Promise<void> {
    const id = ++this.cycleId;
    this.clock.clearTimeout(this.probeTimer);
    const run = this.cycle(kind, id).finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }

  private async cycle(kind: CycleKind, id: number): Promise<void> {
    // initial: 1 attempt + `initialRetries` retries after 1, 2, 4 s. reconnect: `reconnectRetries`
    // attempts after 1, 2, 4, 8, 16 s (the server just died: no instant respawn). probe: 1 attempt.
    const maxAttempts = kind === "initial" ? this.timings.initialRetries + 1 : kind === "reconnect" ? this.timings.reconnectRetries : 1;
    this.setState(kind === "reconnect" ? "reconnecting" : "connecting");
    if (kind === "reconnect" && !(await this.sleep(backoffDelay(0, this.timings), id))) return;
    for (let failures = 0; ; ) {
      if (id !== this.cycleId) return;
      try {
        await this.attempt(id);
        return;
      } catch (error) {
        if (id !== this.cycleId) return;
        failures++;
        this.lastError = redactText(describe(error));
        this.logger.debug(`MCP server '${this.name}': connection attempt failed: ${this.lastError}`);
        // An OAuth error needs a person, a web page instead of an MCP endpoint a config fix: not another try.
        if (isPermanentConnectError(error) || failures >= maxAttempts) {
          this.park();
          return;
        }
        const delayIndex = kind === "reconnect" ? failures : failures - 1;
        if (!(await this.sleep(backoffDelay(delayIndex, this.timings), id))) return;
      }
    }
  }

  private async attempt(id: number): Promise<void> {
    const abort = new AbortController();
    this.attemptAbort = abort;
    this.attempts++;
    let connected: Connected;
    try {
      connected = await connectServer(this.server, this.transportOptions, abort.signal, (client) => this.hooks.setup?.(this, client));
    } finally {
      if (this.attemptAbort === abort) this.attemptAbort = undefined;
    }
    if (id !== this.cycleId) {
      await connected.transport.close().catch(() => undefined);
      return;
    }
    this.connected = connected;
    connected.client.onclose = () => this.onClosed(connected);
    connected.client.onerror = (error) => this.logger.debug(`MCP server '${this.name}': ${redactText(describe(error))}`);
    try {
      await this.hooks.onReady(this, connected.client);
    } catch (error) {
      if (this.connected === connected) this.connected = undefined;
      await connected.transport.close().catch(() => undefined);
      throw error;
    }
    if (id !== this.cycleId || this.connected !== connected) return;
    this.lastError = undefined;
    this.keepaliveViaList = false;
    this.breaker.reset();
    this.setState("ready");
    this.scheduleKeepalive();
  }

  /** Waits `ms` on the clock; false when the cycle was cancelled meanwhile. */
  private sleep(ms: number, id: number): Promise<boolean> {
    this.backoffHistory.push(ms);
    return new Promise((resolve) => {
      const wake = (): void => {
        this.sleeping = undefined;
        resolve(id === this.cycleId);
      };
      this.sleeping = { handle: this.clock.setTimeout(wake, ms), wake };
    });
  }

  private cancelCycle(): void {
    this.cycleId++;
    this.attemptAbort?.abort(new Error("connection attempt cancelled"));
    const sleeping = this.sleeping;
    if (sleeping !== undefined) {
      this.clock.clearTimeout(sleeping.handle);
      sleeping.wake();
    }
    this.stopKeepalive();
  }

  private park(): void {
    this.stopKeepalive();
    this.setState("parked");
    this.logger.warn(
      `MCP server '${this.name}' is parked after failing to connect${this.lastError === undefined ? "" : `: ${this.lastError}`}; its tools are removed until it comes back (probed every ${Math.round(this.timings.parkedProbeMs / 1000)} s, or reconnect it)`,
    );
    this.hooks.onParked(this);
    this.probeTimer = this.clock.setTimeout(() => {
      if (this.currentState === "parked") void this.runCycle("probe");
    }, this.timings.parkedProbeMs);
  }

  private onClosed(connected: Connected): void {
    if (this.connected !== connected) return; // closed on purpose, or superseded
    this.connected = undefined;
    this.stopKeepalive();
    const tail = connected.stderrTail?.().trim();
    this.lastError = redactText(`connection closed${tail ? ` (server stderr: ${tail.slice(-300)})` : ""}`);
    if (this.currentState === "ready") {
      this.logger.warn(`MCP server '${this.name}': ${this.lastError}; reconnecting`);
      void this.runCycle("reconnect");
    }
  }

  private async dropConnected(): Promise<void> {
    const old = this.connected;
    this.connected = undefined;
    this.stopKeepalive();
    if (old !== undefined) await old.transport.close().catch(() => undefined);
  }

  // ---- keepalive ------------------------------------------------------------------------

  private scheduleKeepalive(): void {
    this.stopKeepalive();
    if (this.timings.keepaliveMs <= 0) return;
    this.keepaliveTimer = this.clock.setTimeout(() => void this.keepalive(), this.timings.keepaliveMs);
  }

  private stopKeepalive(): void {
    this.clock.clearTimeout(this.keepaliveTimer);
    this.keepaliveTimer = undefined;
  }

  /** Whether keepalive switched from `ping` to `tools/list` (the server does not implement ping). */
  get keepaliveUsesListTools(): boolean {
    return this.keepaliveViaList;
  }

  private async keepalive(): Promise<void> {
    const connected = this.connected;
    const client = this.client;
    if (client === undefined || connected === undefined) return;
    const options = { timeout: KEEPALIVE_TIMEOUT_MS };
    try {
      if (this.keepaliveViaList) await client.listTools(undefined, options);
      else await client.ping(options);
    } catch (error) {
      if (this.connected !== connected) return;
      if (!this.keepaliveViaList && isMethodNotFound(error) && client.getServerCapabilities()?.tools !== undefined) {
        this.keepaliveViaList = true;
        this.logger.info(`MCP server '${this.name}' does not answer ping; keepalive uses tools/list instead`);
      } else {
        this.sessionLost(`keepalive failed: ${describe(error)}`);
        return;
      }
    }
    if (this.connected === connected && this.currentState === "ready") this.scheduleKeepalive();
  }

  // ---- state ----------------------------------------------------------------------------

  private setState(state: McpState): void {
    if (this.currentState === state) return;
    if (this.currentState === "closed") return;
    this.currentState = state;
    this.hooks.onStateChange?.(this, state);
    for (const check of [...this.waiters]) check();
  }
}

function isMethodNotFound(error: unknown): boolean {
  if (error instanceof McpError && error.code === ErrorCode.MethodNotFound) return true;
  return /method not found|unknown method/i.test(describe(error));
}

/** An error's message, with its numeric code when the message does not already say it (HTTP 401, JSON-RPC -32601). */
export function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const message = error.message || error.name;
  const code = (error as { code?: unknown }).code;
  return typeof code === "number" && !message.includes(String(code)) ? `${message} (code ${code})` : message;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
