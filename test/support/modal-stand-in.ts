/**
 * A local stand-in for Modal's API, as the official JS SDK (`modal` 0.11.x)
 * uses it to create a sandbox, run commands in it and terminate it: a real
 * gRPC server on 127.0.0.1 (nice-grpc's server, the library the SDK's client
 * is built on) serving the SDK's own generated service definitions, so every
 * message is encoded and decoded exactly as the SDK expects.
 *
 * - `modal.client.ModalClient` (the control plane): AuthTokenGet,
 *   AppGetOrCreate, EnvironmentGetOrCreate, ImageGetOrCreate (a new image
 *   answers without a result, and ImageJoinStreaming follows its "build"),
 *   SandboxCreateV2,
 *   SandboxGetCommandRouterAccess, SandboxTerminateV2. Every call must carry
 *   the configured `x-modal-token-id` / `x-modal-token-secret`, and all but
 *   AuthTokenGet the auth token it handed out.
 * - `modal.task_command_router.TaskCommandRouter` (a sandbox's command
 *   router, served on the same port): TaskExecStart, TaskExecStdioRead,
 *   TaskExecWait, with `authorization: Bearer <the sandbox's JWT>`.
 * Any other method answers UNIMPLEMENTED (and is recorded, so a test notices).
 *
 * A "sandbox" is a private temporary directory on this machine (its HOME and
 * TMPDIR); an exec is a real child process (`argv` as given, its own session
 * and process group, as a container exec would be) whose stdout and stderr
 * are kept in full, so a stdio read can resume at any offset. Terminating a
 * sandbox kills every process of its execs (their groups and sessions) and
 * deletes the directory; so does its timeout.
 *
 * How the SDK is pointed here: `MODAL_SERVER_URL=http://127.0.0.1:<port>`
 * (the SDK's own setting; plain HTTP/2 without TLS for an `http:` URL). The
 * command router address the stand-in hands out must be `https:` (the SDK
 * insists), but for a control plane on localhost the SDK dials it without TLS.
 *
 * The service definitions are not exported by the package, so they are taken
 * from its CommonJS bundle: the file is compiled with one extra line that
 * returns the two definitions (`loadModalServiceDefinitions`).
 */

