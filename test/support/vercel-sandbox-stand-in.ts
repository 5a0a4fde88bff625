/**
 * A local stand-in for the Vercel Sandbox API, speaking the HTTP protocol
 * exactly as `@vercel/sandbox` 3.x uses it, so the backend's tests run the
 * real SDK end to end without an account:
 *
 * - `POST /v3/sandboxes` (image or default) and `POST /v2/sandboxes` (legacy
 *   `runtime`): create a sandbox and its first session;
 * - `POST /v2/sandboxes/sessions/:session/cmd`: start a command (detached: the
 *   answer is the command, its exit code null);
 * - `GET  /v2/sandboxes/sessions/:session/cmd/:cmd/logs`: its output as
 *   `application/x-ndjson` lines `{"stream":"stdout"|"stderr","data":"..."}`,
 *   from the start, followed until both pipes close; a session stopped meanwhile
 *   ends the stream with `{"stream":"error","data":{code,message}}`;
 * - `GET  /v2/sandboxes/sessions/:session/cmd/:cmd?wait=true`: held open until
 *   the process exits, then the command with its exit code;
 * - `POST /v2/sandboxes/sessions/:session/stop` and `DELETE /v2/sandboxes/:name`.
 *
 * Every call is authenticated like the real service (`Authorization: Bearer`,
 * `teamId` query parameter, `projectId` in the body) and recorded, headers and
 * body included, so tests can assert what the client sent. Errors use the
 * service's shape, `{"error":{"code","message"}}`.
 *
 * The "sandbox" is this machine: commands run for real (`spawn`, no shell in
 * between, each in a process group of its own) in a private temporary
 * directory that is also their `$HOME` and `$TMPDIR`, so exit codes, working
 * directories, timeouts killing a process tree, large, unicode and binary
 * output all behave as they really do. Output bytes are decoded as UTF-8 per
 * stream (invalid bytes become U+FFFD, as the JSON lines must carry strings).
 * Stopping a session kills every process carrying its marker variable and
 * deletes its directory.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StringDecoder } from "node:string_decoder";

/** One request as the stand-in received it. */
export interface RecordedRequest {
  method: string;
  /** Path without the `/api` prefix and without the query: `/v3/sandboxes`. */
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json?: unknown;
}

/** A token the stand-in accepts, and the team and project it may act for. */
export interface StandInCredential {
  token: string;
  teamId: string;
  projectId: string;
}

/** An error the next matching request gets instead of being served. */
interface InjectedFailure {
  method: string;
  path: RegExp;
  status: number;
  code: string;
  message: string;
}

type LogEntry = { stream: "stdout" | "stderr"; data: string } | { stream: "error"; data: { code: string; message: string } };

interface StandInCommand {
  id: string;
  sessionId: string;
  name: string;
  args: string[];
  cwd: string;
  startedAt: number;
  exitCode: number | null;
  durationMs?: number;
  child?: ChildProcess;
  logs: LogEntry[];
  /** Both pipes closed (or the session stopped): the log stream ends. */
  outputDone: boolean;
  logListeners: Set<(entry: LogEntry | null) => void>;
  exitWaiters: Set<() => void>;
}

interface StandInSession {
  id: string;
  sandboxName: string;
  status: "running" | "stopped";
  dir: string;
  cwd: string;
  createdAt: number;
  stoppedAt?: number;
  timeout: number;
  vcpus: number;
  region: string;
  runtime?: string;
  env: Record<string, string>;
  commands: Map<string, StandInCommand>;
  timer?: NodeJS.Timeout;
}

interface StandInSandbox {
  name: string;
  projectId: string;
  teamId: string;
  persistent: boolean;
  createdAt: number;
  /** The create request's body, as sent. */
  request: Record<string, unknown>;
  ports: number[];
  session: StandInSession;
  deleted: boolean;
}

