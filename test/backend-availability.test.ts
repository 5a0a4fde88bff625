// The terminal tool's availability reflects the backend it will actually use (issue 11): an unknown
// backend name, ssh without a host, docker without a daemon socket. And setBackend refuses unknown
// names at once. In-process checks read a real config.yaml in this file's profile home; the CLI cases
// run the built `mibyan tools --json` as real processes, each with a config.yaml in a temporary home.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import { clearConfigCache } from "../src/config/load-config.js";
import { BACKEND_NAMES, UnknownBackendError, isBackendName } from "../src/environments/backends.js";
import { EnvironmentManager, peekEnvironmentManager, setEnvironmentManager } from "../src/environments/manager.js";
import { ToolUnavailableError } from "../src/registry/availability.js";
import { terminalBackendAvailable } from "../src/tools/terminal.js";
import type { EnvironmentFactory } from "../src/environments/types.js";
import { findExecutable } from "../src/util/find-executable.js";
import { BIN, ROOT, cliEnv, spawnCollect } from "./support/cli-run.js";

const dirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

// A real unix socket with a listener: what a docker daemon's socket looks like to a stat.
let socketDir: string;
let socketPath: string;
let server: Server;
beforeAll(async () => {
  socketDir = tempDir("mibyan-sock-");
  socketPath = path.join(socketDir, "docker.sock");
  server = createServer((connection) => connection.destroy());
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const HAS_SSH = findExecutable("ssh") !== undefined;
const HAS_DOCKER_CLI = findExecutable("docker") !== undefined;

/** A custom backend's factory (never creates anything in these tests). */
const fakeFactory = (backend: string): EnvironmentFactory => ({
  backend,
  unavailableReason: () => undefined,
  create: () => Promise.reject(new Error("not in these tests")),
});

describe("setBackend refuses unknown names at once", () => {
  const manager = () => new EnvironmentManager({ idleTimeoutMs: 0, closeOnExit: false });

  it("an unknown name throws UnknownBackendError naming the close matches and the known backends", () => {
    const m = manager();
    let thrown: unknown;
    try {
      m.setBackend("t", "dokcer" as never);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UnknownBackendError);
    const error = thrown as UnknownBackendError;
    expect(error.name).toBe("UnknownBackendError");
    expect(error.backend).toBe("dokcer");
    expect(error.suggestions).toEqual(["docker"]);
    expect(error.known).toEqual([...BACKEND_NAMES]);
    expect(error.message).toBe(`Unknown terminal backend "dokcer". Did you mean: docker? Known backends: ${BACKEND_NAMES.join(", ")}.`);
    // Nothing was recorded: the task keeps the default.
    expect(m.backendFor("t")).toBe(m.defaultBackend());
  });

  it("prototype keys and non-strings are not backends", () => {
    const m = manager();
    for (const name of ["toString", "__proto__", "constructor", "", 42, null]) {
      expect(() => m.setBackend("t", name as never)).toThrow(UnknownBackendError);
    }
    expect(isBackendName("toString")).toBe(false);
    expect(isBackendName("docker")).toBe(true);
  });

  it("built-in names and registered custom backends are accepted; undefined returns the task to the default", () => {
    const m = new EnvironmentManager<"my_sandbox">({ idleTimeoutMs: 0, closeOnExit: false, defaultBackend: "local" });
    m.setBackend("a", "docker");
    expect(m.backendFor("a")).toBe("docker");
    expect(() => m.setBackend("b", "my_sandbox")).toThrow(UnknownBackendError);
    m.registerBackend(fakeFactory("my_sandbox"));
    m.setBackend("b", "my_sandbox");
    expect(m.backendFor("b")).toBe("my_sandbox");
    m.setBackend("a", undefined);
    expect(m.backendFor("a")).toBe("local");
  });

  it("a default backend naming nothing rejects get() with UnknownBackendError", async () => {
    const m = new EnvironmentManager({ idleTimeoutMs: 0, closeOnExit: false, defaultBackend: "nosuch" });
    await expect(m.get("t")).rejects.toBeInstanceOf(UnknownBackendError);
    expect(m.size).toBe(0);
  });
});

describe("terminal availability judges the configured backend", () => {
  const home = process.env.MIBYAN_HOME!;
  const configure = (yaml: string): void => {
    writeFileSync(path.join(home, "config.yaml"), yaml);
    clearConfigCache();
  };
  const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: tempDir("mibyan-avail-user-"), ...extra });
  /** The reason terminalBackendAvailable gives, or "available". */
  const verdict = (e: NodeJS.ProcessEnv = env()): string => {
    try {
      expect(terminalBackendAvailable(e)).toBe(true);
      return "available";
    } catch (err) {
      expect(err).toBeInstanceOf(ToolUnavailableError);
      return (err as Error).message;
    }
  };
  afterEach(() => {
    rmSync(path.join(home, "config.yaml"), { force: true });
    clearConfigCache();
  });

  it("an unknown backend name is unavailable, with close matches", () => {
    configure("terminal:\n  backend: nosuch\n");
    expect(verdict()).toBe(`the terminal backend "nosuch" (terminal.backend) is not a known backend (known: ${BACKEND_NAMES.join(", ")})`);
    configure("terminal:\n  backend: dokcer\n");
    expect(verdict()).toMatch(/^the terminal backend "dokcer" \(terminal\.backend\) is not a known backend; did you mean: docker\?/);
  });

  it.runIf(HAS_SSH)("ssh without a host is unavailable; a host from config.yaml or MIBYAN_SSH_HOST makes it available", () => {
    configure("terminal:\n  backend: ssh\n");
    expect(verdict()).toBe("the ssh backend has no host: set terminal.ssh.host in config.yaml (or MIBYAN_SSH_HOST)");
    expect(verdict(env({ MIBYAN_SSH_HOST: "127.0.0.1" }))).toBe("available");
    configure("terminal:\n  backend: ssh\n  ssh:\n    host: 127.0.0.1\n    port: 2222\n");
    expect(verdict()).toBe("available");
  });

  it("ssh without the ssh program names the program first", () => {
    configure("terminal:\n  backend: ssh\n  ssh:\n    host: 127.0.0.1\n");
    expect(verdict({ PATH: tempDir("mibyan-empty-path-") })).toBe("the ssh backend needs ssh on PATH");
  });

  it.runIf(HAS_DOCKER_CLI)("docker: a missing socket is unavailable, a listening socket available, a plain file is not a socket", () => {
    configure("terminal:\n  backend: docker\n  docker:\n    host: unix:///nonexistent/mibyan/docker.sock\n");
    expect(verdict()).toMatch(/^no Docker daemon: docker host unix:\/\/\/nonexistent\/mibyan\/docker\.sock: \/nonexistent\/mibyan\/docker\.sock does not exist/);
    configure(`terminal:\n  backend: docker\n  docker:\n    host: unix://${socketPath}\n`);
    expect(verdict()).toBe("available");
    const plain = path.join(tempDir("mibyan-plain-"), "docker.sock");
    writeFileSync(plain, "");
    configure(`terminal:\n  backend: docker\n  docker:\n    host: unix://${plain}\n`);
    expect(verdict()).toMatch(/is not a socket$/);
  });

  it.runIf(HAS_DOCKER_CLI)("docker: DOCKER_HOST and MIBYAN_DOCKER_HOST are read as the backend reads them (MIBYAN_ first)", () => {
    configure("terminal:\n  backend: docker\n");
    expect(verdict(env({ DOCKER_HOST: "unix:///nonexistent/d.sock" }))).toMatch(/\/nonexistent\/d\.sock does not exist/);
    expect(verdict(env({ DOCKER_HOST: `unix://${socketPath}` }))).toBe("available");
    expect(verdict(env({ DOCKER_HOST: `unix://${socketPath}`, MIBYAN_DOCKER_HOST: "unix:///nonexistent/m.sock" }))).toMatch(/m\.sock does not exist/);
    // Without DOCKER_HOST the CLI's default socket counts (absent on a machine without a docker daemon).
    const defaultVerdict = verdict(env());
    if (existsSync("/var/run/docker.sock")) expect(defaultVerdict).toBe("available");
    else expect(defaultVerdict).toMatch(/the default socket \(DOCKER_HOST is not set\): \/var\/run\/docker\.sock does not exist/);
  });

  it.runIf(HAS_DOCKER_CLI)("docker: remote hosts, contexts and podman are not judged without connecting", () => {
    configure("terminal:\n  backend: docker\n");
    expect(verdict(env({ DOCKER_HOST: "tcp://127.0.0.1:1" }))).toBe("available");
    expect(verdict(env({ DOCKER_CONTEXT: "remote" }))).toBe("available");
    const dockerConfig = tempDir("mibyan-docker-config-");
    writeFileSync(path.join(dockerConfig, "config.json"), JSON.stringify({ currentContext: "colima" }));
    expect(verdict(env({ DOCKER_CONFIG: dockerConfig }))).toBe("available");
  });

  it("docker: docker_path is the program checked; podman needs no daemon socket", () => {
    configure("terminal:\n  backend: docker\n  docker:\n    docker_path: /nonexistent/bin/docker\n");
    expect(verdict()).toBe("the docker backend needs /nonexistent/bin/docker on PATH (terminal.docker.docker_path)");
    const bin = tempDir("mibyan-podman-bin-");
    const podman = path.join(bin, "podman");
    writeFileSync(podman, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    configure(`terminal:\n  backend: docker\n  docker:\n    docker_path: ${podman}\n    host: unix:///nonexistent/podman.sock\n`);
    expect(verdict()).toBe("available");
    // podman-docker's shim: a small `docker` script that execs podman.
    const shim = path.join(bin, "docker");
    writeFileSync(shim, '#!/bin/sh\nexec podman "$@"\n', { mode: 0o755 });
    configure("terminal:\n  backend: docker\n");
    expect(verdict({ PATH: bin, HOME: tempDir("mibyan-avail-user-") })).toBe("available");
  });

  it("the process-wide manager's default backend and registered backends are what count", () => {
    const previous = peekEnvironmentManager();
    try {
      setEnvironmentManager(new EnvironmentManager({ defaultBackend: "my_sandbox", closeOnExit: false }));
      expect(verdict()).toMatch(/^the terminal backend "my_sandbox" \(terminal\.backend\) is not a known backend/);
      peekEnvironmentManager()!.registerBackend(fakeFactory("my_sandbox"));
      expect(verdict()).toBe("available");
    } finally {
      if (previous !== undefined) setEnvironmentManager(previous);
    }
  });

  it("a check is cheap: a thousand checks of a dead docker configuration take well under a second", () => {
    configure("terminal:\n  backend: docker\n  docker:\n    host: unix:///nonexistent/docker.sock\n");
    // Not a timing test of speed (that is bench's job): a guard that nothing spawns or connects.
    const started = process.hrtime.bigint();
    for (let i = 0; i < 1000; i++) verdict();
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(5_000);
  });
});

const HAS_DIST = existsSync(path.join(ROOT, "dist", "cli", "main.js"));

interface ToolsJson {
  toolsets: { name: string; available: boolean; tools: { name: string; available: boolean; reason: string | null }[] }[];
}

async function terminalStatus(config: string, extraEnv: Record<string, string> = {}) {
  const home = tempDir("mibyan-avail-home-");
  writeFileSync(path.join(home, "config.yaml"), config);
  const run = await spawnCollect(process.execPath, [BIN, "tools", "--json"], { env: { ...cliEnv(home, tempDir("mibyan-avail-user-")), DOCKER_HOST: "", ...extraEnv }, cwd: home });
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  const json = JSON.parse(run.stdout) as ToolsJson;
  const terminal = json.toolsets.find((t) => t.name === "terminal")!.tools.find((t) => t.name === "terminal")!;
  const text = await spawnCollect(process.execPath, [BIN, "tools"], { env: { ...cliEnv(home, tempDir("mibyan-avail-user-")), DOCKER_HOST: "", ...extraEnv }, cwd: home });
  return { terminal, text: text.stdout };
}

describe.runIf(HAS_DIST).concurrent("CLI: mibyan tools shows why the configured backend cannot work", () => {
  it.runIf(HAS_SSH)("ssh without a host", async () => {
    const { terminal, text } = await terminalStatus("terminal:\n  backend: ssh\n");
    expect(terminal).toEqual({ name: "terminal", available: false, reason: "the ssh backend has no host: set terminal.ssh.host in config.yaml (or MIBYAN_SSH_HOST)" });
    expect(text).toMatch(/💻 terminal\s+unavailable: the ssh backend has no host/);
  });

  it.runIf(HAS_SSH)("ssh with a host is listed as available", async () => {
    const { terminal } = await terminalStatus("terminal:\n  backend: ssh\n  ssh:\n    host: 127.0.0.1\n");
    expect(terminal).toEqual({ name: "terminal", available: true, reason: null });
  });

  it.runIf(HAS_DOCKER_CLI)("docker with a host pointing at a missing socket, and at a listening one", async () => {
    const missing = await terminalStatus("terminal:\n  backend: docker\n  docker:\n    host: unix:///nonexistent/mibyan/docker.sock\n");
    expect(missing.terminal.available).toBe(false);
    expect(missing.terminal.reason).toMatch(/^no Docker daemon: .*\/nonexistent\/mibyan\/docker\.sock does not exist/);
    const live = await terminalStatus("terminal:\n  backend: docker\n", { DOCKER_HOST: `unix://${socketPath}` });
    expect(live.terminal).toEqual({ name: "terminal", available: true, reason: null });
  });

  it("a backend name nosuch", async () => {
    const { terminal } = await terminalStatus("terminal:\n  backend: nosuch\n");
    expect(terminal.available).toBe(false);
    expect(terminal.reason).toBe(`the terminal backend "nosuch" (terminal.backend) is not a known backend (known: ${BACKEND_NAMES.join(", ")})`);
  });
});
