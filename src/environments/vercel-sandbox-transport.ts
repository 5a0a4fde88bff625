/**
 * The `SandboxTransport` into one Vercel Sandbox (a Firecracker microVM),
 * driven through the official SDK, `@vercel/sandbox`:
 *
 * - `open` creates the task's sandbox (`Sandbox.create`: image or runtime,
 *   vCPUs, timeout, ports, network policy, region, variables), non-persistent
 *   (nothing is snapshotted when it stops), named `mibyan-<task>-<random>` so
 *   that it can be recognised in the dashboard.
 * - `start` is `runCommand({ cmd, args, detached: true })` on the sandbox's
 *   current session, then two requests follow the command: its log stream
 *   (JSON lines, delivered to `onOutput` as they come) and a wait for its exit
 *   code. The session is used directly rather than through `Sandbox.runCommand`
 *   because the latter silently resumes a stopped sandbox in a fresh session,
 *   where the task's shell state no longer exists; here a sandbox that timed
 *   out is an error that says so.
 * - `close` stops the session and deletes the sandbox.
 *
 * The SDK has no setting for its base URL (`https://vercel.com/api` is fixed
 * in its client), but every entry point accepts a `fetch`; with `apiUrl` set,
 * the transport hands it one that rewrites that prefix. Every message built
 * here goes through `redact`, so a token never reaches an error or a log.
 *
 * The SDK is imported lazily (`await import("@vercel/sandbox")`): only users
 * of this backend need it installed.
 */

import { randomBytes } from "node:crypto";

import type { Command, Sandbox } from "@vercel/sandbox";

import type { SandboxCommand, SandboxCommandEnd, SandboxTransport } from "./sandbox-transport.js";
import { resolveVercelCredentials, VERCEL_SANDBOX_DEFAULTS, type VercelCredentials, type VercelSandboxOptions } from "./vercel-sandbox-options.js";
import { packageInstalled, scrubCredentials } from "./vendor-sdk.js";
import { sdkInstallCommand, type VendorSdk } from "./sdk-install-hints.js";

/** The npm package this backend drives. */
export const VERCEL_SANDBOX_SDK = "@vercel/sandbox" satisfies VendorSdk;

/** Time allowed for the request that starts a command. */
const START_TIMEOUT_MS = 60_000;
/** Time allowed for each of the requests that stop and delete the sandbox. */
const CLOSE_TIMEOUT_MS = 60_000;

type SdkModule = typeof import("@vercel/sandbox");

/** Whether `@vercel/sandbox` can be imported here. */
export function vercelSdkInstalled(): boolean {
  return packageInstalled(VERCEL_SANDBOX_SDK);
}

async function loadSdk(): Promise<SdkModule> {
  try {
    return await import("@vercel/sandbox");
  } catch (err) {
    throw new Error(`install ${VERCEL_SANDBOX_SDK} to use the vercel_sandbox terminal backend (${sdkInstallCommand(VERCEL_SANDBOX_SDK)}): ${(err as Error).message}`, { cause: err });
  }
}

/** `message` with every secret replaced. */
export function redact(message: string, secrets: readonly string[]): string {
  return scrubCredentials(message, secrets);
}

/** A `fetch` sending the SDK's requests to `apiUrl` instead of `https://vercel.com/api`. */
export function rebasedFetch(apiUrl: string): typeof globalThis.fetch {
  const from = VERCEL_SANDBOX_DEFAULTS.apiUrl;
  const to = apiUrl.replace(/\/+$/, "");
  return (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith(`${from}/`)) {
      return Promise.reject(new Error(`refusing to send a request outside the Sandbox API (${url.split("?")[0]})`));
    }
    return globalThis.fetch(to + url.slice(from.length), init);
  };
}

/** The HTTP status of an SDK `APIError` (duck-typed: the class lives in the lazily loaded SDK). */
function httpStatus(err: unknown): number | undefined {
  const status = (err as { response?: { status?: unknown } } | null)?.response?.status;
  return typeof status === "number" ? status : undefined;
}

