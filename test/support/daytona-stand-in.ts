/**
 * A local stand-in for Daytona, speaking the protocols exactly as
 * `@daytonaio/sdk` 0.218 uses them, so the backend's tests run the real SDK
 * end to end without an account. One server on 127.0.0.1 plays three parts:
 *
 * - the API (`/api`): `POST /sandbox` (create: snapshot, or `buildInfo` from
 *   an image, with Daytona's checks: resources only with an image, names
 *   unique), `GET /sandbox/:idOrName`, `DELETE /sandbox/:idOrName`, `POST
 *   /sandbox/:id/last-activity`. A new
 *   sandbox is `starting` for `startDelayMs`, then `started`;
 * - the event gateway (`/api/socket.io/`, Engine.IO 4 over WebSocket): the
 *   SDK connects with `auth: { token }` and is sent `sandbox.state.updated`
 *   events of its organization, as the real notification gateway does;
 * - the toolbox proxy (`/toolbox/:sandboxId/...`, the sandbox's
 *   `toolboxProxyUrl`): sessions (`POST /process/session`, `DELETE
 *   /process/session/:id`), session commands (`POST
 *   /process/session/:id/exec`, `GET .../command/:cmd`) and their logs
 *   (`GET .../command/:cmd/logs`, a WebSocket with `follow=true`).
 *
 * Every request is authenticated like the real service (`Authorization:
 * Bearer <API key>`, or a JWT with `X-Daytona-Organization-ID`) and recorded,
 * headers and body included; so is every event-gateway connection. Errors use
 * the API's shape, `{"statusCode","message","error"}`.
 *
 * The sandbox is this machine: a private temporary directory that is the
 * processes' `$HOME` and `$TMPDIR`. A session is a real `bash` reading
 * commands from its stdin, one at a time, as the daemon's session shell does:
 * each command is sourced from a file with its stdout and stderr going to two
 * FIFOs, whose readers' output is labelled here line by line the way the daemon's
 * labelers (bash `read` loops) do: `\x01\x01\x01` before each stdout line,
 * `\x02\x02\x02` before each stderr line, NUL bytes dropped, a newline added to
 * a last line without one, a line delivered only once complete (or at the end
 * of the stream). An asynchronous command's stdin is a pipe that never ends
 * (the daemon keeps it open for `sendInput`). A command is complete when it
 * has exited and both FIFOs are closed (a background job holding them keeps
 * it, and its session, busy); only then does it get its exit code and do its
 * log WebSockets close. Logs go out in messages of at most 1 KiB, as the
 * daemon's log reader sends them.
 *
 * Deleting a sandbox kills every process whose environment carries the
 * sandbox's marker variable (it survives `setsid` and re-parenting) and
 * deletes its directory.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { accessSync, closeSync, constants, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";

/** The parts of the `ws` package used here (it ships no types). */
interface WsSocket {
  readonly readyState: number;
  send(data: Buffer | string): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: "message", listener: (data: Buffer) => void): this;
  on(event: "close", listener: () => void): this;
  on(event: "error", listener: (error: Error) => void): this;
}
interface WsServer {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, callback: (ws: WsSocket) => void): void;
  close(): void;
}
const { WebSocketServer } = createRequire(import.meta.url)("ws") as { WebSocketServer: new (options: { noServer: true }) => WsServer };
const WS_OPEN = 1;

/** One request as the stand-in received it (WebSocket upgrades included). */
export interface RecordedRequest {
  method: string;
  /** Path without the query: `/api/sandbox`, `/toolbox/<id>/process/session`. */
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json?: unknown;
}

/** One connection to the event gateway. */
export interface RecordedEventClient {
  query: Record<string, string>;
  /** The Socket.IO CONNECT packet's auth payload (`{ token }`). */
  auth: unknown;
  authorized: boolean;
}

export interface DaytonaStandInOptions {
  /** API keys accepted. Default: none. */
  apiKeys?: string[];
  /** JWTs accepted, each for one organization. */
  jwts?: { token: string; organizationId: string }[];
  /** How long a new sandbox stays `starting`. Default 20 ms. */
  startDelayMs?: number;
}

interface InjectedFailure {
  method: string;
  path: RegExp;
  status: number;
  message: string;
}

