/**
 * The `SandboxTransport` into one Daytona sandbox, driven through the official
 * SDK, `@daytonaio/sdk`:
 *
 * - `open` creates the task's sandbox (`Daytona.create`: snapshot, or image
 *   with resources; labels `mibyan.task=<task>` and `mibyan.backend=daytona`;
 *   auto-stop and auto-delete intervals; network settings; variables) and
 *   waits until it runs. It is named `mibyan-<task>-<random>`, so that one
 *   whose start failed can still be found and deleted.
 * - `start` runs the program as an asynchronous command of a session
 *   (`executeSessionCommand` with `runAsync`) and follows its log over the
 *   session command's WebSocket (`getSessionCommandLogs` with callbacks), so
 *   output arrives as it is written. The program runs inside the wrapper of
 *   `daytona-output.ts`, which gets its bytes through the daemon's line-based
 *   log labelers intact and carries its exit code in-band. A session runs one
 *   command at a time, so each running command has a session of its own
 *   (the kill script runs next to the command it kills); a session whose
 *   command has ended is reused for the next one. A log stream that closes
 *   before the wrapper's end marker is completed from the whole log (the
 *   same call without callbacks).
 * - While a command runs, the sandbox's activity is refreshed now and then
 *   (`refreshActivity`): Daytona's auto-stop looks at requests, and that a
 *   running process or an open log stream counts is not documented; a command
 *   longer than `auto_stop_minutes` must not have its sandbox stopped (and
 *   deleted) under it. Between commands nothing is sent: an idle task's
 *   sandbox stops as configured.
 * - `close` deletes the sandbox (every process in it ends).
 *
 * Why sessions and not `executeCommand`: that call answers only when the
 * program has ended and its output pipe is closed, all output at once. A
 * timed-out command's partial output, and a command that leaves a background
 * job holding the pipe, need the stream.
 *
 * `detach` stops passing output on and settles `done` at once; the SDK keeps
 * the log WebSocket to itself, so the connection stays open until the
 * program's output ends in the sandbox (after the kill script, that is at
 * once) or the sandbox is deleted.
 *
 * One SDK client per transport; `close` disposes of it (its event socket).
 * Every message built here goes through `redact`, so a credential never
 * reaches an error or a log; SDK errors are not attached as causes, since
 * they can carry the request's headers.
 *
 * The SDK is imported lazily (`await import("@daytonaio/sdk")`): only users of
 * this backend need it installed.
 */

import { randomBytes } from "node:crypto";

import type { CreateSandboxFromImageParams, CreateSandboxFromSnapshotParams, Daytona, DaytonaConfig, Sandbox } from "@daytonaio/sdk";

import {
  DAYTONA_BACKEND_LABEL,
  DAYTONA_DEFAULTS,
  DAYTONA_TASK_LABEL,
  daytonaSecrets,
  resolveDaytonaCredentials,
  type DaytonaCredentials,
  type DaytonaOptions,
} from "./daytona-options.js";
import { decodeLog, FramedOutput, frameCommand } from "./daytona-output.js";
import type { SandboxCommand, SandboxCommandEnd, SandboxTransport } from "./sandbox-transport.js";
import { packageInstalled, scrubCredentials } from "./vendor-sdk.js";
import { sdkInstallCommand, type VendorSdk } from "./sdk-install-hints.js";

/** The npm package this backend drives. */
export const DAYTONA_SDK = "@daytonaio/sdk" satisfies VendorSdk;

/** Deadline of every plain API request (create has its own, `createTimeoutMs`). */
const REQUEST_TIMEOUT_MS = 60_000;
/** Seconds allowed for deleting the sandbox. */
const DELETE_TIMEOUT_S = 60;
/** Time allowed for cleaning up a sandbox whose start failed. */
const CLEANUP_TIMEOUT_MS = 30_000;
/** Idle sessions kept for reuse; more are deleted. */
const SESSION_POOL_SIZE = 4;