import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { constants, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import vm from "node:vm";

import { createServer, ServerError, Status, type CallContext, type Server, type ServerMiddlewareCall } from "nice-grpc";

// ---------------------------------------------------------------------------
// The SDK's service definitions
// ---------------------------------------------------------------------------

interface MethodDefinition {
  name: string;
  requestStream: boolean;
  responseStream: boolean;
}

/** A ts-proto service definition as the SDK generated it (message codecs included). */
export interface ServiceDefinition {
  name: string;
  fullName: string;
  methods: Record<string, MethodDefinition>;
}

export interface ModalServiceDefinitions {
  ModalClientDefinition: ServiceDefinition;
  TaskCommandRouterDefinition: ServiceDefinition;
}

let definitions: ModalServiceDefinitions | undefined;

/** The SDK's generated definitions of its two gRPC services, from its own bundle. */
export function loadModalServiceDefinitions(): ModalServiceDefinitions {
  if (definitions) return definitions;
  const require = createRequire(import.meta.url);
  const file = require.resolve("modal"); // the "require" export: dist/index.cjs
  const source = `${readFileSync(file, "utf8")}\n;module.exports = { ModalClientDefinition, TaskCommandRouterDefinition };\n`;
  const wrapper = vm.compileFunction(source, ["exports", "require", "module", "__filename", "__dirname"], { filename: file });
  const module = { exports: {} as Record<string, unknown> };
  wrapper(module.exports, createRequire(file), module, file, dirname(file));
  const loaded = module.exports as unknown as ModalServiceDefinitions;
  if (loaded.ModalClientDefinition?.fullName !== "modal.client.ModalClient" || loaded.TaskCommandRouterDefinition?.fullName !== "modal.task_command_router.TaskCommandRouter") {
    throw new Error(`unexpected service definitions in ${file}`);
  }
  definitions = loaded;
  return loaded;
}

// ---------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------

/** One request as the stand-in received it. */
export interface RecordedRequest {
  service: "ModalClient" | "TaskCommandRouter";
  /** The method's name as in the .proto: `SandboxCreateV2`, `TaskExecStart`, ... */
  method: string;
  /** Request metadata (headers), one value per key. */
  metadata: Record<string, string>;
  /** The decoded request message. */
  message: Record<string, unknown>;
}

export interface InjectedFailure {
  code: Status;
  details: string;
}

export interface ModalStandInOptions {
  tokenId: string;
  tokenSecret: string;
}

/** Generic status values of Modal's `GenericResult`. */
const GENERIC_STATUS_SUCCESS = 1;
const GENERIC_STATUS_FAILURE = 2;
/** `TaskExecStdioFileDescriptor`. */
const FD_STDOUT = 0;
const FD_STDERR = 1;
/** `TaskExecStdoutConfig` / `TaskExecStderrConfig`. */
const STDIO_PIPE = 1;

// ---------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------

/** Everything one stream of an exec wrote, readable from any offset while it grows. */
class OutputLog {
  private readonly chunks: Buffer[] = [];
  private starts: number[] = [];
  length = 0;
  ended = false;
  private waiters: Array<() => void> = [];

  push(chunk: Buffer): void {
    this.starts.push(this.length);
    this.chunks.push(chunk);
    this.length += chunk.length;
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Yields everything from `offset` on, as it arrives, until the stream ended or `signal` aborts. */
  async *read(offset: number, signal: AbortSignal): AsyncGenerator<Buffer> {
    let position = offset;
    for (;;) {
      while (position < this.length) {
        // The chunk holding `position` (chunks are few enough for a linear search from the end).
        let index = this.chunks.length - 1;
        while (index > 0 && this.starts[index]! > position) index--;
        const chunk = this.chunks[index]!;
        const part = chunk.subarray(position - this.starts[index]!);
        position += part.length;
        yield part;
      }
      if (this.ended || signal.aborted) return;
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
    }
  }
}

class StandInExec {
  readonly stdout = new OutputLog();
  readonly stderr = new OutputLog();
  /** Settles with the exit code or the signal number. */
  readonly exited: Promise<{ code?: number; signal?: number }>;
  readonly child: ChildProcess;

  constructor(argv: string[], options: { cwd: string; env: NodeJS.ProcessEnv; pipeStdout: boolean; pipeStderr: boolean }) {
    // detached: its own session and process group, as an exec in a container would be.
    this.child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ["ignore", options.pipeStdout ? "pipe" : "ignore", options.pipeStderr ? "pipe" : "ignore"],
    });
    if (this.child.stdout) this.child.stdout.on("data", (chunk: Buffer) => this.stdout.push(chunk));
    else this.stdout.end();
    if (this.child.stderr) this.child.stderr.on("data", (chunk: Buffer) => this.stderr.push(chunk));
    else this.stderr.end();
    this.child.stdout?.on("close", () => this.stdout.end());
    this.child.stderr?.on("close", () => this.stderr.end());
    this.exited = new Promise((resolve) => {
      this.child.on("error", (err) => {
        // As a shell would say it: the program could not be started.
        this.stderr.push(Buffer.from(`${argv[0]}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "command not found" : err.message}\n`));
        this.stdout.end();
        this.stderr.end();
        resolve({ code: 127 });
      });
      this.child.on("exit", (code, signal) => resolve(signal ? { signal: constants.signals[signal] } : { code: code ?? 0 }));
    });
  }
}

/** Processes (pids) whose process group or session is one of `leaders`. */
function membersOf(leaders: Set<number>): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // fields: state, ppid, pgrp, session, ...; a zombie is dead already, only not yet reaped.
      if (fields[0] === "Z" || fields[0] === "X") continue;
      if (leaders.has(Number(fields[2])) || leaders.has(Number(fields[3]))) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

