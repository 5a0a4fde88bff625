/**
 * Running the built `mibyan` CLI as a real child process in tests: the
 * environment it gets (its own profile home and user home, nothing from the
 * test runner that changes log level or colours) and collecting its output.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const BIN = path.join(ROOT, "bin", "mibyan.js");
/** Longest a CLI run may take before it is killed. */
export const PROCESS_TIMEOUT_MS = 15_000;

export interface CliRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The child's environment: MIBYAN_HOME and HOME point at the given (temporary) directories, never the real ones. */
export function cliEnv(home: string, userHome: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, MIBYAN_HOME: home, HOME: userHome };
  for (const name of ["MIBYAN_LOG_LEVEL", "FORCE_COLOR", "NO_COLOR", "CLICOLOR_FORCE"]) delete env[name];
  return env;
}

/**
 * Runs `command args`, feeding `input` on stdin; resolves once it exited and its pipes closed
 * (so a background process that kept them open would show as a hang), killed after PROCESS_TIMEOUT_MS.
 */
export function spawnCollect(command: string, args: readonly string[], options: { env: NodeJS.ProcessEnv; cwd: string; input?: string }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), PROCESS_TIMEOUT_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
    });
    child.stdin.on("error", () => {}); // the child may exit before reading stdin
    child.stdin.end(options.input ?? "");
  });
}