/** The environment variable marking every process of a session (for cleanup on stop). */
const SESSION_MARKER = "VERCEL_STAND_IN_SESSION";

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class VercelSandboxStandIn {
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[] = [];
  /** Sandboxes by name (deleted ones stay, marked). */
  readonly sandboxes = new Map<string, StandInSandbox>();
  private readonly sessions = new Map<string, StandInSession>();
  private readonly failures: InjectedFailure[] = [];
  private readonly root: string;

  private constructor(
    private readonly server: Server,
    /** The base URL to use instead of `https://vercel.com/api`. */
    readonly apiUrl: string,
    private readonly credentials: StandInCredential[],
  ) {
    this.root = mkdtempSync(join(tmpdir(), "mibyan-vercel-stand-in-"));
  }

  /** Starts the stand-in on 127.0.0.1 (a free port), accepting `credentials`. */
  static async start(credentials: StandInCredential[]): Promise<VercelSandboxStandIn> {
    let standIn: VercelSandboxStandIn | undefined;
    const server = createServer((req, res) => {
      void standIn!.handle(req, res);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    standIn = new VercelSandboxStandIn(server, `http://127.0.0.1:${port}/api`, credentials);
    return standIn;
  }

  /** The next request matching `method` and `path` fails with this status and message. */
  failNext(method: string, path: RegExp, status: number, message: string, code = "injected_failure"): void {
    this.failures.push({ method, path, status, code, message });
  }

  /** Requests matching a method and a path pattern. */
  find(method: string, path: RegExp): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && path.test(r.path));
  }

  /** Ends a sandbox's session as its timeout would (processes killed, files gone). */
  expire(name: string): void {
    const sandbox = this.sandboxes.get(name);
    if (!sandbox) throw new Error(`no sandbox ${name}`);
    this.stopSession(sandbox.session, "sandbox_stopped", "The sandbox timed out");
  }

  /** Sandboxes whose session still runs. */
  running(): StandInSandbox[] {
    return [...this.sandboxes.values()].filter((s) => !s.deleted && s.session.status === "running");
  }

  async close(): Promise<void> {
    for (const session of this.sessions.values()) this.stopSession(session, "sandbox_stopped", "The stand-in is shutting down");
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.root, { recursive: true, force: true });
  }

  // ---------------------------------------------------------------- routing

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://stand-in");
    const path = url.pathname.replace(/^\/api(?=\/)/, "");
    const body = Buffer.concat(chunks).toString("utf8");
    const recorded: RecordedRequest = { method: req.method ?? "GET", path, query: Object.fromEntries(url.searchParams), headers: req.headers, body };
    if (body !== "") {
      try {
        recorded.json = JSON.parse(body);
      } catch {
        // recorded as text
      }
    }
    this.requests.push(recorded);
    try {
      const failure = this.failures.findIndex((f) => f.method === recorded.method && f.path.test(path));
      if (failure >= 0) {
        const [f] = this.failures.splice(failure, 1);
        throw new HttpError(f!.status, f!.code, f!.message);
      }
      const credential = this.authenticate(recorded);
      this.route(recorded, credential, res);
    } catch (err) {
      if (err instanceof HttpError) sendJson(res, err.status, { error: { code: err.code, message: err.message } });
      else sendJson(res, 500, { error: { code: "internal", message: (err as Error).message } });
    }
  }

  private authenticate(request: RecordedRequest): StandInCredential {
    const header = request.headers.authorization;
    const match = typeof header === "string" ? /^Bearer (.+)$/.exec(header) : null;
    const credential = match ? this.credentials.find((c) => c.token === match[1]) : undefined;
    if (!credential) throw new HttpError(403, "forbidden", "Not authorized: the token is missing, invalid or expired");
    if (request.query.teamId !== credential.teamId) throw new HttpError(403, "forbidden", `Not authorized for team ${request.query.teamId ?? "(none)"}`);
    return credential;
  }

  private route(request: RecordedRequest, credential: StandInCredential, res: ServerResponse): void {
    const { method, path } = request;
    let m: RegExpExecArray | null;
    if (method === "POST" && (path === "/v3/sandboxes" || path === "/v2/sandboxes")) {
      sendJson(res, 200, this.create(request, credential));
    } else if ((m = /^\/v2\/sandboxes\/sessions\/([^/]+)\/cmd$/.exec(path)) && method === "POST") {
      sendJson(res, 200, { command: commandJson(this.startCommand(this.session(m[1]!, credential, true), request)) });
    } else if ((m = /^\/v2\/sandboxes\/sessions\/([^/]+)\/cmd\/([^/]+)\/logs$/.exec(path)) && method === "GET") {
      const session = this.session(m[1]!, credential, false);
      this.streamLogs(session, command(session, m[2]!), res);
    } else if ((m = /^\/v2\/sandboxes\/sessions\/([^/]+)\/cmd\/([^/]+)$/.exec(path)) && method === "GET") {
      const session = this.session(m[1]!, credential, false);
      const cmd = command(session, m[2]!);
      if (request.query.wait === "true") this.waitForExit(session, cmd, res);
      else sendJson(res, 200, { command: commandJson(cmd) });
    } else if ((m = /^\/v2\/sandboxes\/sessions\/([^/]+)\/stop$/.exec(path)) && method === "POST") {
      const session = this.session(m[1]!, credential, false);
      this.stopSession(session, "sandbox_stopped", "The sandbox was stopped");
      const sandbox = this.sandboxes.get(session.sandboxName)!;
      sendJson(res, 200, { session: sessionJson(session), sandbox: sandboxJson(sandbox) });
    } else if ((m = /^\/v2\/sandboxes\/([^/]+)$/.exec(path)) && method === "DELETE") {
      const sandbox = this.sandboxes.get(decodeURIComponent(m[1]!));
      if (!sandbox || sandbox.deleted || sandbox.teamId !== credential.teamId) throw new HttpError(404, "not_found", "Sandbox not found");
      if (request.query.projectId !== undefined && request.query.projectId !== sandbox.projectId) throw new HttpError(404, "not_found", "Sandbox not found");
      this.stopSession(sandbox.session, "sandbox_stopped", "The sandbox was deleted");
      sandbox.deleted = true;
      sendJson(res, 200, { sandbox: sandboxJson(sandbox) });
    } else {
      throw new HttpError(404, "not_found", `The stand-in does not serve ${method} ${path}`);
    }
  }

  // ---------------------------------------------------------------- sandboxes

  private create(request: RecordedRequest, credential: StandInCredential): unknown {
    const body = (request.json ?? {}) as Record<string, unknown>;
    if (body.projectId !== credential.projectId) throw new HttpError(403, "forbidden", `Not authorized for project ${String(body.projectId)}`);
    if (request.path === "/v2/sandboxes" && typeof body.runtime !== "string") throw new HttpError(400, "bad_request", "runtime is required on /v2/sandboxes");
    if (body.runtime !== undefined && body.image !== undefined) throw new HttpError(400, "bad_request", "runtime and image cannot be used together");
    if (body.runtime !== undefined && !["node22", "node24", "node26", "python3.13"].includes(String(body.runtime))) {
      throw new HttpError(400, "bad_request", `Unknown runtime ${String(body.runtime)}`);
    }
    const name = typeof body.name === "string" ? body.name : `sbx-${randomBytes(6).toString("hex")}`;
    if (!/^[a-zA-Z0-9_-]{1,128}$/.test(name)) throw new HttpError(400, "bad_request", `Invalid sandbox name ${name}`);
    const existing = this.sandboxes.get(name);
    if (existing && !existing.deleted) throw new HttpError(409, "conflict", `A sandbox named ${name} already exists`);
    const resources = body.resources as { vcpus?: number } | undefined;
    const now = Date.now();
    const dir = mkdtempSync(join(this.root, "sandbox-"));
    mkdirSync(join(dir, "home"));
    mkdirSync(join(dir, "tmp"));
    const session: StandInSession = {
      id: `sess_${randomBytes(8).toString("hex")}`,
      sandboxName: name,
      status: "running",
      dir,
      cwd: dir,
      createdAt: now,
      timeout: typeof body.timeout === "number" ? body.timeout : 300_000,
      vcpus: resources?.vcpus ?? 2,
      region: typeof body.region === "string" ? body.region : "iad1",
      env: (body.env as Record<string, string> | undefined) ?? {},
      commands: new Map(),
      ...(typeof body.runtime === "string" ? { runtime: body.runtime } : {}),
    };
    session.timer = setTimeout(() => this.stopSession(session, "sandbox_stopped", "The sandbox timed out"), session.timeout);
    session.timer.unref();
    const sandbox: StandInSandbox = {
      name,
      projectId: credential.projectId,
      teamId: credential.teamId,
      persistent: body.persistent !== false,
      createdAt: now,
      request: body,
      ports: Array.isArray(body.ports) ? (body.ports as number[]) : [],
      session,
      deleted: false,
    };
    this.sandboxes.set(name, sandbox);
    this.sessions.set(session.id, session);
    return {
      sandbox: sandboxJson(sandbox),
      session: sessionJson(session),
      routes: sandbox.ports.map((port) => ({ url: `https://${name}-${port}.stand-in.invalid`, subdomain: `${name}-${port}`, port })),
    };
  }

  private session(id: string, credential: StandInCredential, mustRun: boolean): StandInSession {
    const session = this.sessions.get(id);
    const sandbox = session && this.sandboxes.get(session.sandboxName);
    if (!session || !sandbox || sandbox.teamId !== credential.teamId) throw new HttpError(404, "not_found", "Session not found");
    if (mustRun && session.status !== "running") throw new HttpError(410, "sandbox_stopped", "The sandbox has stopped");
    return session;
  }

  private stopSession(session: StandInSession, code: string, message: string): void {
    if (session.status !== "running") return;
    session.status = "stopped";
    session.stoppedAt = Date.now();
    clearTimeout(session.timer);
    killMarked(session.id);
    for (const cmd of session.commands.values()) {
      try {
        if (cmd.child?.pid !== undefined && cmd.exitCode === null) process.kill(-cmd.child.pid, "SIGKILL");
      } catch {
        // already gone
      }
      if (!cmd.outputDone) {
        cmd.outputDone = true;
        const entry: LogEntry = { stream: "error", data: { code, message } };
        cmd.logs.push(entry);
        for (const listener of cmd.logListeners) listener(entry);
        for (const listener of cmd.logListeners) listener(null);
        cmd.logListeners.clear();
      }
      for (const waiter of cmd.exitWaiters) waiter();
      cmd.exitWaiters.clear();
    }
    rmSync(session.dir, { recursive: true, force: true });
  }

  // ---------------------------------------------------------------- commands

  private startCommand(session: StandInSession, request: RecordedRequest): StandInCommand {
    const body = (request.json ?? {}) as { command?: unknown; args?: unknown; cwd?: unknown; env?: unknown };
    if (typeof body.command !== "string" || body.command === "") throw new HttpError(400, "bad_request", "command is required");
    const args = Array.isArray(body.args) ? body.args.map(String) : [];
    const cwd = typeof body.cwd === "string" ? (body.cwd.startsWith("/") ? body.cwd : join(session.cwd, body.cwd)) : session.cwd;
    const cmd: StandInCommand = {
      id: `cmd_${randomBytes(8).toString("hex")}`,
      sessionId: session.id,
      name: body.command,
      args,
      cwd,
      startedAt: Date.now(),
      exitCode: null,
      logs: [],
      outputDone: false,
      logListeners: new Set(),
      exitWaiters: new Set(),
    };
    session.commands.set(cmd.id, cmd);
    const push = (entry: LogEntry): void => {
      cmd.logs.push(entry);
      for (const listener of cmd.logListeners) listener(entry);
    };
    const child = spawn(cmd.name, args, {
      cwd,
      env: {
        PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
        HOME: join(session.dir, "home"),
        TMPDIR: join(session.dir, "tmp"),
        LANG: "C.UTF-8",
        ...session.env,
        ...(body.env as Record<string, string> | undefined),
        [SESSION_MARKER]: session.id,
      },
      stdio: ["ignore", "pipe", "pipe"],
      // A process group of its own, as the sandbox's exec gives each command.
      detached: true,
    });
    cmd.child = child;
    let open = 2;
    const finishOutput = (): void => {
      if (--open > 0 || cmd.outputDone) return;
      cmd.outputDone = true;
      for (const listener of cmd.logListeners) listener(null);
      cmd.logListeners.clear();
    };
    for (const stream of ["stdout", "stderr"] as const) {
      const decoder = new StringDecoder("utf8");
      const pipe = child[stream]!;
      pipe.on("data", (chunk: Buffer) => {
        const data = decoder.write(chunk);
        if (data !== "" && !cmd.outputDone) push({ stream, data });
      });
      pipe.on("close", () => {
        const rest = decoder.end();
        if (rest !== "" && !cmd.outputDone) push({ stream, data: rest });
        finishOutput();
      });
    }
    const exited = (code: number): void => {
      if (cmd.exitCode !== null) return;
      cmd.exitCode = code;
      cmd.durationMs = Date.now() - cmd.startedAt;
      for (const waiter of cmd.exitWaiters) waiter();
      cmd.exitWaiters.clear();
    };
    child.on("exit", (code, signal) => exited(code ?? 128 + signalNumber(signal)));
    child.on("error", (error) => {
      // The program could not be started: as a shell would report it.
      push({ stream: "stderr", data: `${cmd.name}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "command not found" : error.message}\n` });
      exited(127);
    });
    return cmd;
  }

  private streamLogs(session: StandInSession, cmd: StandInCommand, res: ServerResponse): void {
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    for (const entry of cmd.logs) res.write(`${JSON.stringify(entry)}\n`);
    if (cmd.outputDone || session.status !== "running") {
      res.end();
      return;
    }
    const listener = (entry: LogEntry | null): void => {
      if (entry === null) res.end();
      else res.write(`${JSON.stringify(entry)}\n`);
    };
    cmd.logListeners.add(listener);
    // The response's close (ended, or the client went away), not the socket's: keep-alive sockets serve many requests.
    res.once("close", () => cmd.logListeners.delete(listener));
  }

  private waitForExit(session: StandInSession, cmd: StandInCommand, res: ServerResponse): void {
    const answer = (): void => {
      if (cmd.exitCode !== null) sendJson(res, 200, { command: commandJson(cmd) });
      else sendJson(res, 410, { error: { code: "sandbox_stopped", message: "The sandbox stopped before the command finished" } });
    };
    if (cmd.exitCode !== null || session.status !== "running") {
      answer();
      return;
    }
    cmd.exitWaiters.add(answer);
    res.once("close", () => cmd.exitWaiters.delete(answer));
  }
}

