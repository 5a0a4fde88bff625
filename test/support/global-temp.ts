// Vitest's global setup: one folder for the whole run (MIBYAN_TEST_ROOT, inherited by the test
// workers, which make their own folders inside it, see isolated-home.ts), removed at the end. A file
// whose tests are all skipped never runs its afterAll, and its worker is ended with a signal, not an
// exit, so its folder would otherwise stay in /tmp.
//
// The name is short on purpose: a worker's TMPDIR is `<root>/XXXXXX/t`, at most 28 characters under
// /tmp, so unix sockets made under it (the ssh backend's control socket: sun_path holds 107 bytes)
// stay inside the run's folder.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export default function setup(): () => void {
  const root = mkdtempSync(path.join(tmpdir(), "mibtest-"));
  process.env.MIBYAN_TEST_ROOT = root;
  return () => rmSync(root, { recursive: true, force: true, maxRetries: 3 });
}
