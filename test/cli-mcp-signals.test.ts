/**
 * A CLI killed by a signal while it has MCP servers running: the servers (and what they started) must
 * not outlive it, even a server that ignores its stdin closing and SIGTERM. Real CLI processes, a real
 * config.yaml and a stubborn stdio "server" that records its pid and its child's.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, cliEnv } from "./support/cli-run.js";
import { pidAlive, waitFor } from "./support/mcp.js";

const dirs: string[] = [];
const started: number[] = [];
afterAll(() => {
  // Whatever the outcome, nothing of this test keeps running.
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A stdio entry that never answers, ignores stdin's end and SIGTERM, and starts a child that does the same. */
const STUBBORN = `
const { appendFileSync } = require("node:fs");
const { spawn } = require("node:child_process");
const file = process.argv[1];
process.on("SIGTERM", () => {});
process.stdin.on("data", () => {});
process.stdin.on("end", () => {});
if (process.argv[2] !== "child") {
  spawn(process.execPath, ["-e", process.env.STUBBORN_SOURCE, file, "child"], { stdio: "ignore", env: process.env });
}
appendFileSync(file, process.pid + "\\n");
setInterval(() => {}, 1000);
`;

function pidsIn(file: string): number[] {
  return readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number);
}

describe.concurrent("a signal to the CLI ends its MCP servers", () => {
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    it(`${signal} during \`mibyan tools\`: the CLI dies of ${signal}, a stubborn server and its child are gone`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), "mibyan-cli-signal-"));
      dirs.push(dir);
      const pids = path.join(dir, "pids.txt");
      writeFileSync(pids, "");
      const args = ["-e", STUBBORN, pids].map((a) => JSON.stringify(a)).join(", ");
      writeFileSync(
        path.join(dir, "config.yaml"),
        `mcp_servers:\n  stubborn:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${args}]\n    env:\n      STUBBORN_SOURCE: ${JSON.stringify(STUBBORN)}\n`,
      );
      const cli = spawn(process.execPath, [BIN, "tools", "--json"], { env: cliEnv(dir, tmpdir()), cwd: dir, stdio: "ignore" });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => cli.once("exit", (code, sig) => resolve({ code, signal: sig })));
      try {
        await waitFor(() => pidsIn(pids).length >= 2, 8_000, "the server and its child started");
        started.push(...pidsIn(pids));
        cli.kill(signal);
        const end = await exited;
        expect(end.signal).toBe(signal);
        await waitFor(() => pidsIn(pids).every((pid) => !pidAlive(pid)), 3_000, "the server and its child gone");
      } finally {
        cli.kill("SIGKILL");
      }
    });
  }
});
