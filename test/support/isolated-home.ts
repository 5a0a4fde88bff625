// Every test file runs with a profile home and a temporary directory of its own, removed
// when the file is done: nothing a test does (process checkpoints, receipts, approvals,
// background processes' directories) may reach the real ~/.mibyan or pile up in /tmp.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll } from "vitest";

// Inside the run's folder when there is one (global-temp.ts removes what a skipped file leaves behind).
const runRoot = process.env.MIBYAN_TEST_ROOT;
const base = runRoot !== undefined && existsSync(runRoot) ? mkdtempSync(`${runRoot}${path.sep}`) : mkdtempSync(path.join(tmpdir(), "mibyan-test-"));
if (!process.env.MIBYAN_HOME) {
  process.env.MIBYAN_HOME = path.join(base, "home");
  mkdirSync(process.env.MIBYAN_HOME);
}
// Short (`t`): unix sockets are made under it (global-temp.ts).
process.env.TMPDIR = path.join(base, "t");
// Background processes' control directories too (the default root is the machine-wide /tmp/mibyan-bg-<uid>).
if (!process.env.MIBYAN_PROCESS_ROOT) process.env.MIBYAN_PROCESS_ROOT = path.join(base, "bg");
mkdirSync(process.env.TMPDIR);

afterAll(() => {
  rmSync(base, { recursive: true, force: true, maxRetries: 3 });
});