function command(session: StandInSession, id: string): StandInCommand {
  const cmd = session.commands.get(id);
  if (!cmd) throw new HttpError(404, "not_found", "Command not found");
  return cmd;
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function commandJson(cmd: StandInCommand): unknown {
  return {
    id: cmd.id,
    name: cmd.name,
    args: cmd.args,
    cwd: cmd.cwd,
    sessionId: cmd.sessionId,
    exitCode: cmd.exitCode,
    startedAt: cmd.startedAt,
    ...(cmd.durationMs !== undefined ? { durationMs: cmd.durationMs } : {}),
  };
}

function sessionJson(session: StandInSession): unknown {
  return {
    id: session.id,
    memory: session.vcpus * 2048,
    vcpus: session.vcpus,
    region: session.region,
    timeout: session.timeout,
    status: session.status,
    requestedAt: session.createdAt,
    startedAt: session.createdAt,
    createdAt: session.createdAt,
    updatedAt: session.stoppedAt ?? session.createdAt,
    cwd: session.cwd,
    ...(session.runtime !== undefined ? { runtime: session.runtime } : {}),
    ...(session.stoppedAt !== undefined ? { stoppedAt: session.stoppedAt } : {}),
  };
}

function sandboxJson(sandbox: StandInSandbox): unknown {
  return {
    name: sandbox.name,
    persistent: sandbox.persistent,
    region: sandbox.session.region,
    vcpus: sandbox.session.vcpus,
    memory: sandbox.session.vcpus * 2048,
    timeout: sandbox.session.timeout,
    createdAt: sandbox.createdAt,
    updatedAt: sandbox.session.stoppedAt ?? sandbox.createdAt,
    currentSessionId: sandbox.session.id,
    status: sandbox.session.status,
    cwd: sandbox.session.cwd,
    ...(sandbox.session.runtime !== undefined ? { runtime: sandbox.session.runtime } : {}),
  };
}

function signalNumber(signal: NodeJS.Signals | null): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
  return (signal && numbers[signal]) ?? 0;
}

/** SIGKILL to every process whose environment carries the session's marker (it survives setsid and re-parenting). */
function killMarked(sessionId: string): void {
  const needle = Buffer.from(`${SESSION_MARKER}=${sessionId}\u0000`);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`);
      if (environ.includes(needle)) process.kill(Number(entry), "SIGKILL");
    } catch {
      // gone, or not ours to read
    }
  }
}