/** One line about what went wrong, from an SDK error (API error, stream error, network error). */
function errorDetail(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const status = httpStatus(err);
  if (status !== undefined) {
    const server = err.message.replace(/^Status code \d+ is not ok:?\s*/, "");
    return `HTTP ${status}${server ? `: ${server}` : ""}`;
  }
  if (err.name === "StreamError") {
    const code = (err as { code?: unknown }).code;
    return `${typeof code === "string" ? `${code}: ` : ""}${err.message}`;
  }
  if (err.name === "AbortError" || err.name === "TimeoutError") return err.message || "the request was aborted";
  const cause = (err as { cause?: unknown }).cause;
  const causeText = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : "";
  return causeText && !err.message.includes(causeText) ? `${err.message} (${causeText})` : err.message;
}

/** A hint for the statuses whose cause is usually the same. */
function hintFor(status: number | undefined, credentials: VercelCredentials, what: "create" | "command" | "close"): string {
  if (status === 401 || status === 403) {
    const expired = credentials.expiresAt !== undefined && credentials.expiresAt.getTime() < Date.now();
    if (expired) return ` (VERCEL_OIDC_TOKEN expired at ${credentials.expiresAt!.toISOString()}; run \`vercel env pull\` again)`;
    return credentials.source === "VERCEL_TOKEN"
      ? " (check VERCEL_TOKEN, and that it is scoped to the team in VERCEL_TEAM_ID, which owns the project in VERCEL_PROJECT_ID)"
      : " (check VERCEL_OIDC_TOKEN; `vercel env pull` fetches a fresh one)";
  }
  if (status === 410 && what === "command") return " (the sandbox has stopped: its timeout_minutes ran out, or it was stopped elsewhere)";
  if (status === 429) return " (rate limited by Vercel; try again later)";
  return "";
}

function sandboxName(taskId: string): string {
  const slug = taskId.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 64);
  return `mibyan-${slug || "task"}-${randomBytes(4).toString("hex")}`;
}

export class VercelSandboxTransport implements SandboxTransport {
  readonly description: string;
  private closing: Promise<void> | undefined;
  /** Aborted by `close`: ends pending starts and the following of every command. */
  private readonly lifetime = new AbortController();

  private constructor(
    private readonly sandbox: Sandbox,
    private readonly credentials: VercelCredentials,
    private readonly secrets: readonly string[],
  ) {
    this.description = `vercel sandbox ${sandbox.name}`;
  }

  /** The sandbox's name at Vercel. */
  get name(): string {
    return this.sandbox.name;
  }

  /** Creates the task's sandbox. Throws a clear error (never showing a token) when it cannot. */
  static async open(taskId: string, options: VercelSandboxOptions): Promise<VercelSandboxTransport> {
    const resolved = resolveVercelCredentials(options);
    if ("problem" in resolved) throw new Error(`cannot create a Vercel sandbox: ${resolved.problem}`);
    const { credentials } = resolved;
    const secrets = [options.token, options.oidcToken].filter((s): s is string => s !== undefined);
    const { Sandbox } = await loadSdk();
    const name = sandboxName(taskId);
    const timeoutMinutes = options.timeoutMinutes ?? VERCEL_SANDBOX_DEFAULTS.timeoutMinutes;
    const params: Record<string, unknown> = {
      token: credentials.token,
      teamId: credentials.teamId,
      projectId: credentials.projectId,
      name,
      persistent: false,
      timeout: Math.round(timeoutMinutes * 60_000),
      ports: options.ports ?? [],
      signal: AbortSignal.timeout(options.createTimeoutMs ?? VERCEL_SANDBOX_DEFAULTS.createTimeoutMs),
    };
    if (options.runtime !== undefined) params.runtime = options.runtime;
    if (options.image !== undefined) params.image = options.image;
    if (options.vcpus !== undefined) params.resources = { vcpus: options.vcpus };
    if (options.network !== undefined) params.networkPolicy = typeof options.network === "string" ? options.network : { allow: [...options.network] };
    if (options.region !== undefined) params.region = options.region;
    if (options.env !== undefined) params.env = { ...options.env };
    if (options.apiUrl !== undefined) params.fetch = rebasedFetch(options.apiUrl);
    let sandbox: Sandbox;
    try {
      sandbox = await Sandbox.create(params as Parameters<typeof Sandbox.create>[0]);
    } catch (err) {
      const what = `creating Vercel sandbox ${name} (team ${credentials.teamId}, project ${credentials.projectId})`;
      throw new Error(redact(`${what} failed: ${errorDetail(err)}${hintFor(httpStatus(err), credentials, "create")}`, secrets));
    }
    return new VercelSandboxTransport(sandbox, credentials, secrets);
  }

