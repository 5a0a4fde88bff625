/**
 * What background processes must do on every backend, as one vitest
 * `describe` block over a way to create a task's environment. The registry
 * runs everything through `Environment.exec`, so a backend passes this when
 * its environment has bash, `setsid`, `mkfifo`, `stat`, `tail` and `head`
 * (and util-linux `script` for the PTY test, skipped with `pty: false`).
 */

import { randomBytes } from "node:crypto";

import { afterEach, describe, expect, it } from "vitest";

import { ProcessNotFoundError, ProcessRegistry } from "../../src/process/process-registry.js";
import type { Environment } from "../../src/environments/types.js";

export interface ProcessContractOptions {
  skip?: string;
  /** Run the PTY test (needs `script` in the environment). Default true. */
  pty?: boolean;
  testTimeoutMs?: number;
}

export function processContract(name: string, makeEnvironment: (taskId: string) => Promise<Environment>, options: ProcessContractOptions = {}): void {
  const title = `background processes: ${name}`;
  if (options.skip !== undefined) {
    describe.skip(`${title} (skipped: ${options.skip})`, () => {
      it("needs the backend", () => {});
    });
    return;
  }
  const timeout = options.testTimeoutMs ?? 30_000;
  const run = randomBytes(3).toString("hex");
  let counter = 0;
  const open: Environment[] = [];
  const registries: ProcessRegistry[] = [];

  async function setup(): Promise<{ env: Environment; registry: ProcessRegistry }> {
    const env = await makeEnvironment(`proc-${++counter}-${run}`);
    open.push(env);
    const registry = new ProcessRegistry({ pollIntervalMs: 0, waitIntervalMs: 100, killGraceMs: 1_000 });
    registries.push(registry);
    return { env, registry };
  }

  describe(title, () => {
    afterEach(async () => {
      await Promise.all(registries.splice(0).map((registry) => registry.dispose()));
      await Promise.allSettled(open.splice(0).map((e) => e.close()));
    });

    it("runs a command in the background and reports its output and exit code", { timeout }, async () => {
      const { env, registry } = await setup();
      const info = await registry.start(env, "echo one; sleep 0.3; echo two >&2; exit 6", { sessionId: "s" });
      expect(info.status).toBe("running");
      const done = await registry.wait("s", info.id, timeout - 5_000);
      expect(done).toMatchObject({ status: "exited", exitCode: 6, output: "one\ntwo\n" });
    });

    it("kills the process and everything it started", { timeout }, async () => {
      const { env, registry } = await setup();
      const info = await registry.start(env, "sleep 300 & sleep 301 & echo up; wait", { sessionId: "s" });
      await expect.poll(async () => (await registry.poll("s", info.id)).preview, { timeout: 10_000 }).toBe("up\n");
      expect((await registry.kill("s", info.id)).status).toBe("killed");
      const left = await env.exec(`ps -o pid= -g ${info.pid} 2>/dev/null || true; for p in /proc/[0-9]*/stat; do read -r l < "$p" 2>/dev/null || continue; f=(\${l##*) }); [ "\${f[2]}" = ${info.pid} ] && [ "\${f[0]}" != Z ] && echo "left \${p}"; done; true`, { timeoutMs: 10_000, maxOutputChars: 10_000 });
      expect(left.output).not.toMatch(/left/);
    });

    it("feeds input and ends it", { timeout }, async () => {
      const { env, registry } = await setup();
      const info = await registry.start(env, 'read -r a; echo "a=$a"; cat; echo eof', { sessionId: "s" });
      await registry.submit("s", info.id, "42");
      await registry.write("s", info.id, "more\n");
      await registry.closeInput("s", info.id);
      expect(await registry.wait("s", info.id, timeout - 5_000)).toMatchObject({ status: "exited", exitCode: 0, output: "a=42\nmore\neof\n" });
    });

    it("reads the log by lines", { timeout }, async () => {
      const { env, registry } = await setup();
      const info = await registry.start(env, "seq 1 300", { sessionId: "s" });
      await registry.wait("s", info.id, timeout - 5_000);
      expect(await registry.log("s", info.id, { limit: 2 })).toEqual({ from: 299, lines: ["299", "300"], totalLines: 300 });
    });

    it("keeps processes to their session", { timeout }, async () => {
      const { env, registry } = await setup();
      const info = await registry.start(env, "sleep 20", { sessionId: "owner" });
      await expect(registry.poll("other", info.id)).rejects.toBeInstanceOf(ProcessNotFoundError);
      await expect(registry.kill("other", info.id)).rejects.toBeInstanceOf(ProcessNotFoundError);
      expect((await registry.poll("owner", info.id)).status).toBe("running");
      await registry.kill("owner", info.id);
    });

    it.skipIf(options.pty === false)("runs on a pseudo-terminal and takes answers to its prompt", { timeout }, async () => {
      const { env, registry } = await setup();
      const info = await registry.start(env, `[ -t 0 ] && echo tty; read -r -p 'Answer? ' x; echo "got $x"`, { sessionId: "s", pty: true });
      await expect.poll(async () => (await registry.poll("s", info.id)).preview, { timeout: 10_000 }).toContain("Answer? ");
      await registry.submit("s", info.id, "yes");
      const done = await registry.wait("s", info.id, timeout - 5_000);
      expect(done.exitCode).toBe(0);
      expect(done.output.replace(/\r/g, "")).toBe("tty\nAnswer? yes\ngot yes\n");
    });
  });
}
