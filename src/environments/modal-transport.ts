/**
 * The modal backend's vendor part: opening a Modal Sandbox with Modal's
 * official JS SDK (`modal`, imported lazily) and the `SandboxTransport` into
 * it. Everything else (shell state, exit codes, timeouts, kills) is
 * `SandboxEnvironment`'s.
 *
 * What the SDK does underneath (0.11.x), and so what the tests' stand-in
 * (test/support/modal-stand-in.ts) answers:
 * - the control plane, `modal.client.ModalClient` over gRPC at
 *   `MODAL_SERVER_URL` (default `https://api.modal.com:443`), every call
 *   carrying `x-modal-token-id` / `x-modal-token-secret` and a short-lived
 *   `x-modal-auth-token` (`AuthTokenGet`): `AppGetOrCreate`,
 *   `EnvironmentGetOrCreate` (the image builder version), `ImageGetOrCreate`,
 *   `SandboxCreateV2` (which returns the sandbox's task and the address and
 *   JWT of its command router) and `SandboxTerminateV2`;
 * - the sandbox's command router, `modal.task_command_router.TaskCommandRouter`
 *   over gRPC with `authorization: Bearer <jwt>`: `TaskExecStart`,
 *   `TaskExecStdioRead` (a server stream per file descriptor, resumable by
 *   offset) and `TaskExecWait`.
 *
 * One `ModalClient` is shared by every sandbox opened with the same
 * credentials, server and environment (the SDK's advice: a client holds a
 * connection and an auth token). Tokens never reach a message: every error
 * and every SDK log line passes through `redact` first.
 */

import { createHash } from "node:crypto";

import type { ContainerProcess, Logger, ModalClient, Sandbox } from "modal";

import type { SandboxCommand, SandboxCommandEnd, SandboxTransport } from "./sandbox-transport.js";
import { scrubCredentials } from "./vendor-sdk.js";
import { sdkInstallCommand } from "./sdk-install-hints.js";

/** What opening one sandbox needs; `modal.ts` derives it from the backend's options. */
export interface ModalSandboxSpec {
  appName: string;
  image: string;
  /** Physical cores requested; undefined leaves Modal's default. */
  cpu?: number;
  /** Memory requested in MiB; undefined leaves Modal's default. */
  memoryMiB?: number;
  /** The sandbox's lifetime: Modal ends it after this many seconds, whatever happens here. */
  timeoutSeconds: number;
  blockNetwork: boolean;
  /** Variables set in the sandbox. */
  env?: Record<string, string>;
  /** Modal environment (workspace subdivision); undefined: the profile's, else the server's default. */
  environment?: string;
  tokenId: string;
  tokenSecret: string;
}

/** The SDK's limit on one exec's argv (`validateExecArgs`: total characters, like ARG_MAX). */
export const MODAL_EXEC_ARGV_LIMIT = 2 ** 16;

/** gRPC status codes (the numbers are fixed by the gRPC spec). */
const GRPC_PERMISSION_DENIED = 7;
const GRPC_NOT_FOUND = 5;
const GRPC_UNAUTHENTICATED = 16;

type ModalSdk = typeof import("modal");

let sdkPromise: Promise<ModalSdk> | undefined;

/**
 * The SDK, imported on first use only (users who never configure modal need not install it).
 * Not exported: its type is the SDK's, which the package's declarations must not need.
 */
function loadModalSdk(): Promise<ModalSdk> {
  sdkPromise ??= import("modal").catch((err: unknown) => {
    sdkPromise = undefined;
    throw new Error(`the modal terminal backend needs the "modal" package (${sdkInstallCommand("modal")}): ${(err as Error).message}`, { cause: err });
  });
  return sdkPromise;
}

/** Replaces every occurrence of the credentials in `text`. */
export function redactor(secrets: readonly (string | undefined)[]): (text: string) => string {
  return (text) => scrubCredentials(text, secrets);
}

/**
 * A clear error for a failed SDK call: what was being done, the SDK's message
 * (redacted), and a hint when the credentials were refused. The original error
 * is not attached as `cause`: its fields are not redacted.
 */
