/**
 * A real OpenSSH server for the ssh backend's tests.
 *
 * `sshTestTarget()` returns where to connect: the `MIBYAN_TEST_SSH_*` variables
 * when they are set (CI starts a server with `scripts/ci/start-sshd.sh`),
 * otherwise a private sshd started here the same way (generated ed25519 host and
 * user keys, authorized_keys, known_hosts) on a free port of 127.0.0.1 in a temp
 * directory; `stop()` ends it and removes the directory. Undefined (with the
 * reason) when neither is possible.
 */

import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync, chmodSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

export interface SshTestTarget {
  host: string;
  port: number;
  user: string;
  /** Private key the server accepts. */
  identityFile: string;
  /** known_hosts file holding the server's host key. */
  knownHostsFile: string;
  /** Where this target came from, for messages. */
  source: "env" | "private";
  /** Stops a private server (no-op for one given by the environment). */
  stop(): Promise<void>;
}

export const SSHD_BINARY = process.env.MIBYAN_TEST_SSHD ?? "/usr/sbin/sshd";

export const HOW_TO_RUN_SSH_TESTS =
  "ssh backend tests need a real sshd: install openssh-server (apt-get install -y openssh-server) so the tests start a private one, " +
  "or start one with `eval \"$(scripts/ci/start-sshd.sh DIR)\"` and export the MIBYAN_TEST_SSH_HOST/_PORT/_USER/_KEY/_KNOWN_HOSTS it prints.";

/** The target described by `MIBYAN_TEST_SSH_*`, or undefined when they are not all set. */
export function targetFromEnv(env: NodeJS.ProcessEnv = process.env): SshTestTarget | undefined {
  const host = env.MIBYAN_TEST_SSH_HOST;
  const key = env.MIBYAN_TEST_SSH_KEY;
  const known = env.MIBYAN_TEST_SSH_KNOWN_HOSTS;
  if (!host || !key || !known) return undefined;
  return {
    host,
    port: Number(env.MIBYAN_TEST_SSH_PORT ?? 22),
    user: env.MIBYAN_TEST_SSH_USER ?? userInfo().username,
    identityFile: key,
    knownHostsFile: known,
    source: "env",
    stop: async () => undefined,
  };
}

function hasBinary(name: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Why a private sshd cannot be started here, or undefined. */
export function privateSshdProblem(): string | undefined {
  if (!existsSync(SSHD_BINARY)) return `${SSHD_BINARY} not found`;
  if (!hasBinary("ssh")) return "the OpenSSH client (ssh) is not installed";
  if (!hasBinary("ssh-keygen")) return "ssh-keygen is not installed";
  if (process.getuid?.() !== 0) return "a private sshd needs root here (privilege separation directory /run/sshd)";
  return undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function keygen(file: string, comment: string): void {
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", file], { stdio: "ignore" });
}

/** Waits until the server sends its SSH banner. */
async function waitForBanner(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`sshd exited with code ${child.exitCode}: ${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.setTimeout(1_000);
      socket.once("data", (data) => {
        socket.destroy();
        resolve(data.toString("latin1").startsWith("SSH-"));
      });
      socket.once("error", () => resolve(false));
      socket.once("timeout", () => {
        socket.destroy();
        resolve(false);
      });
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`sshd did not answer on 127.0.0.1:${port} within 10 s: ${log()}`);
}

/**
 * Starts a private sshd (as scripts/ci/start-sshd.sh does) in the foreground (`-D`),
 * so it is ours to stop. Extra `-o` options may be given (e.g. a different host key).
 */
export async function startPrivateSshd(): Promise<SshTestTarget> {
  const dir = mkdtempSync(join(tmpdir(), "mibyan-sshd-"));
  chmodSync(dir, 0o700);
  keygen(join(dir, "host"), "mibyan-test-host");
  keygen(join(dir, "user"), "mibyan-test-user");
  copyFileSync(join(dir, "user.pub"), join(dir, "authorized_keys"));
  const port = await freePort();
  const [keyType, keyData] = readFileSync(join(dir, "host.pub"), "utf8").trim().split(/\s+/);
  writeFileSync(join(dir, "known_hosts"), `[127.0.0.1]:${port} ${keyType} ${keyData}\n`);
  mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const args = [
    "-D",
    "-e",
    "-f",
    "/dev/null",
    ...["Port=" + port, "ListenAddress=127.0.0.1", `HostKey=${join(dir, "host")}`, `AuthorizedKeysFile=${join(dir, "authorized_keys")}`]
      .concat([`PidFile=${join(dir, "sshd.pid")}`, "PasswordAuthentication=no", "KbdInteractiveAuthentication=no"])
      .concat(["PermitRootLogin=prohibit-password", "StrictModes=no", "UsePAM=no", "SetEnv=SHLVL=1", "MaxStartups=100", "MaxSessions=100"])
      .flatMap((option) => ["-o", option]),
  ];
  const child = spawn(SSHD_BINARY, args, { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    log = (log + chunk.toString("utf8")).slice(-4_000);
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForBanner(port, child, () => log);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    host: "127.0.0.1",
    port,
    user: userInfo().username,
    identityFile: join(dir, "user"),
    knownHostsFile: join(dir, "known_hosts"),
    source: "private",
    stop,
  };
}

/** The environment's server, else a private one, else undefined with the reason. */
export async function sshTestTarget(): Promise<{ target?: SshTestTarget; reason?: string }> {
  const fromEnv = targetFromEnv();
  if (fromEnv) return { target: fromEnv };
  const problem = privateSshdProblem();
  if (problem !== undefined) return { reason: problem };
  return { target: await startPrivateSshd() };
}
