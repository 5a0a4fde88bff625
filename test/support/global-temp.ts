// Vitest's global setup: names this run (MIBYAN_TEST_RUN, inherited by the test workers, which put
// it in their temporary folders' names, see isolated-home.ts) and removes the run's folders at the
// end. A file whose tests are all skipped never runs its afterAll, and its worker is ended with a
// signal, not an exit, so its folder would otherwise stay in /tmp.
import { randomBytes } from "node:crypto";
import { readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export default function setup(): () => void {
  const run = randomBytes(4).toString("hex");
  process.env.MIBYAN_TEST_RUN = run;
  return () => {
    const prefix = `mibyan-test-${run}-`;
    for (const name of readdirSync(tmpdir())) {
      if (name.startsWith(prefix)) rmSync(path.join(tmpdir(), name), { recursive: true, force: true, maxRetries: 3 });
    }
  };
}