class StandInSandbox {
  readonly execs = new Map<string, StandInExec>();
  terminated = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly sandboxId: string,
    readonly taskId: string,
    readonly jwt: string,
    readonly root: string,
    readonly env: Record<string, string>,
    timeoutSecs: number,
  ) {
    if (timeoutSecs > 0) {
      this.timer = setTimeout(() => void this.terminate(), timeoutSecs * 1000);
      this.timer.unref();
    }
  }

  exec(argv: string[], pipeStdout: boolean, pipeStderr: boolean): StandInExec {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
      HOME: this.root,
      TMPDIR: join(this.root, "tmp"),
      LANG: "C.UTF-8",
      ...this.env,
    };
    return new StandInExec(argv, { cwd: this.root, env, pipeStdout, pipeStderr });
  }

  /** Kills every process of every exec (SIGKILL, as a container's end does), then deletes the files. */
  async terminate(): Promise<void> {
    if (this.terminated) return;
    this.terminated = true;
    if (this.timer) clearTimeout(this.timer);
    const leaders = new Set<number>();
    for (const exec of this.execs.values()) if (exec.child.pid !== undefined) leaders.add(exec.child.pid);
    for (let round = 0; round < 20; round++) {
      const members = membersOf(leaders);
      for (const leader of leaders) {
        try {
          process.kill(-leader, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      for (const pid of members) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      if (members.length === 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await Promise.race([Promise.all([...this.execs.values()].map((e) => e.exited)), new Promise((r) => setTimeout(r, 2_000))]);
    for (const exec of this.execs.values()) {
      exec.stdout.end();
      exec.stderr.end();
    }
    rmSync(this.root, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------

function fakeJwt(claims: Record<string, unknown>): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part({ exp: Math.floor(Date.now() / 1000) + 3600, ...claims })}.${randomBytes(16).toString("base64url")}`;
}

function metadataRecord(context: CallContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, values] of context.metadata) {
    const value = values[0];
    out[key] = typeof value === "string" ? value : Buffer.from(value ?? []).toString("base64");
  }
  return out;
}

export class ModalStandIn {
  /** Every request, in the order received. */
  readonly requests: RecordedRequest[] = [];
  /** The sandboxes created, by id (terminated ones stay, marked). */
  readonly sandboxes = new Map<string, StandInSandbox>();
  private readonly failures = new Map<string, InjectedFailure[]>();
  private readonly authTokens = new Set<string>();
  private readonly apps = new Map<string, string>();
  /** Images by their Dockerfile commands, and whether their build finished. */
  private readonly images = new Map<string, { imageId: string; built: boolean }>();
  /** When set, every image build fails with this exception text. */
  imageBuildFailure: string | undefined;
  private readonly root: string;
  private port = 0;
  private stopped = false;

  private constructor(
    private readonly server: Server,
    private readonly options: ModalStandInOptions,
  ) {
    this.root = mkdtempSync(join(tmpdir(), "mibyan-modal-standin-"));
  }

  /** Starts a stand-in on a free port of 127.0.0.1. */
  static async start(options: ModalStandInOptions): Promise<ModalStandIn> {
    const defs = loadModalServiceDefinitions();
    const server = createServer();
    const standIn = new ModalStandIn(server, options);
    server.with(standIn.recordAndAuthorize("ModalClient")).add(defs.ModalClientDefinition as never, standIn.service(defs.ModalClientDefinition, standIn.controlPlane()) as never);
    server.with(standIn.recordAndAuthorize("TaskCommandRouter")).add(defs.TaskCommandRouterDefinition as never, standIn.service(defs.TaskCommandRouterDefinition, standIn.commandRouter()) as never);
    standIn.port = await server.listen("127.0.0.1:0");
    return standIn;
  }

  /** What `MODAL_SERVER_URL` must be for the SDK to talk to this stand-in. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The requests to one method. */
  calls(method: string): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method);
  }

  /** Makes the next `times` calls of `method` fail with this status (after they are recorded). */
  failNext(method: string, failure: InjectedFailure, times = 1): void {
    const queue = this.failures.get(method) ?? [];
    for (let i = 0; i < times; i++) queue.push(failure);
    this.failures.set(method, queue);
  }

  /** Sandboxes not terminated yet. */
  liveSandboxes(): StandInSandbox[] {
    return [...this.sandboxes.values()].filter((s) => !s.terminated);
  }

  /** Terminates every sandbox, stops the server and deletes the stand-in's files. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.all([...this.sandboxes.values()].map((s) => s.terminate()));
    this.server.forceShutdown();
    rmSync(this.root, { recursive: true, force: true });
  }

  /**
   * Records each call, then checks its credentials: the token pair and the
   * auth token on the control plane, the sandbox's JWT on the command router.
   */
  private recordAndAuthorize(service: RecordedRequest["service"]) {
    const standIn = this;
    return async function* recordAndAuthorize<Request, Response>(call: ServerMiddlewareCall<Request, Response>, context: CallContext) {
      const method = call.method.path.slice(call.method.path.lastIndexOf("/") + 1);
      const metadata = metadataRecord(context);
      const message = (call.requestStream ? {} : call.request) as Record<string, unknown>;
      standIn.requests.push({ service, method, metadata, message });
      if (service === "ModalClient") {
        if (metadata["x-modal-token-id"] !== standIn.options.tokenId || metadata["x-modal-token-secret"] !== standIn.options.tokenSecret) {
          throw new ServerError(Status.UNAUTHENTICATED, "Token ID or secret is invalid");
        }
        if (method !== "AuthTokenGet" && !standIn.authTokens.has(metadata["x-modal-auth-token"] ?? "")) {
          throw new ServerError(Status.UNAUTHENTICATED, "missing or unknown auth token");
        }
      } else {
        const sandbox = [...standIn.sandboxes.values()].find((s) => s.taskId === message.taskId);
        if (!sandbox || metadata.authorization !== `Bearer ${sandbox.jwt}`) {
          throw new ServerError(Status.UNAUTHENTICATED, "invalid command router token for this task");
        }
      }
      const failure = standIn.failures.get(method)?.shift();
      if (failure) throw new ServerError(failure.code, failure.details);
      return yield* call.next(call.request, context);
    };
  }

  /** Fills in every method of `definition` the stand-in does not serve with UNIMPLEMENTED. */
  private service(definition: ServiceDefinition, implemented: Record<string, unknown>): Record<string, unknown> {
    const full: Record<string, unknown> = {};
    for (const [key, method] of Object.entries(definition.methods)) {
      if (implemented[key]) {
        full[key] = implemented[key];
        continue;
      }
      const error = (): ServerError => new ServerError(Status.UNIMPLEMENTED, `${method.name} is not implemented by the modal stand-in`);
      full[key] = method.responseStream
        ? async function* () {
            throw error();
          }
        : async () => {
            throw error();
          };
    }
    return full;
  }

  private controlPlane(): Record<string, unknown> {
    const standIn = this;
    return {
      authTokenGet: async () => {
        const token = fakeJwt({ sub: "stand-in" });
        this.authTokens.add(token);
        return { token };
      },
      environmentGetOrCreate: async (request: { deploymentName: string }) => ({
        environmentId: `en-${randomBytes(8).toString("hex")}`,
        metadata: { name: request.deploymentName || "main", settings: { imageBuilderVersion: "2025.06", webhookSuffix: "" } },
      }),
      appGetOrCreate: async (request: { appName: string; environmentName: string }) => {
        const key = `${request.environmentName}/${request.appName}`;
        let appId = this.apps.get(key);
        if (!appId) {
          appId = `ap-${randomBytes(8).toString("hex")}`;
          this.apps.set(key, appId);
        }
        return { appId };
      },
      // As Modal: an image already built answers at once; a new one answers without a
      // result, and the client follows the build with ImageJoinStreaming.
      imageGetOrCreate: async (request: { image?: { dockerfileCommands?: string[] } }) => {
        const key = JSON.stringify(request.image?.dockerfileCommands ?? []);
        const built = this.images.get(key);
        if (built?.built) return { imageId: built.imageId, result: { status: GENERIC_STATUS_SUCCESS } };
        const imageId = built?.imageId ?? `im-${randomBytes(8).toString("hex")}`;
        this.images.set(key, { imageId, built: false });
        return { imageId };
      },
      imageJoinStreaming: async function* (this: void, request: { imageId: string }) {
        const entry = [...standIn.images.values()].find((i) => i.imageId === request.imageId);
        if (!entry) throw new ServerError(Status.NOT_FOUND, `image ${request.imageId} not found`);
        yield { taskLogs: [{ data: `Building image ${request.imageId}\n`, fileDescriptor: 1 }], entryId: "1-0" };
        const failure = standIn.imageBuildFailure;
        if (failure) {
          yield { result: { status: GENERIC_STATUS_FAILURE, exception: failure }, entryId: "2-0", eof: true };
          return;
        }
        entry.built = true;
        yield { result: { status: GENERIC_STATUS_SUCCESS }, entryId: "2-0", eof: true };
      },
      sandboxCreateV2: async (request: { definition?: { timeoutSecs?: number }; secretSources?: Array<{ env?: { contents?: Record<string, string> } }> }) => {
        // A V2 id (not `sb-` + 22 characters, the V1 shape the SDK tells apart).
        const sandboxId = `sb-${randomBytes(16).toString("hex")}`;
        const taskId = `ta-${randomBytes(8).toString("hex")}`;
        const jwt = fakeJwt({ task_id: taskId });
        const root = mkdtempSync(join(this.root, "sandbox-"));
        mkdirSync(join(root, "tmp"));
        const env: Record<string, string> = {};
        for (const source of request.secretSources ?? []) Object.assign(env, source.env?.contents ?? {});
        this.sandboxes.set(sandboxId, new StandInSandbox(sandboxId, taskId, jwt, root, env, request.definition?.timeoutSecs ?? 300));
        return { sandboxId, taskId, commandRouterAccess: { url: `https://127.0.0.1:${this.port}`, jwt } };
      },
      sandboxGetCommandRouterAccess: async (request: { sandboxId: string }) => {
        const sandbox = this.sandboxes.get(request.sandboxId);
        if (!sandbox) throw new ServerError(Status.NOT_FOUND, `sandbox ${request.sandboxId} not found`);
        return { url: `https://127.0.0.1:${this.port}`, jwt: sandbox.jwt };
      },
      sandboxTerminateV2: async (request: { sandboxId: string }) => {
        const sandbox = this.sandboxes.get(request.sandboxId);
        if (!sandbox) throw new ServerError(Status.NOT_FOUND, `sandbox ${request.sandboxId} not found`);
        await sandbox.terminate();
        return {};
      },
    };
  }

  private commandRouter(): Record<string, unknown> {
    const findExec = (taskId: string, execId: string): StandInExec => {
      const sandbox = [...this.sandboxes.values()].find((s) => s.taskId === taskId);
      const exec = sandbox?.execs.get(execId);
      if (!exec) throw new ServerError(Status.NOT_FOUND, `exec ${execId} not found`);
      return exec;
    };
    return {
      taskExecStart: async (request: { taskId: string; execId: string; commandArgs: string[]; stdoutConfig: number; stderrConfig: number }) => {
        const sandbox = [...this.sandboxes.values()].find((s) => s.taskId === request.taskId)!;
        if (sandbox.terminated) throw new ServerError(Status.FAILED_PRECONDITION, `sandbox ${sandbox.sandboxId} has finished`);
        if (request.commandArgs.length === 0) throw new ServerError(Status.INVALID_ARGUMENT, "empty command");
        if (sandbox.execs.has(request.execId)) throw new ServerError(Status.ALREADY_EXISTS, `exec ${request.execId} exists`);
        sandbox.execs.set(request.execId, sandbox.exec(request.commandArgs, request.stdoutConfig === STDIO_PIPE, request.stderrConfig === STDIO_PIPE));
        return {};
      },
      taskExecStdioRead: async function* (request: { taskId: string; execId: string; offset: number; fileDescriptor: number }, context: CallContext) {
        const exec = findExec(request.taskId, request.execId);
        if (request.fileDescriptor !== FD_STDOUT && request.fileDescriptor !== FD_STDERR) {
          throw new ServerError(Status.INVALID_ARGUMENT, `bad file descriptor ${request.fileDescriptor}`);
        }
        const log = request.fileDescriptor === FD_STDOUT ? exec.stdout : exec.stderr;
        for await (const data of log.read(Number(request.offset), context.signal)) yield { data };
      },
      taskExecWait: async (request: { taskId: string; execId: string }, context: CallContext) => {
        const exec = findExec(request.taskId, request.execId);
        const aborted = new Promise<never>((_, reject) => context.signal.addEventListener("abort", () => reject(new ServerError(Status.CANCELLED, "cancelled")), { once: true }));
        return await Promise.race([exec.exited, aborted]);
      },
    };
  }
}
