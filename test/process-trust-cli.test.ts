/**
 * Issue 10, "Process registry", through the real `mibyan` CLI: what a process
 * printed (and what a receipt file holds, hand-edited or not) reaches the
 * terminal without control bytes; a start with a profile home the user cannot
 * write fails up front, before anything runs.
 */

import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { ReceiptStore, receiptsDir } from "../src/process/receipts.js";
import type { ProcessReceipt } from "../src/process/types.js";
import { BIN, cliEnv, spawnCollect } from "./support/cli-run.js";

const distBuilt = existsSync(path.resolve("dist", "cli", "main.js"));
const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-trust-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// Anything a terminal acts on: C0 controls but \n and \t, DEL, C1 controls, bidi overrides.
// eslint-disable-next-line no-control-regex
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;

describe.skipIf(!distBuilt)("mibyan processes show (needs `npm run build`)", () => {
  it("strips control bytes from a receipt's output and fields before printing them", async () => {
    const home = mkdtempSync(path.join(scratch, "home-"));
    const nasty = "ok\u001b]0;pwned\u0007\u001b[2J\rline\bX\u009b31m\u202eevil\u0000\n";
    const receipt: ProcessReceipt = {
      version: 1,
      id: "proc_00000000c0de",
      owner: "s1",
      taskId: `t\u001b[31m`,
      backend: "local",
      command: `echo \u001b]52;c;cGF5bG9hZA==\u0007hi`,
      cwd: "/tmp",
      pid: 1234,
      pty: false,
      startedAt: new Date(Date.now() - 1000).toISOString(),
      endedAt: new Date().toISOString(),
      durationMs: 1000,
      exitCode: 0,
      ended: "exited",
      reason: "done\u001b[1A",
      output: nasty,
      outputBytes: nasty.length,
      outputTruncated: false,
      logPath: `/tmp/x\u0007/log`,
      writer: { pid: 1, startTime: "1", host: "h", instance: "i" },
    };
    await new ReceiptStore({ dir: receiptsDir(home) }).write(receipt);
    const run = await spawnCollect(process.execPath, [BIN, "processes", "show", receipt.id, "--session", "s1"], { env: cliEnv(home, mkdtempSync(path.join(scratch, "user-"))), cwd: home });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("okline");
    expect(run.stdout).not.toMatch(TERMINAL_CONTROLS);
    const list = await spawnCollect(process.execPath, [BIN, "processes", "--session", "s1"], { env: cliEnv(home, mkdtempSync(path.join(scratch, "user-"))), cwd: home });
    expect(list.stdout).toContain(receipt.id);
    expect(list.stdout).not.toMatch(TERMINAL_CONTROLS);
  });
});

const nobody = spawnSync("id", ["-u", "nobody"], { encoding: "utf8" }).stdout.trim();
const canDropPrivileges = process.getuid?.() === 0 && nobody !== "" && spawnSync("setpriv", ["--version"]).status === 0;

describe.skipIf(!distBuilt || !canDropPrivileges)("a profile home the user cannot write (needs root to run as nobody, and `npm run build`)", () => {
  it("fails the background start up front with a clear error, and nothing runs", async () => {
    // Everything the unprivileged CLI needs to read is world-readable; the home is not writable by it.
    const base = mkdtempSync(path.join("/tmp", "mibyan-trust-nobody-"));
    chmodSync(base, 0o755);
    const home = path.join(base, "home");
    mkdirSync(home, { mode: 0o755 });
    const marker = path.join(base, "ran");
    const userHome = path.join(base, "user");
    mkdirSync(userHome, { mode: 0o777 });
    chmodSync(userHome, 0o777);
    const env = { ...cliEnv(home, userHome), TMPDIR: userHome };
    const run = spawnSync(
      "setpriv",
      ["--reuid", nobody, "--regid", nobody, "--clear-groups", process.execPath, BIN, "call", "terminal", JSON.stringify({ command: `touch ${marker}; sleep 30`, background: true }), "--session", "s1"],
      { env, cwd: "/", encoding: "utf8", timeout: 30_000 },
    );
    try {
      const said = `${run.stdout}\n${run.stderr}`;
      expect(said).toMatch(/cannot be written/);
      expect(said).toMatch(/EACCES/);
      expect(said).toMatch(/Nothing was started/);
      await new Promise((r) => setTimeout(r, 500));
      expect(existsSync(marker)).toBe(false);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