export function modalFailure(action: string, err: unknown, redact: (text: string) => string): Error {
  const e = err as { message?: unknown; code?: unknown } | undefined;
  const message = redact(typeof e?.message === "string" ? e.message : String(err));
  const denied = e?.code === GRPC_UNAUTHENTICATED || e?.code === GRPC_PERMISSION_DENIED;
  const hint = denied ? " (Modal refused the credentials: check MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, or the profile in ~/.modal.toml)" : "";
  return new Error(`modal: ${action} failed: ${message}${hint}`);
}

/** SDK log lines, redacted, on stderr (stdout may carry the runtime's own protocol). */
function redactingLogger(redact: (text: string) => string): Logger {
  const write = (level: string, message: string, args: unknown[]): void => {
    const pairs: string[] = [];
    for (let i = 0; i + 1 < args.length; i += 2) {
      const value = args[i + 1];
      pairs.push(`${String(args[i])}=${value instanceof Error ? value.message : String(value)}`);
    }
    console.error(redact(`modal ${level}: ${message}${pairs.length > 0 ? ` ${pairs.join(" ")}` : ""}`));
  };
  return {
    debug: (message, ...args) => write("debug", message, args),
    info: (message, ...args) => write("info", message, args),
    warn: (message, ...args) => write("warn", message, args),
    error: (message, ...args) => write("error", message, args),
  };
}

const clients = new Map<string, ModalClient>();

/**
 * The shared client for these credentials. The SDK reads the server address
 * (`MODAL_SERVER_URL`), the profile and the log level from the environment
 * when a client is made, so they are part of the key.
 */
function clientFor(sdk: ModalSdk, spec: ModalSandboxSpec, redact: (text: string) => string): ModalClient {
  const env = process.env;
  const key = createHash("sha256")
    .update(JSON.stringify([env.MODAL_SERVER_URL ?? "", env.MODAL_PROFILE ?? "", env.MODAL_CONFIG_PATH ?? "", env.MODAL_LOGLEVEL ?? "", spec.environment ?? "", spec.tokenId, spec.tokenSecret]))
    .digest("hex");
  let client = clients.get(key);
  if (!client) {
    client = new sdk.ModalClient({
      tokenId: spec.tokenId,
      tokenSecret: spec.tokenSecret,
      ...(spec.environment !== undefined ? { environment: spec.environment } : {}),
      logger: redactingLogger(redact),
    });
    clients.set(key, client);
  }
  return client;
}

/**
 * Creates the task's sandbox (the app is created if missing, the image is
 * pulled from its registry by Modal) and returns the transport into it.
 */
export async function openModalSandbox(spec: ModalSandboxSpec): Promise<ModalSandboxTransport> {
  const redact = redactor([spec.tokenId, spec.tokenSecret]);
  const sdk = await loadModalSdk();
  let client: ModalClient;
  try {
    client = clientFor(sdk, spec, redact);
  } catch (err) {
    throw modalFailure("setting up the Modal client", err, redact);
  }
  let sandbox: Sandbox;
  try {
    const app = await client.apps.fromName(spec.appName, {
      createIfMissing: true,
      ...(spec.environment !== undefined ? { environment: spec.environment } : {}),
    });
    const image = client.images.fromRegistry(spec.image);
    sandbox = await client.sandboxes.create(app, image, {
      timeoutMs: spec.timeoutSeconds * 1000,
      blockNetwork: spec.blockNetwork,
      ...(spec.cpu !== undefined ? { cpu: spec.cpu } : {}),
      ...(spec.memoryMiB !== undefined ? { memoryMiB: spec.memoryMiB } : {}),
      ...(spec.env !== undefined && Object.keys(spec.env).length > 0 ? { env: spec.env } : {}),
    });
  } catch (err) {
    throw modalFailure(`creating a sandbox (app ${spec.appName}, image ${spec.image})`, err, redact);
  }
  return new ModalSandboxTransport(sandbox, redact);
}

/** The transport into one Modal Sandbox: `sandbox.exec(argv)` per command, `terminate` on close. */
export class ModalSandboxTransport implements SandboxTransport {
  readonly description: string;
  private closing: Promise<void> | undefined;
  /** Detach functions of the commands being followed, so that `close` stops following them. */
  private readonly following = new Set<() => void>();