  async start(argv: readonly string[], onOutput: (chunk: Uint8Array) => void): Promise<SandboxCommand> {
    if (this.closing) throw new Error(`${this.description} was deleted`);
    const [cmd, ...args] = argv;
    if (cmd === undefined || cmd === "") throw new Error("no program to start");
    let command: Command;
    try {
      command = await this.sandbox.currentSession().runCommand({
        cmd,
        args,
        detached: true,
        signal: AbortSignal.any([this.lifetime.signal, AbortSignal.timeout(START_TIMEOUT_MS)]),
      });
    } catch (err) {
      const detail = this.lifetime.signal.aborted ? "the sandbox was deleted meanwhile" : errorDetail(err);
      throw new Error(redact(`starting ${cmd} in ${this.description} failed: ${detail}${hintFor(httpStatus(err), this.credentials, "command")}`, this.secrets));
    }
    return this.follow(command, onOutput);
  }

  /**
   * Follows a started command: its log stream to `onOutput`, and its exit code.
   * A failed log stream (the output is incomplete) ends the command with an
   * error and no exit code; a failed wait alone only loses the exit code.
   */
  private follow(command: Command, onOutput: (chunk: Uint8Array) => void): SandboxCommand {
    const detacher = new AbortController();
    const stopWaiting = new AbortController();
    const signal = AbortSignal.any([detacher.signal, this.lifetime.signal]);
    let exitCode: number | null = null;
    let error: Error | undefined;
    let logsFailed = false;
    const fail = (what: string, err: unknown): Error =>
      new Error(redact(`${what} of ${command.cmdId} in ${this.description} failed: ${errorDetail(err)}${hintFor(httpStatus(err), this.credentials, "command")}`, this.secrets));

    const logs = (async () => {
      try {
        for await (const log of command.logs({ signal })) {
          if (log.stream === "stdout" || log.stream === "stderr") onOutput(Buffer.from(log.data, "utf8"));
        }
      } catch (err) {
        if (signal.aborted) return;
        logsFailed = true;
        error = fail("following the output", err);
        stopWaiting.abort();
      }
    })();
    const wait = (async () => {
      try {
        exitCode = (await command.wait({ signal: AbortSignal.any([signal, stopWaiting.signal]) })).exitCode;
      } catch (err) {
        if (signal.aborted || stopWaiting.signal.aborted) return;
        error ??= fail("waiting for the exit code", err);
      }
    })();
    const done: Promise<SandboxCommandEnd> = Promise.all([logs, wait]).then(() => ({
      exitCode: logsFailed ? null : exitCode,
      ...(error !== undefined ? { error } : {}),
    }));
    return {
      done,
      detach: () => detacher.abort(),
    };
  }

  /**
   * Stops the sandbox's session (every process in it ends; nothing is
   * snapshotted) and deletes the sandbox. Idempotent. Already stopped or gone
   * counts as done.
   */
  close(): Promise<void> {
    if (!this.closing) {
      this.lifetime.abort();
      this.closing = this.stopAndDelete();
    }
    return this.closing;
  }

  private async stopAndDelete(): Promise<void> {
    const gone = (err: unknown) => httpStatus(err) === 404 || httpStatus(err) === 410;
    let stopError: unknown;
    try {
      await this.sandbox.stop({ signal: AbortSignal.timeout(CLOSE_TIMEOUT_MS) });
    } catch (err) {
      if (!gone(err)) stopError = err;
    }
    // Deleting stops a session that still runs, so a failed stop is only reported when this fails too.
    try {
      await this.sandbox.delete({ signal: AbortSignal.timeout(CLOSE_TIMEOUT_MS) });
    } catch (err) {
      if (gone(err)) return;
      const stopped = stopError === undefined ? "" : `; stopping it failed too: ${errorDetail(stopError)}`;
      throw new Error(
        redact(`deleting ${this.description} failed: ${errorDetail(err)}${hintFor(httpStatus(err), this.credentials, "close")}${stopped} (it ends by itself when its timeout runs out)`, this.secrets),
      );
    }
  }
}
