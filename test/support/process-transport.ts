/**
 * A `SandboxTransport` whose "sandbox" is this machine: `start` spawns the argv
 * as a local child process (stdin closed, stdout and stderr both delivered).
 * It tests `SandboxEnvironment` on its own, without any vendor in between, and
 * records what it was asked to do.
 */

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import type { SandboxCommand, SandboxCommandEnd, SandboxTransport } from "../../src/environments/sandbox-transport.js";

export class ProcessTransport implements SandboxTransport {
  readonly description: string;
  /** Every argv started, in order. */
  readonly started: string[][] = [];
  closed = 0;
  /** The sandbox's home directory (deleted on close). */
  readonly home: string;
  /** Report no exit codes (as some transports cannot), so only the trailer tells. */
  hideExitCodes = false;

  constructor(taskId: string) {
    this.home = mkdtempSync(join(tmpdir(), "mibyan-proc-sandbox-"));
    this.description = `local process sandbox ${taskId}`;
  }

  async start(argv: readonly string[], onOutput: (chunk: Uint8Array) => void): Promise<SandboxCommand> {
    if (this.closed > 0) throw new Error(`${this.description} was deleted`);
    this.started.push([...argv]);
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: this.home,
      // Its own TMPDIR, so the state files the sandbox scripts make go away with the test.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: this.home, LANG: "C.UTF-8", TMPDIR: this.home },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let settle: (end: SandboxCommandEnd) => void = () => undefined;
    const done = new Promise<SandboxCommandEnd>((resolve) => (settle = resolve));
    child.stdout.on("data", onOutput);
    child.stderr.on("data", onOutput);
    child.on("error", (error) => settle({ exitCode: null, error }));
    child.on("close", (code) => settle({ exitCode: this.hideExitCodes ? null : code }));
    return {
      done,
      detach: () => {
        child.stdout.destroy();
        child.stderr.destroy();
        settle({ exitCode: null });
      },
    };
  }

  async close(): Promise<void> {
    this.closed++;
    rmSync(this.home, { recursive: true, force: true });
  }
}