  private readonly sandbox: Sandbox;

  /**
   * `sandbox` is Modal's `Sandbox`, typed `unknown` in the signature so that the package's
   * declarations need no types from `modal` (an optional peer); only `openModalSandbox`
   * constructs a transport.
   */
  constructor(
    sandbox: unknown,
    private readonly redact: (text: string) => string = (text) => text,
  ) {
    this.sandbox = sandbox as Sandbox;
    this.description = `modal sandbox ${this.sandbox.sandboxId}`;
  }

  /** Modal's id of the sandbox (`sb-…`). */
  get sandboxId(): string {
    return this.sandbox.sandboxId;
  }

  async start(argv: readonly string[], onOutput: (chunk: Uint8Array) => void): Promise<SandboxCommand> {
    if (this.closing) throw new Error(`${this.description} was terminated`);
    if (argv.length === 0) throw new Error("modal: nothing to run (empty argv)");
    const length = argv.reduce((sum, arg) => sum + arg.length, 0);
    if (length >= MODAL_EXEC_ARGV_LIMIT) {
      throw new Error(`modal: the command is too long for ${this.description}: ${length} characters, Modal's exec takes less than ${MODAL_EXEC_ARGV_LIMIT} in all`);
    }
    let proc: ContainerProcess<Uint8Array>;
    try {
      // Binary: the bytes as the program wrote them (the environment decodes, after the trailer is out).
      proc = await this.sandbox.exec([...argv], { mode: "binary", stdout: "pipe", stderr: "pipe" });
    } catch (err) {
      throw modalFailure(`starting ${argv[0]} in ${this.description}`, err, this.redact);
    }
    // Closed while the exec was being started: the sandbox (and the program) is gone.
    if (this.closing) throw new Error(`${this.description} was terminated`);
    return this.follow(proc, onOutput);
  }

  /**
   * Reads stdout and stderr to their ends, then asks for the exit code. The
   * wait comes only after both streams ended, that is once the program has
   * (almost certainly) exited, so it answers at once; a program still holding
   * its streams open is detached by the environment before that.
   */
  private follow(proc: ContainerProcess<Uint8Array>, onOutput: (chunk: Uint8Array) => void): SandboxCommand {
    const readers = [proc.stdout.getReader(), proc.stderr.getReader()];
    let settled = false;
    let settle!: (end: SandboxCommandEnd) => void;
    const done = new Promise<SandboxCommandEnd>((resolve) => {
      settle = (end) => {
        if (settled) return;
        settled = true;
        this.following.delete(detach);
        resolve(end);
      };
    });
    let detached = false;
    const stopReading = (): void => {
      for (const reader of readers) reader.cancel().catch(() => undefined);
    };
    const detach = (): void => {
      if (settled) return;
      detached = true;
      settle({ exitCode: null });
      stopReading();
    };
    this.following.add(detach);

    const pump = async (reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> => {
      for (;;) {
        const { value, done: ended } = await reader.read();
        if (ended || detached) return;
        if (value.length > 0) onOutput(value);
      }
    };
    void (async () => {
      try {
        await Promise.all(readers.map(pump));
        if (detached) return;
        const exitCode = await Promise.race([proc.wait(), done.then(() => null)]);
        settle({ exitCode });
      } catch (err) {
        if (detached) return;
        settle({ exitCode: null, error: modalFailure(`following the command in ${this.description}`, err, this.redact) });
        stopReading();
      }
    })();
    return { done, detach };
  }

  /**
   * Terminates the sandbox (every process in it ends, its files are gone) and
   * stops following its commands. Idempotent. A sandbox Modal no longer knows
   * counts as terminated.
   */
  close(): Promise<void> {
    if (!this.closing) {
      this.closing = (async () => {
        for (const detach of [...this.following]) detach();
        try {
          await this.sandbox.terminate();
        } catch (err) {
          if ((err as { code?: unknown }).code !== GRPC_NOT_FOUND) throw modalFailure(`terminating ${this.description}`, err, this.redact);
        } finally {
          // Releases the connection to the sandbox's command router.
          this.sandbox.detach();
        }
      })();
    }
    return this.closing;
  }
}