interface StandInCommand {
  id: string;
  command: string;
  async: boolean;
  /** The directory of its files (the script). */
  dir: string;
  exitCode?: number;
  complete: boolean;
  /** The labelled log (markers included), in order. */
  log: Buffer[];
  followers: Set<WsSocket>;
  /** Output channels (stdout, stderr) whose end token has not arrived yet. */
  channelsOpen: number;
  /** Waiters of a synchronous exec. */
  waiters: Array<() => void>;
}

interface StandInSession {
  id: string;
  dir: string;
  shell: ChildProcess;
  commands: Map<string, StandInCommand>;
  queue: StandInCommand[];
  current?: StandInCommand;
  /** The readers' channels (stdout, stderr): the current command's output, up to the end token. */
  channels: [OutputChannel, OutputChannel];
  /** This process's end of the input FIFO, held open so that an asynchronous command's stdin never ends. */
  inputFd?: number;
  shellOutput: string;
}

export interface StandInSandbox {
  id: string;
  name: string;
  organizationId: string;
  state: string;
  errorReason?: string;
  /** The create request's body, as sent. */
  request: Record<string, unknown>;
  root: string;
  home: string;
  env: Record<string, string>;
  sessions: Map<string, StandInSession>;
  createdAt: string;
  lastActivity?: string;
  deleted: boolean;
  timer?: NodeJS.Timeout;
}

/** The environment variable marking every process of a sandbox (for cleanup on delete). */
const SANDBOX_MARKER = "DAYTONA_STAND_IN_SANDBOX";
const STDOUT_PREFIX = Buffer.from([1, 1, 1]);
const STDERR_PREFIX = Buffer.from([2, 2, 2]);
/** The daemon's log reader sends what one 1 KiB read returns. */
const LOG_MESSAGE_BYTES = 1024;
const EXIT_LINE = "__stand_in_exit";
const READY_LINE = "__stand_in_ready";

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  500: "Internal Server Error",
};

export class DaytonaStandIn {
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[] = [];
  /** Every event-gateway connection. */
  readonly eventClients: RecordedEventClient[] = [];
  /** Sandboxes by id (deleted ones stay, marked). */
  readonly sandboxes = new Map<string, StandInSandbox>();
  /** The next sandbox created ends in state `error` with this reason instead of starting. */
  failNextStart: string | undefined;
  /**
   * The next log WebSocket sends only this many messages and then nothing
   * until it closes when the command completes, as with older daemons that
   * published the exit code before the labelers had written everything (the
   * log itself stays complete).
   */
  cutNextLogStreamAfter: number | undefined;
  private readonly failures: InjectedFailure[] = [];
  private readonly root: string;
  private readonly wss: WsServer;
  private readonly gatewaySockets = new Map<WsSocket, { organizationId?: string; timer: NodeJS.Timeout }>();
  private readonly upgraded = new Set<WsSocket>();

  private constructor(
    private readonly server: Server,
    readonly origin: string,
    private readonly options: DaytonaStandInOptions,
  ) {
    this.root = mkdtempSync(join(tmpdir(), "mibyan-daytona-stand-in-"));
    this.wss = new WebSocketServer({ noServer: true });
  }