/** How often to refresh the sandbox's activity while commands run (undefined: never). */
export function daytonaKeepAliveMs(options: DaytonaOptions): number | undefined {
  if (options.keepAliveMs !== undefined) return options.keepAliveMs > 0 ? options.keepAliveMs : undefined;
  const autoStop = options.autoStopMinutes ?? DAYTONA_DEFAULTS.autoStopMinutes;
  if (autoStop === 0) return undefined;
  return Math.min(5 * 60_000, Math.max(30_000, (autoStop * 60_000) / 3));
}

type SdkModule = typeof import("@daytonaio/sdk");

/** Whether `@daytonaio/sdk` can be imported here. */
export function daytonaSdkInstalled(): boolean {
  return packageInstalled(DAYTONA_SDK);
}

async function loadSdk(): Promise<SdkModule> {
  try {
    return await import("@daytonaio/sdk");
  } catch (err) {
    throw new Error(`install ${DAYTONA_SDK} to use the daytona terminal backend (${sdkInstallCommand(DAYTONA_SDK)}): ${(err as Error).message}`, { cause: err });
  }
}

/** `message` with every secret replaced. */
export function redact(message: string, secrets: readonly string[]): string {
  return scrubCredentials(message, secrets);
}

/** The HTTP status of an SDK error (duck-typed: the classes live in the lazily loaded SDK). */
function httpStatus(err: unknown): number | undefined {
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === "number" ? status : undefined;
}

/** One line about what went wrong, from an SDK error (API error, WebSocket error, network error). */
function errorDetail(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const status = httpStatus(err);
  const message = err.message || err.name;
  return status !== undefined ? `HTTP ${status}: ${message}` : message;
}

/** A hint for the statuses whose cause is usually the same. */
function hintFor(status: number | undefined, credentials: DaytonaCredentials, what: "create" | "command" | "close"): string {
  if (status === 401) {
    return credentials.kind === "apiKey"
      ? " (check DAYTONA_API_KEY, and that it belongs to the Daytona instance at the configured api_url)"
      : " (check DAYTONA_JWT_TOKEN: it may have expired)";
  }
  if (status === 403) return " (the credential lacks a permission this needs, or the organization's quota is used up)";
  if (status === 404 && what === "command") return " (the sandbox is gone: deleted elsewhere, or stopped and deleted after auto_stop_minutes without activity)";
  if (status === 429) return " (rate limited by Daytona; try again later)";
  return "";
}

function sandboxName(taskId: string): string {
  const slug = taskId.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 40);
  return `mibyan-${slug || "task"}-${randomBytes(4).toString("hex")}`;
}

/**
 * What `Daytona.create` gets from the options: the fields of the SDK's
 * `CreateSandboxFromSnapshotParams` / `CreateSandboxFromImageParams` we set, declared here so
 * that the package's declarations need no types from `@daytonaio/sdk` (an optional peer).
 */
export interface DaytonaCreateParams {
  name: string;
  labels: Record<string, string>;
  envVars: Record<string, string>;
  autoStopInterval: number;
  autoDeleteInterval: number;
  user?: string;
  networkBlockAll?: boolean;
  networkAllowList?: string;
  snapshot?: string;
  image?: string;
  resources?: { cpu?: number; memory?: number; disk?: number };
}

/** What `Daytona.create` gets from the options. */
export function daytonaCreateParams(taskId: string, name: string, options: DaytonaOptions): DaytonaCreateParams {
  const base: DaytonaCreateParams = {
    name,
    labels: { ...options.labels, [DAYTONA_TASK_LABEL]: taskId, [DAYTONA_BACKEND_LABEL]: "daytona" },
    envVars: { ...options.env },
    autoStopInterval: options.autoStopMinutes ?? DAYTONA_DEFAULTS.autoStopMinutes,
    autoDeleteInterval: options.autoDeleteMinutes ?? DAYTONA_DEFAULTS.autoDeleteMinutes,
  };
  if (options.user !== undefined) base.user = options.user;
  if (options.networkBlockAll !== undefined) base.networkBlockAll = options.networkBlockAll;
  if (options.networkAllowList !== undefined) base.networkAllowList = options.networkAllowList.join(",");
  if (options.image !== undefined) {
    const resources = {
      ...(options.cpu !== undefined ? { cpu: options.cpu } : {}),
      ...(options.memory !== undefined ? { memory: options.memory } : {}),
      ...(options.disk !== undefined ? { disk: options.disk } : {}),
    };
    return { ...base, image: options.image, ...(Object.keys(resources).length > 0 ? { resources } : {}) };
  }
  return options.snapshot !== undefined ? { ...base, snapshot: options.snapshot } : base;
}