  /** Starts the stand-in on 127.0.0.1 (a free port). */
  static async start(options: DaytonaStandInOptions = {}): Promise<DaytonaStandIn> {
    let standIn: DaytonaStandIn | undefined;
    const server = createServer((req, res) => void standIn!.handle(req, res));
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => void standIn!.upgrade(req, socket, head));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    standIn = new DaytonaStandIn(server, `http://127.0.0.1:${port}`, options);
    return standIn;
  }

  /** The API's base URL (what `DaytonaConfig.apiUrl` gets). */
  get apiUrl(): string {
    return `${this.origin}/api`;
  }

  /** The next request matching `method` and `path` fails with this status and message. */
  failNext(method: string, path: RegExp, status: number, message: string): void {
    this.failures.push({ method, path, status, message });
  }

  /** Requests matching a method and a path pattern. */
  find(method: string, path: RegExp): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && path.test(r.path));
  }

  /** Sandboxes not deleted. */
  live(): StandInSandbox[] {
    return [...this.sandboxes.values()].filter((s) => !s.deleted);
  }

  /** Pids of the processes still running in a sandbox. */
  processesOf(sandboxId: string): number[] {
    return markedProcesses(sandboxId);
  }

  async close(): Promise<void> {
    for (const sandbox of this.sandboxes.values()) this.destroy(sandbox);
    for (const [ws, { timer }] of this.gatewaySockets) {
      clearInterval(timer);
      ws.terminate();
    }
    for (const ws of this.upgraded) ws.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.root, { recursive: true, force: true });
  }

  // ---------------------------------------------------------------- HTTP

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://stand-in");
    const body = Buffer.concat(chunks).toString("utf8");
    const recorded = this.record(req, url, body);
    try {
      this.injectedFailure(recorded);
      const organizationId = this.authenticate(req.headers);
      const json = recorded.json as Record<string, unknown> | undefined;
      const result = await this.route(req.method ?? "GET", url, json, organizationId);
      send(res, result.status, result.body);
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 500;
      send(res, status, { statusCode: status, message: (err as Error).message, error: STATUS_TEXT[status] ?? "Error" });
    }
  }

  private record(req: IncomingMessage, url: URL, body: string): RecordedRequest {
    const recorded: RecordedRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: { ...req.headers },
      body,
    };
    if (body !== "") {
      try {
        recorded.json = JSON.parse(body);
      } catch {
        // Not JSON: kept as text.
      }
    }
    this.requests.push(recorded);
    return recorded;
  }

  private injectedFailure(request: RecordedRequest): void {
    const index = this.failures.findIndex((f) => f.method === request.method && f.path.test(request.path));
    if (index < 0) return;
    const [failure] = this.failures.splice(index, 1);
    throw new HttpError(failure!.status, failure!.message);
  }

  /** The organization the request acts for, or a 401. */
  private authenticate(headers: IncomingHttpHeaders): string {
    const match = /^Bearer (.+)$/.exec(String(headers.authorization ?? ""));
    const token = match?.[1];
    if (token !== undefined && (this.options.apiKeys ?? []).includes(token)) return "org-stand-in";
    const jwt = (this.options.jwts ?? []).find((j) => j.token === token);
    if (jwt !== undefined) {
      if (headers["x-daytona-organization-id"] !== jwt.organizationId) throw new HttpError(403, "Organization not found or not accessible with this token");
      return jwt.organizationId;
    }
    throw new HttpError(401, "Unauthorized");
  }

  private async route(method: string, url: URL, json: Record<string, unknown> | undefined, organizationId: string): Promise<{ status: number; body?: unknown }> {
    const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    if (parts[0] === "api" && parts[1] === "sandbox") {
      if (parts.length === 2 && method === "POST") return { status: 200, body: this.createSandbox(json ?? {}, organizationId) };
      if (parts.length === 3 && method === "GET") return { status: 200, body: this.dto(this.sandbox(parts[2]!, organizationId)) };
      if (parts.length === 4 && parts[3] === "last-activity" && method === "POST") {
        this.sandbox(parts[2]!, organizationId).lastActivity = new Date().toISOString();
        return { status: 201 };
      }
      if (parts.length === 3 && method === "DELETE") {
        const sandbox = this.sandbox(parts[2]!, organizationId);
        this.destroy(sandbox);
        return { status: 200, body: this.dto(sandbox) };
      }
    }
    if (parts[0] === "toolbox" && parts.length >= 4 && parts[2] === "process" && parts[3] === "session") {
      const sandbox = this.sandbox(parts[1]!, organizationId);
      if (sandbox.state !== "started") throw new HttpError(409, `sandbox ${sandbox.id} is ${sandbox.state}`);
      const rest = parts.slice(4);
      if (rest.length === 0 && method === "POST") {
        this.createSession(sandbox, String(json?.sessionId ?? ""));
        return { status: 201 };
      }
      const session = sandbox.sessions.get(rest[0] ?? "");
      if (!session) throw new HttpError(404, "session not found");
      if (rest.length === 1 && method === "DELETE") {
        this.deleteSession(sandbox, session);
        return { status: 204 };
      }
      if (rest.length === 1 && method === "GET") {
        return { status: 200, body: { sessionId: session.id, commands: [...session.commands.values()].map(commandDto) } };
      }
      if (rest.length === 2 && rest[1] === "exec" && method === "POST") return this.execute(session, json ?? {});
      if (rest.length >= 3 && rest[1] === "command") {
        const command = session.commands.get(rest[2]!);
        if (!command) throw new HttpError(404, "command not found");
        if (rest.length === 3 && method === "GET") return { status: 200, body: commandDto(command) };
        if (rest.length === 4 && rest[3] === "logs" && method === "GET") {
          return { status: 200, body: splitLog(Buffer.concat(command.log)) };
        }
      }
    }
    throw new HttpError(404, `Cannot ${method} ${url.pathname}`);
  }

  // ---------------------------------------------------------------- sandboxes

  private sandbox(idOrName: string, organizationId: string): StandInSandbox {
    const sandbox = this.sandboxes.get(idOrName) ?? [...this.sandboxes.values()].find((s) => s.name === idOrName && !s.deleted);
    if (!sandbox || sandbox.deleted || sandbox.organizationId !== organizationId) throw new HttpError(404, `Sandbox with ID or name ${idOrName} not found`);
    return sandbox;
  }

  private createSandbox(body: Record<string, unknown>, organizationId: string): Record<string, unknown> {
    if (body.snapshot !== undefined && body.buildInfo !== undefined) throw new HttpError(400, "Cannot specify both a snapshot and a build info");
    const resources = ["cpu", "memory", "disk", "gpu"].filter((k) => body[k] !== undefined);
    if (resources.length > 0 && body.buildInfo === undefined) throw new HttpError(400, "Cannot specify Sandbox resources when using a snapshot");
    const name = typeof body.name === "string" && body.name !== "" ? body.name : undefined;
    if (name !== undefined && this.live().some((s) => s.name === name)) throw new HttpError(409, `Sandbox with name ${name} already exists`);
    const id = randomUUID();
    const root = mkdtempSync(join(this.root, "sandbox-"));
    const home = join(root, "home");
    mkdirSync(home);
    mkdirSync(join(root, "tmp"));
    mkdirSync(join(root, "daemon"));
    const vars = (body.env ?? {}) as Record<string, string>;
    const sandbox: StandInSandbox = {
      id,
      name: name ?? id,
      organizationId,
      state: "starting",
      request: body,
      root,
      home,
      env: {
        PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
        HOME: home,
        TMPDIR: join(root, "tmp"),
        LANG: "C.UTF-8",
        USER: typeof body.user === "string" ? body.user : "daytona",
        ...vars,
        [SANDBOX_MARKER]: id,
      },
      sessions: new Map(),
      createdAt: new Date().toISOString(),
      deleted: false,
    };
    this.sandboxes.set(id, sandbox);
    const failure = this.failNextStart;
    this.failNextStart = undefined;
    sandbox.timer = setTimeout(() => {
      sandbox.timer = undefined;
      if (sandbox.deleted) return;
      if (failure !== undefined) {
        sandbox.errorReason = failure;
        this.setState(sandbox, "error");
      } else {
        this.setState(sandbox, "started");
      }
    }, this.options.startDelayMs ?? 20);
    return this.dto(sandbox);
  }

  private setState(sandbox: StandInSandbox, state: string): void {
    const oldState = sandbox.state;
    sandbox.state = state;
    this.emit(sandbox.organizationId, "sandbox.state.updated", { sandbox: this.dto(sandbox), oldState, newState: state });
  }

  private dto(sandbox: StandInSandbox): Record<string, unknown> {
    const request = sandbox.request;
    const image = request.buildInfo !== undefined;
    return {
      id: sandbox.id,
      organizationId: sandbox.organizationId,
      name: sandbox.name,
      ...(image ? {} : { snapshot: typeof request.snapshot === "string" ? request.snapshot : "daytonaio/sandbox:stand-in" }),
      user: typeof request.user === "string" ? request.user : "daytona",
      env: request.env ?? {},
      labels: request.labels ?? {},
      public: request.public === true,
      networkBlockAll: request.networkBlockAll === true,
      ...(typeof request.networkAllowList === "string" ? { networkAllowList: request.networkAllowList } : {}),
      target: typeof request.target === "string" ? request.target : "us",
      cpu: typeof request.cpu === "number" ? request.cpu : 1,
      gpu: 0,
      memory: typeof request.memory === "number" ? request.memory : 1,
      disk: typeof request.disk === "number" ? request.disk : 3,
      state: sandbox.state,
      desiredState: sandbox.deleted ? "destroyed" : "started",
      ...(sandbox.errorReason !== undefined ? { errorReason: sandbox.errorReason } : {}),
      autoStopInterval: typeof request.autoStopInterval === "number" ? request.autoStopInterval : 15,
      autoArchiveInterval: 10080,
      autoDeleteInterval: typeof request.autoDeleteInterval === "number" ? request.autoDeleteInterval : -1,
      volumes: [],
      ...(image ? { buildInfo: { dockerfileContent: (request.buildInfo as { dockerfileContent?: string }).dockerfileContent ?? "" } } : {}),
      createdAt: sandbox.createdAt,
      updatedAt: new Date().toISOString(),
      ...(sandbox.lastActivity !== undefined ? { lastActivityAt: sandbox.lastActivity } : {}),
      toolboxProxyUrl: `${this.origin}/toolbox`,
    };
  }

  /** Kills everything in the sandbox and deletes its files. */
  private destroy(sandbox: StandInSandbox): void {
    if (sandbox.deleted) return;
    sandbox.deleted = true;
    if (sandbox.timer !== undefined) clearTimeout(sandbox.timer);
    for (const session of sandbox.sessions.values()) this.deleteSession(sandbox, session);
    killMarked(sandbox.id);
    sandbox.state = "destroyed";
    rmSync(sandbox.root, { recursive: true, force: true });
  }

  // ---------------------------------------------------------------- sessions

  /**
   * A session is a `bash` reading commands from its stdin. It first makes its
   * FIFOs (stdout, stderr, input) and starts a reader on each output FIFO: a
   * loop of `cat` that writes an end token each time the FIFO's writers are
   * all gone, to fds 3 and 4, two more pipes to this process. So running a
   * command spawns nothing here, and a command is complete once it has exited
   * and both tokens have come (a background job holding a FIFO keeps it, and
   * its session, busy, as on the daemon).
   */
  private createSession(sandbox: StandInSandbox, id: string): void {
    if (id === "") throw new HttpError(400, "sessionId is required");
    if (sandbox.sessions.has(id)) throw new HttpError(409, "session already exists");
    const dir = join(sandbox.root, "daemon", `session-${sandbox.sessions.size}-${randomBytes(3).toString("hex")}`);
    mkdirSync(dir);
    const token = Buffer.from(`<<end ${randomBytes(16).toString("hex")}>>`);
    const shell = spawn(tool("bash"), [], { cwd: sandbox.home, env: sandbox.env, stdio: ["pipe", "pipe", "ignore", "pipe", "pipe"], detached: true });
    const session: StandInSession = {
      id,
      dir,
      shell,
      commands: new Map(),
      queue: [],
      channels: [new OutputChannel(token), new OutputChannel(token)],
      shellOutput: "",
    };
    shell.stdin!.on("error", () => undefined);
    shell.stdout!.setEncoding("utf8");
    shell.stdout!.on("data", (text: string) => {
      session.shellOutput += text;
      let newline: number;
      while ((newline = session.shellOutput.indexOf("\n")) >= 0) {
        const line = session.shellOutput.slice(0, newline);
        session.shellOutput = session.shellOutput.slice(newline + 1);
        this.shellNotice(session, line);
      }
    });
    (shell.stdio[3] as NodeJS.ReadableStream).on("data", (chunk: Buffer) => session.channels[0].push(chunk));
    (shell.stdio[4] as NodeJS.ReadableStream).on("data", (chunk: Buffer) => session.channels[1].push(chunk));
    const d = quote(dir);
    const t = quote(token.toString());
    shell.stdin!.write(
      [
        `__sd=${d}`,
        `${quote(tool("mkfifo"))} "$__sd/stdout.pipe" "$__sd/stderr.pipe" "$__sd/input.pipe" || exit 1`,
        `printf '${READY_LINE}\\n'`,
        `while :; do ${quote(tool("cat"))} "$__sd/stdout.pipe"; printf '%s' ${t}; done >&3 2>/dev/null & disown`,
        `while :; do ${quote(tool("cat"))} "$__sd/stderr.pipe"; printf '%s' ${t}; done >&4 2>/dev/null & disown`,
        `exec 3>&- 4>&-`,
        "",
      ].join("\n"),
    );
    sandbox.sessions.set(id, session);
  }

  private shellNotice(session: StandInSession, line: string): void {
    const [notice, id, code] = line.split(" ");
    if (notice === READY_LINE) {
      // Read and write, so that opening it never blocks and it never reaches its end
      // (the daemon keeps an asynchronous command's stdin open for sendInput).
      session.inputFd = openSync(join(session.dir, "input.pipe"), constants.O_RDWR);
      return;
    }
    const command = id !== undefined ? session.commands.get(id) : undefined;
    if (command && notice === EXIT_LINE) {
      command.exitCode = Number(code);
      this.checkComplete(session, command);
    }
  }

  private deleteSession(sandbox: StandInSandbox, session: StandInSession): void {
    sandbox.sessions.delete(session.id);
    if (session.shell.pid !== undefined) {
      try {
        process.kill(-session.shell.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    if (session.inputFd !== undefined) {
      closeSync(session.inputFd);
      session.inputFd = undefined;
    }
    for (const command of session.commands.values()) {
      // The daemon closes the log streams of a session that ends.
      for (const ws of command.followers) ws.close(1000);
      command.followers.clear();
      for (const wake of command.waiters.splice(0)) wake();
    }
  }

  private execute(session: StandInSession, body: Record<string, unknown>): Promise<{ status: number; body?: unknown }> | { status: number; body?: unknown } {
    const text = typeof body.command === "string" ? body.command : "";
    if (text.trim() === "") throw new HttpError(400, "command cannot be empty");
    const id = randomUUID();
    const command: StandInCommand = {
      id,
      command: text,
      async: body.runAsync === true || body.async === true,
      dir: join(session.dir, id),
      complete: false,
      log: [],
      followers: new Set(),
      channelsOpen: 2,
      waiters: [],
    };
    session.commands.set(command.id, command);
    session.queue.push(command);
    this.runNext(session);
    if (command.async) return { status: 202, body: { cmdId: command.id } };
    return new Promise((resolve) => {
      command.waiters.push(() => {
        resolve({ status: 200, body: { cmdId: command.id, ...splitLog(Buffer.concat(command.log)), exitCode: command.exitCode ?? 1 } });
      });
    });
  }

  /** Hands the session shell its next command, once the current one is complete. */
  private runNext(session: StandInSession): void {
    if (session.current !== undefined) return;
    const command = session.queue.shift();
    if (command === undefined) return;
    session.current = command;
    mkdirSync(command.dir);
    const file = join(command.dir, "cmd.sh");
    writeFileSync(file, command.command);
    const onEnd = (): void => {
      command.channelsOpen--;
      this.checkComplete(session, command);
    };
    session.channels[0].target = { labeler: new LineLabeler(STDOUT_PREFIX, (labelled) => this.appendLog(command, labelled)), onEnd };
    session.channels[1].target = { labeler: new LineLabeler(STDERR_PREFIX, (labelled) => this.appendLog(command, labelled)), onEnd };
    const stdin = command.async ? `"$__sd/input.pipe"` : "/dev/null";
    session.shell.stdin!.write(
      `{ . ${quote(file)}; } <${stdin} >"$__sd/stdout.pipe" 2>"$__sd/stderr.pipe"; printf '${EXIT_LINE} %s %s\\n' ${quote(command.id)} "$?"\n`,
    );
  }

  private appendLog(command: StandInCommand, labelled: Buffer): void {
    command.log.push(labelled);
    for (const ws of command.followers) sendLog(ws, labelled);
  }

  private checkComplete(session: StandInSession, command: StandInCommand): void {
    if (command.complete || command.exitCode === undefined || command.channelsOpen > 0) return;
    command.complete = true;
    for (const ws of command.followers) ws.close(1000);
    command.followers.clear();
    for (const wake of command.waiters.splice(0)) wake();
    if (session.current === command) session.current = undefined;
    this.runNext(session);
  }

  // ---------------------------------------------------------------- WebSockets

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? "/", "http://stand-in");
    this.record(req, url, "");
    const refuse = (status: number, message: string): void => {
      socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Error"}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${JSON.stringify({ statusCode: status, message })}`);
    };
    if (url.pathname === "/api/socket.io/") {
      this.wss.handleUpgrade(req, socket, head, (ws) => this.gateway(ws, url));
      return;
    }
    const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    const match = parts[0] === "toolbox" && parts[2] === "process" && parts[3] === "session" && parts[5] === "command" && parts[7] === "logs" && parts.length === 8;
    if (!match) return refuse(404, `Cannot GET ${url.pathname}`);
    let organizationId: string;
    try {
      organizationId = this.authenticate(req.headers);
    } catch (err) {
      return refuse((err as HttpError).status, (err as Error).message);
    }
    const sandbox = this.sandboxes.get(parts[1]!);
    if (!sandbox || sandbox.deleted || sandbox.organizationId !== organizationId) return refuse(404, "sandbox not found");
    const command = sandbox.sessions.get(parts[4]!)?.commands.get(parts[6]!);
    if (!command) return refuse(404, "command not found");
    const cutAfter = this.cutNextLogStreamAfter;
    this.cutNextLogStreamAfter = undefined;
    this.wss.handleUpgrade(req, socket, head, (wsOpened) => {
      const ws = cutAfter === undefined ? wsOpened : cutStream(wsOpened, cutAfter);
      this.upgraded.add(wsOpened);
      wsOpened.on("close", () => {
        this.upgraded.delete(wsOpened);
        command.followers.delete(ws);
      });
      ws.on("error", () => undefined);
      for (const chunk of command.log) sendLog(ws, chunk);
      if (command.complete || url.searchParams.get("follow") !== "true") ws.close(1000);
      else command.followers.add(ws);
    });
  }

  /** One Engine.IO 4 / Socket.IO 5 connection to the notification gateway. */
  private gateway(ws: WsSocket, url: URL): void {
    const client: RecordedEventClient = { query: Object.fromEntries(url.searchParams), auth: undefined, authorized: false };
    this.eventClients.push(client);
    const timer = setInterval(() => ws.send("2"), 25_000);
    timer.unref();
    const state: { organizationId?: string; timer: NodeJS.Timeout } = { timer };
    this.gatewaySockets.set(ws, state);
    ws.on("close", () => {
      clearInterval(timer);
      this.gatewaySockets.delete(ws);
    });
    ws.on("error", () => undefined);
    ws.on("message", (data) => {
      const packet = data.toString("utf8");
      if (packet.startsWith("40")) {
        const payload = packet.length > 2 ? (JSON.parse(packet.slice(2)) as { token?: unknown }) : undefined;
        client.auth = payload;
        const organizationId = this.gatewayOrganization(payload?.token, client.query.organizationId);
        if (organizationId === undefined) {
          ws.send(`44${JSON.stringify({ message: "Unauthorized" })}`);
          return;
        }
        client.authorized = true;
        state.organizationId = organizationId;
        ws.send(`40${JSON.stringify({ sid: randomBytes(10).toString("base64url") })}`);
      } else if (packet.startsWith("41")) {
        state.organizationId = undefined;
      }
      // "3" (pong) needs nothing.
    });
    ws.send(`0${JSON.stringify({ sid: randomBytes(10).toString("base64url"), upgrades: [], pingInterval: 25_000, pingTimeout: 20_000, maxPayload: 1_000_000 })}`);
  }

  private gatewayOrganization(token: unknown, organizationId: string | undefined): string | undefined {
    if (typeof token !== "string") return undefined;
    if ((this.options.apiKeys ?? []).includes(token)) return "org-stand-in";
    const jwt = (this.options.jwts ?? []).find((j) => j.token === token);
    return jwt !== undefined && jwt.organizationId === organizationId ? jwt.organizationId : undefined;
  }

  private emit(organizationId: string, event: string, data: unknown): void {
    const packet = `42${JSON.stringify([event, data])}`;
    for (const [ws, state] of this.gatewaySockets) {
      if (state.organizationId === organizationId && ws.readyState === WS_OPEN) ws.send(packet);
    }
  }
}

/**
 * One reader channel of a session: the current command's bytes up to the end
 * token go to its labeler; the token (split across chunks or not) ends it.
 */
class OutputChannel {
  private pending: Buffer = Buffer.alloc(0);
  target: { labeler: LineLabeler; onEnd: () => void } | undefined;

  constructor(private readonly token: Buffer) {}

  push(chunk: Buffer): void {
    let data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    let at: number;
    while ((at = data.indexOf(this.token)) >= 0) {
      if (at > 0) this.target?.labeler.push(data.subarray(0, at));
      const ended = this.target;
      this.target = undefined;
      ended?.labeler.end();
      ended?.onEnd();
      data = data.subarray(at + this.token.length);
    }
    // Hold back what could be the start of the token.
    let keep = Math.min(this.token.length - 1, data.length);
    while (keep > 0 && !data.subarray(data.length - keep).equals(this.token.subarray(0, keep))) keep--;
    if (data.length - keep > 0) this.target?.labeler.push(data.subarray(0, data.length - keep));
    this.pending = Buffer.from(data.subarray(data.length - keep));
  }
}

/**
 * The daemon's labeler for one stream: complete lines, each behind the
 * stream's marker, NUL bytes dropped (bash's `read` cannot hold them); at the
 * end of the stream, a last line without a newline gets one.
 */