/** Disposes of an SDK client: its event socket and subscriptions. */
async function disposeClient(client: Daytona): Promise<void> {
  const key = (Symbol as { asyncDispose?: symbol }).asyncDispose;
  const dispose = key === undefined ? undefined : (client as unknown as Record<symbol, unknown>)[key];
  if (typeof dispose === "function") await (dispose as () => Promise<void>).call(client);
}

/**
 * Deletes the sandbox named `name` if it exists (best effort). Resolves to a
 * note on the state it was in, when Daytona gave a reason (the SDK's state
 * events carry the state, not the reason).
 */
async function removeFailedSandbox(client: Daytona, name: string): Promise<string | undefined> {
  let sandbox: Sandbox;
  try {
    sandbox = await client.get(name);
  } catch {
    return undefined;
  }
  const note = sandbox.errorReason ? `; the sandbox was ${sandbox.state ?? "in an unknown state"}: ${sandbox.errorReason} (deleted again)` : undefined;
  await sandbox.delete(DELETE_TIMEOUT_S).catch(() => undefined);
  return note;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export class DaytonaTransport implements SandboxTransport {
  readonly description: string;
  private closing: Promise<void> | undefined;
  /** Sessions whose command has ended, ready for the next one. */
  private readonly idleSessions: string[] = [];
  /** Detach functions of the commands being followed, for `close`. */
  private readonly following = new Set<() => void>();
  /** Refreshes the sandbox's activity while commands are followed. */
  private keepAlive: NodeJS.Timeout | undefined;

  private constructor(
    private readonly client: Daytona,
    private readonly sandbox: Sandbox,
    private readonly credentials: DaytonaCredentials,
    private readonly secrets: readonly string[],
    private readonly keepAliveMs: number | undefined,
  ) {
    this.description = `daytona sandbox ${sandbox.id}`;
  }

  /** The sandbox's id at Daytona. */
  get sandboxId(): string {
    return this.sandbox.id;
  }

  /**
   * Creates the task's sandbox and waits until it runs. Throws a clear error
   * (never showing a credential) when it cannot; a sandbox created but not
   * started is deleted again.
   */
  static async open(taskId: string, options: DaytonaOptions): Promise<DaytonaTransport> {
    const resolved = resolveDaytonaCredentials(options);
    if ("problem" in resolved) throw new Error(`cannot create a Daytona sandbox: ${resolved.problem}`);
    const { credentials } = resolved;
    const secrets = daytonaSecrets(options);
    const { Daytona } = await loadSdk();
    const config: DaytonaConfig = {
      // Always explicit: the SDK would otherwise read it from the environment and refuse
      // when a .env file in the working directory names one too.
      apiUrl: options.apiUrl ?? DAYTONA_DEFAULTS.apiUrl,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      ...(options.target !== undefined ? { target: options.target } : {}),
      ...(credentials.kind === "apiKey" ? { apiKey: credentials.apiKey } : { jwtToken: credentials.jwtToken, organizationId: credentials.organizationId }),
    };
    let client: Daytona;
    try {
      client = new Daytona(config);
    } catch (err) {
      throw new Error(redact(`cannot create a Daytona client: ${errorDetail(err)}`, secrets));
    }
    const name = sandboxName(taskId);
    const createTimeoutMs = options.createTimeoutMs ?? DAYTONA_DEFAULTS.createTimeoutMs;
    try {
      const sandbox = await client.create(daytonaCreateParams(taskId, name, options) as CreateSandboxFromSnapshotParams, {
        timeout: Math.max(1, Math.ceil(createTimeoutMs / 1000)),
      });
      return new DaytonaTransport(client, sandbox, credentials, secrets, daytonaKeepAliveMs(options));
    } catch (err) {
      // The sandbox may exist even though create failed (it did not start in time, or
      // ended in an error state): find it by its name, say why it failed, delete it.
      const state = await withTimeout(removeFailedSandbox(client, name), CLEANUP_TIMEOUT_MS).catch(() => undefined);
      await disposeClient(client).catch(() => undefined);
      const source = options.image !== undefined ? `image ${options.image}` : options.snapshot !== undefined ? `snapshot ${options.snapshot}` : "the default snapshot";
      throw new Error(
        redact(`creating Daytona sandbox ${name} from ${source} failed: ${errorDetail(err)}${hintFor(httpStatus(err), credentials, "create")}${state ?? ""}`, secrets),
      );
    }
  }

  async start(argv: readonly string[], onOutput: (chunk: Uint8Array) => void): Promise<SandboxCommand> {
    if (this.closing) throw new Error(`${this.description} was deleted`);
    if (argv.length === 0 || argv[0] === "") throw new Error("no program to start");
    const nonce = randomBytes(12).toString("hex");
    const command = frameCommand(argv, nonce);
    let session: string | undefined;
    let cmdId: string;
    try {
      session = this.idleSessions.pop() ?? (await this.createSession());
      cmdId = (await this.sandbox.process.executeSessionCommand(session, { command, runAsync: true })).cmdId;
      if (typeof cmdId !== "string" || cmdId === "") throw new Error("the daemon answered without a command id");
    } catch (err) {
      if (session !== undefined) this.discardSession(session);
      const detail = this.closing ? "the sandbox was deleted meanwhile" : errorDetail(err);
      throw new Error(redact(`starting ${argv[0]} in ${this.description} failed: ${detail}${hintFor(httpStatus(err), this.credentials, "command")}`, this.secrets));
    }
    return this.follow(session, cmdId, nonce, onOutput);
  }

  private async createSession(): Promise<string> {
    const id = `mibyan-${randomBytes(6).toString("hex")}`;
    await this.sandbox.process.createSession(id);
    return id;
  }

  /** A session whose command has ended goes back to the pool (or is deleted when the pool is full). */
  private releaseSession(session: string): void {
    if (!this.closing && this.idleSessions.length < SESSION_POOL_SIZE) this.idleSessions.push(session);
    else this.discardSession(session);
  }

  /** Deletes a session in the background (the sandbox's deletion would end it too). */
  private discardSession(session: string): void {
    if (this.closing) return;
    this.sandbox.process.deleteSession(session).catch(() => undefined);
  }

  /**
   * Follows a started command: its log to `onOutput` (through the framing
   * decoder), its exit code from the end marker. A broken log stream ends the
   * command with an error; when the wrapper could not run (no end marker), the
   * exit code is the session command's own.
   */
  private follow(session: string, cmdId: string, nonce: string, onOutput: (chunk: Uint8Array) => void): SandboxCommand {
    let detached = false;
    let settled = false;
    let resolveDone: (end: SandboxCommandEnd) => void = () => undefined;
    const done = new Promise<SandboxCommandEnd>((resolve) => (resolveDone = resolve));
    const settle = (end: SandboxCommandEnd): void => {
      if (settled) return;
      settled = true;
      this.following.delete(detach);
      this.updateKeepAlive();
      resolveDone(end);
    };
    const framed = new FramedOutput(nonce, (chunk) => {
      if (!detached) onOutput(chunk);
    });
    // The SDK calls back once per log line; the lines of one message are decoded together.
    let pending: string[] = [];
    const flush = (): void => {
      if (pending.length === 0) return;
      const text = pending.join("");
      pending = [];
      framed.push(text);
    };
    const receive = (text: string): void => {
      if (detached) return;
      if (pending.length === 0) queueMicrotask(flush);
      pending.push(text);
    };
    const detach = (): void => {
      if (settled) return;
      flush();
      detached = true;
      settle({ exitCode: framed.exitCode ?? null });
    };
    this.following.add(detach);
    this.updateKeepAlive();

    this.sandbox.process.getSessionCommandLogs(session, cmdId, receive, receive).then(
      async () => {
        flush();
        if (detached) {
          // Ended after all: the session is free again.
          this.releaseSession(session);
          return;
        }
        let exitCode = framed.exitCode;
        if (!framed.ended) {
          // The stream closed before the end marker: the wrapper did not run (its error is the
          // output), or the daemon closed the stream before its labelers had written everything
          // (older daemons published the exit code first). The whole log tells.
          const rest = await this.remainingOutput(session, cmdId, nonce, framed.delivered);
          if (rest === undefined) framed.end();
          else {
            if (rest.output.length > 0 && !detached) onOutput(rest.output);
            exitCode = rest.exitCode;
          }
        } else framed.end();
        exitCode ??= (await this.sessionCommandExitCode(session, cmdId)) ?? undefined;
        this.releaseSession(session);
        settle({ exitCode: exitCode ?? null });
      },
      (err: unknown) => {
        flush();
        framed.end();
        this.discardSession(session);
        const detail = this.closing ? "the sandbox was deleted" : errorDetail(err);
        const error = new Error(redact(`following the output of ${cmdId} in ${this.description} failed: ${detail}`, this.secrets));
        settle({ exitCode: framed.exitCode ?? null, error });
      },
    );
    return { done, detach };
  }

  /**
   * The part of a command's output not delivered yet (beyond `delivered`
   * bytes), from its whole log; undefined when the log cannot be fetched.
   */
  private async remainingOutput(session: string, cmdId: string, nonce: string, delivered: number): Promise<{ output: Buffer; exitCode: number | undefined } | undefined> {
    try {
      const log = await this.sandbox.process.getSessionCommandLogs(session, cmdId);
      const decoded = decodeLog(nonce, log.output ?? "");
      return { output: decoded.output.subarray(Math.min(delivered, decoded.output.length)), exitCode: decoded.exitCode };
    } catch {
      return undefined;
    }
  }

  /** Runs the activity timer while any command is followed, and only then. */
  private updateKeepAlive(): void {
    const wanted = this.following.size > 0 && this.keepAliveMs !== undefined && !this.closing;
    if (wanted && this.keepAlive === undefined) {
      this.keepAlive = setInterval(() => void this.sandbox.refreshActivity().catch(() => undefined), this.keepAliveMs);
      this.keepAlive.unref();
    } else if (!wanted && this.keepAlive !== undefined) {
      clearInterval(this.keepAlive);
      this.keepAlive = undefined;
    }
  }

  /** The exit code the daemon recorded for a session command, or null when it has none (or cannot say). */
  private async sessionCommandExitCode(session: string, cmdId: string): Promise<number | null> {
    try {
      const command = await this.sandbox.process.getSessionCommand(session, cmdId);
      return typeof command.exitCode === "number" ? command.exitCode : null;
    } catch {
      return null;
    }
  }

  /**
   * Deletes the sandbox (every process in it ends) and disposes of the SDK
   * client. Idempotent. A sandbox already gone counts as deleted.
   */
  close(): Promise<void> {
    if (!this.closing) {
      this.closing = this.deleteSandbox();
    }
    return this.closing;
  }

  private async deleteSandbox(): Promise<void> {
    for (const detach of [...this.following]) detach();
    this.updateKeepAlive();
    this.idleSessions.length = 0;
    try {
      await this.sandbox.delete(DELETE_TIMEOUT_S);
    } catch (err) {
      if (httpStatus(err) !== 404) {
        throw new Error(
          redact(
            `deleting ${this.description} failed: ${errorDetail(err)}${hintFor(httpStatus(err), this.credentials, "close")} (it stops after auto_stop_minutes without activity, and is then deleted unless auto_delete_minutes is -1)`,
            this.secrets,
          ),
        );
      }
    } finally {
      await disposeClient(this.client).catch(() => undefined);
    }
  }
}