class LineLabeler {
  private partial: Buffer = Buffer.alloc(0);

  constructor(
    private readonly prefix: Buffer,
    private readonly emit: (labelled: Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    const data = this.partial.length > 0 ? Buffer.concat([this.partial, chunk]) : chunk;
    const parts: Buffer[] = [];
    let start = 0;
    let newline: number;
    while ((newline = data.indexOf(0x0a, start)) >= 0) {
      parts.push(this.prefix, withoutNul(data.subarray(start, newline + 1)));
      start = newline + 1;
    }
    this.partial = Buffer.from(data.subarray(start));
    if (parts.length > 0) this.emit(Buffer.concat(parts));
  }

  end(): void {
    if (this.partial.length > 0) this.emit(Buffer.concat([this.prefix, withoutNul(this.partial), Buffer.from("\n")]));
    this.partial = Buffer.alloc(0);
  }
}

function withoutNul(line: Buffer): Buffer {
  return line.includes(0) ? Buffer.from(line.filter((b) => b !== 0)) : line;
}

/** A socket that sends only its first `messages` messages (it still closes normally). */
function cutStream(ws: WsSocket, messages: number): WsSocket {
  let sent = 0;
  return {
    get readyState() {
      return ws.readyState;
    },
    send(data: Buffer | string): void {
      if (sent++ < messages) ws.send(data);
    },
    close: (code?: number, reason?: string) => ws.close(code, reason),
    terminate: () => ws.terminate(),
    on(event: string, listener: (...args: never[]) => void) {
      (ws.on as (e: string, l: (...args: never[]) => void) => WsSocket)(event, listener);
      return this;
    },
  } as WsSocket;
}

function sendLog(ws: WsSocket, chunk: Buffer): void {
  if (ws.readyState !== WS_OPEN) return;
  for (let at = 0; at < chunk.length; at += LOG_MESSAGE_BYTES) ws.send(chunk.subarray(at, at + LOG_MESSAGE_BYTES));
}

/** A labelled log split back into its streams, and both in order (markers removed). */
function splitLog(log: Buffer): { output: string; stdout: string; stderr: string } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const all: Buffer[] = [];
  let current: Buffer[] | undefined;
  let at = 0;
  while (at < log.length) {
    if (log[at] === 1 && log[at + 1] === 1 && log[at + 2] === 1) {
      current = out;
      at += 3;
      continue;
    }
    if (log[at] === 2 && log[at + 1] === 2 && log[at + 2] === 2) {
      current = err;
      at += 3;
      continue;
    }
    if (current) {
      current.push(log.subarray(at, at + 1));
      all.push(log.subarray(at, at + 1));
    }
    at++;
  }
  return { output: Buffer.concat(all).toString("utf8"), stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") };
}

function commandDto(command: StandInCommand): Record<string, unknown> {
  return { id: command.id, command: command.command, ...(command.complete && command.exitCode !== undefined ? { exitCode: command.exitCode } : {}) };
}

function send(res: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) }).end(text);
}

/**
 * The daemon's own tools, found on this process's PATH (not the sandbox's: a
 * test may give the sandbox a PATH without them, to see what the client does
 * when the image lacks a tool).
 */
function tool(name: string): string {
  const found = tools.get(name) ?? (process.env.PATH ?? "/usr/bin:/bin").split(":").map((dir) => join(dir, name)).find(isExecutable);
  if (found === undefined) throw new Error(`the stand-in needs ${name} on PATH`);
  tools.set(name, found);
  return found;
}
const tools = new Map<string, string>();

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function quote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Pids of the processes whose environment carries a sandbox's marker. */
function markedProcesses(sandboxId: string): number[] {
  const needle = Buffer.from(`${SANDBOX_MARKER}=${sandboxId}\0`);
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`);
      if (environ.includes(needle)) {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
        if (state !== "Z" && state !== "X") pids.push(Number(entry));
      }
    } catch {
      // Gone meanwhile, or not ours.
    }
  }
  return pids;
}

/** SIGKILL to every process of a sandbox (the marker survives setsid and re-parenting). */
function killMarked(sandboxId: string): void {
  for (const pid of markedProcesses(sandboxId)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
}
