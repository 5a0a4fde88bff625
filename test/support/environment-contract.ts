/**
 * The behaviours every terminal backend must share, as one vitest `describe`
 * block. A backend's test file calls it once with a way to create an
 * environment for a task:
 *
 *     environmentContract("docker", (taskId) => dockerFactory.create(taskId), {
 *       skip: engineProblem, // a string skips the block and says why
 *     });
 *
 * Each test creates the environments it needs with fresh task ids
 * (`contract-<n>-<random>`) and closes them afterwards, so `makeEnvironment`
 * may be called many times (and concurrently). Commands use only bash and
 * tools every Linux image has (`mktemp`, `rm`, `sleep`, `head`, `yes`, `tr`,
 * `seq`); process checks read `/proc`, so the environment must be Linux.
 *
 * Binary output: bytes that are not valid UTF-8 are decoded to U+FFFD (the
 * replacement character), NUL bytes stay "\u0000" in `ExecResult.output`
 * (the terminal tool's `cleanTerminalOutput` drops them later); nothing throws.
 */

import { randomBytes } from "node:crypto";

import { afterEach, describe, expect, it } from "vitest";

import type { Environment, ExecOptions, ExecResult } from "../../src/environments/types.js";

export interface EnvironmentContractOptions {
  /** When set, the whole block is skipped and its title says why (e.g. "no docker engine here"). */
  skip?: string;
  /** Per-test time limit in ms (remote backends are slower). Default 30 000. */
  testTimeoutMs?: number;
  /** Output cap used by the tests (except the large-output one). Default 100 000. */
  maxOutputChars?: number;
}

const OMISSION = /\[\.\.\. (\d+) characters omitted \.\.\.\]/;

export function environmentContract(
  name: string,
  makeEnvironment: (taskId: string) => Promise<Environment>,
  options: EnvironmentContractOptions = {},
): void {
  const title = `environment contract: ${name}`;
  if (options.skip !== undefined) {
    describe.skip(`${title} (skipped: ${options.skip})`, () => {
      it("needs the backend", () => {});
    });
    return;
  }

  const testTimeout = options.testTimeoutMs ?? 30_000;
  const cap = options.maxOutputChars ?? 100_000;
  const run = randomBytes(3).toString("hex");
  let counter = 0;
  const open: Environment[] = [];

  async function env(): Promise<Environment> {
    const taskId = `contract-${++counter}-${run}`;
    const e = await makeEnvironment(taskId);
    open.push(e);
    return e;
  }

  function exec(e: Environment, command: string, extra: Partial<ExecOptions> = {}): Promise<ExecResult> {
    return e.exec(command, { timeoutMs: 20_000, maxOutputChars: cap, ...extra });
  }

  /** A fresh directory inside the environment (removed with `cleanup`). */
  async function scratchDir(e: Environment): Promise<string> {
    const r = await exec(e, "mktemp -d", { cwd: "/" });
    expect(r.exitCode, r.output).toBe(0);
    const dir = r.output.trim();
    expect(dir.startsWith("/")).toBe(true);
    return dir;
  }

  describe(title, () => {
    afterEach(async () => {
      const envs = open.splice(0);
      await Promise.allSettled(envs.map((e) => e.close()));
    });

    it("describes itself", { timeout: testTimeout }, async () => {
      const e = await env();
      expect(typeof e.backend).toBe("string");
      expect(e.backend).not.toBe("");
      expect(e.taskId).toMatch(/^contract-\d+-/);
      expect(e.isolation.name).toBe(e.backend);
      expect(e.cwd.startsWith("/")).toBe(true);
    });

    it("reports exit codes 0, 1 and 42", { timeout: testTimeout }, async () => {
      const e = await env();
      const ok = await exec(e, "true");
      expect(ok).toMatchObject({ output: "", exitCode: 0, timedOut: false, aborted: false, truncated: false });
      expect(typeof ok.durationMs).toBe("number");
      expect((await exec(e, "false")).exitCode).toBe(1);
      expect((await exec(e, "exit 42")).exitCode).toBe(42);
      expect((await exec(e, "(exit 42)")).exitCode).toBe(42);
    });

    it("merges stdout and stderr in the order they were written", { timeout: testTimeout }, async () => {
      const e = await env();
      const r = await exec(e, "echo out1; echo err1 >&2; echo out2; printf 'err2\\n' >&2; echo out3");
      expect(r.output).toBe("out1\nerr1\nout2\nerr2\nout3\n");
      expect(r.totalChars).toBe(r.output.length);
    });

    it("passes the command through unchanged: quotes, $, backslashes, several lines", { timeout: testTimeout }, async () => {
      const e = await env();
      const r = await exec(e, `printf '%s\\n' "a'b" 'c"d' '$HOME' 'e\\f' "\\$x" \`echo back\`\necho "line $((40 + 2))"\n\necho $# "$1"`);
      expect(r.output).toBe(`a'b\nc"d\n$HOME\ne\\f\n$x\nback\nline 42\n0 \n`);
      expect(r.exitCode).toBe(0);
    });

    it("reports a syntax error (exit 2) and keeps working", { timeout: testTimeout }, async () => {
      const e = await env();
      const dir = await scratchDir(e);
      await exec(e, `cd ${dir}`);
      const bad = await exec(e, "if then fi");
      expect(bad.exitCode).toBe(2);
      expect(bad.output).toMatch(/syntax error/);
      expect((await exec(e, "pwd")).output).toBe(`${dir}\n`);
      await exec(e, `rm -rf ${dir}`, { cwd: "/" });
    });

    it("keeps the working directory across calls of a task, and only of that task", { timeout: testTimeout }, async () => {
      const [a, b] = await Promise.all([env(), env()]);
      const startB = (await exec(b, "pwd")).output;
      const dir = await scratchDir(a);
      const r = await exec(a, `mkdir -p "${dir}/sub dir" && cd "${dir}/sub dir" && pwd`);
      expect(r.output).toBe(`${dir}/sub dir\n`);
      expect(a.cwd).toBe(`${dir}/sub dir`);
      expect((await exec(a, "pwd")).output).toBe(`${dir}/sub dir\n`);
      expect((await exec(a, "cd ..; pwd")).output).toBe(`${dir}\n`);
      expect((await exec(a, "cd -")).output).toBe(`${dir}/sub dir\n`);
      // Another task never sees it.
      expect((await exec(b, "pwd")).output).toBe(startB);
      expect(b.cwd).not.toBe(a.cwd);
      await exec(a, `rm -rf ${dir}`, { cwd: "/" });
    });

    it("saves the state of a command that calls exit", { timeout: testTimeout }, async () => {
      const e = await env();
      const dir = await scratchDir(e);
      const r = await exec(e, `cd ${dir}; export MIBYAN_CONTRACT_EXIT=yes; exit 3`);
      expect(r.exitCode).toBe(3);
      expect((await exec(e, 'pwd; echo "$MIBYAN_CONTRACT_EXIT"')).output).toBe(`${dir}\nyes\n`);
      await exec(e, `rm -rf ${dir}`, { cwd: "/" });
    });

    it("carries exported variables (and unsets) within a task, never to another", { timeout: testTimeout }, async () => {
      const [a, b] = await Promise.all([env(), env()]);
      const value = `a b 'c' "d" $e \\f\nsecond line ✓`;
      await exec(a, `export MIBYAN_CONTRACT_A=${shQuote(value)} MIBYAN_CONTRACT_GONE=1; MIBYAN_CONTRACT_LOCAL=1; unset HOME`);
      const r = await exec(a, `printf '%s|' "$MIBYAN_CONTRACT_A" "\${MIBYAN_CONTRACT_LOCAL-unset}" "\${HOME-unset}"`);
      expect(r.output).toBe(`${value}|unset|unset|`);
      await exec(a, "unset MIBYAN_CONTRACT_GONE");
      expect((await exec(a, 'echo "${MIBYAN_CONTRACT_GONE-unset}"')).output).toBe("unset\n");
      // The other task.
      const other = await exec(b, `echo "\${MIBYAN_CONTRACT_A-unset} \${HOME:+home}"`);
      expect(other.output).toBe("unset home\n");
      // Child processes see exported variables.
      expect((await exec(a, "bash -c 'echo \"$MIBYAN_CONTRACT_A\"' | head -n 1")).output).toBe("a b 'c' \"d\" $e \\f\n");
    });

    it("does not trip over special or readonly variables", { timeout: testTimeout }, async () => {
      const e = await env();
      const r = await exec(e, "export SHLVL=7 PWD=/nonexistent OLDPWD=/nonexistent SHELLOPTS BASHOPTS _=x; declare -rx MIBYAN_CONTRACT_RO=1; set -eux; echo done");
      expect(r.exitCode).toBe(0);
      expect(r.output).toMatch(/done\n$/);
      const next = await exec(e, 'echo "$MIBYAN_CONTRACT_RO ${SHLVL:+lvl}"; case $- in *x*) echo traced;; *) echo clean;; esac');
      expect(next.exitCode).toBe(0);
      expect(next.output).toBe("1 lvl\nclean\n");
    });

    it("runs one command elsewhere with cwd, without moving the task", { timeout: testTimeout }, async () => {
      const e = await env();
      const [home, other] = [await scratchDir(e), await scratchDir(e)];
      await exec(e, `cd ${home}`);
      const r = await exec(e, "pwd; cd /; export MIBYAN_CONTRACT_OVERRIDE=kept", { cwd: other });
      expect(r.output).toBe(`${other}\n`);
      expect(e.cwd).toBe(home);
      expect((await exec(e, 'pwd; echo "$MIBYAN_CONTRACT_OVERRIDE"')).output).toBe(`${home}\nkept\n`);
      const missing = await exec(e, "echo should-not-run", { cwd: `${other}/missing` });
      expect(missing.exitCode).toBe(1);
      expect(missing.output).not.toMatch(/should-not-run/);
      await exec(e, `rm -rf ${home} ${other}`, { cwd: "/" });
    });

    it("runs a helper command in the task's state without changing it (saveState: false)", { timeout: testTimeout }, async () => {
      const e = await env();
      const dir = await scratchDir(e);
      await exec(e, `cd ${dir}; export MIBYAN_CONTRACT_KEEP=before`);
      const r = await exec(e, 'pwd; echo "$MIBYAN_CONTRACT_KEEP"; cd /; export MIBYAN_CONTRACT_KEEP=after', { saveState: false });
      expect(r.output).toBe(`${dir}\nbefore\n`);
      expect((await exec(e, 'pwd; echo "$MIBYAN_CONTRACT_KEEP"')).output).toBe(`${dir}\nbefore\n`);
      expect(e.cwd).toBe(dir);
      await exec(e, `rm -rf ${dir}`, { cwd: "/" });
    });

    it("falls back when the task's directory was deleted", { timeout: testTimeout }, async () => {
      const a = await env();
      const dir = await scratchDir(a);
      await exec(a, `cd ${dir}`);
      // Deleted from elsewhere (a one-off directory does not move the task).
      expect((await exec(a, `rmdir ${dir}`, { cwd: "/" })).exitCode).toBe(0);
      const r = await exec(a, "echo ran; pwd");
      expect(r.exitCode).toBe(0);
      expect(r.output).toMatch(new RegExp(`^mibyan: working directory ${escapeRegExp(dir)} is not available; running in (/.*)\\nran\\n`));
      expect(a.cwd).not.toBe(dir);
    });

    it("kills the whole process tree on timeout and reports 124", { timeout: testTimeout }, async () => {
      const e = await env();
      const started = Date.now();
      const r = await exec(e, "sleep 30 & echo PID=$!; bash -c 'sleep 31' & sleep 32", { timeoutMs: 1_000 });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(r.exitCode).toBe(124);
      expect(r.timedOut).toBe(true);
      expect(r.aborted).toBe(false);
      const pid = Number(/PID=(\d+)/.exec(r.output)?.[1]);
      expect(pid).toBeGreaterThan(0);
      expect((await exec(e, processGone(pid))).output).toBe("gone\n");
      // The environment still works afterwards.
      expect((await exec(e, "echo alive")).output).toBe("alive\n");
    });

    it("kills the command on abort and reports 130", { timeout: testTimeout }, async () => {
      const e = await env();
      const ac = new AbortController();
      const pending = exec(e, "echo started; sleep 30 & echo PID=$!; sleep 30", { signal: ac.signal });
      setTimeout(() => ac.abort(), 500);
      const r = await pending;
      expect(r.exitCode).toBe(130);
      expect(r.aborted).toBe(true);
      expect(r.timedOut).toBe(false);
      const pid = Number(/PID=(\d+)/.exec(r.output)?.[1]);
      if (pid > 0) expect((await exec(e, processGone(pid))).output).toBe("gone\n");
      // Already aborted: nothing runs.
      const dir = await scratchDir(e);
      const before = await exec(e, `touch ${dir}/ran`, { signal: AbortSignal.abort() });
      expect(before.exitCode).toBe(130);
      expect(before.aborted).toBe(true);
      expect((await exec(e, `ls -A ${dir}; rm -rf ${dir}`)).output).toBe("");
    });

    it("caps 5 MB of output to a head and a tail", { timeout: testTimeout }, async () => {
      const e = await env();
      const max = 10_000;
      const r = await exec(e, "echo FIRST; yes 0123456789 | head -n 454546; echo LAST", { maxOutputChars: max, headRatio: 0.2 });
      expect(r.exitCode).toBe(0);
      expect(r.truncated).toBe(true);
      expect(r.totalChars).toBeGreaterThanOrEqual(5_000_000);
      expect(r.output.startsWith("FIRST\n0123456789\n")).toBe(true);
      expect(r.output.endsWith("0123456789\nLAST\n")).toBe(true);
      const omitted = Number(OMISSION.exec(r.output)?.[1]);
      expect(omitted).toBeGreaterThan(4_900_000);
      expect(r.output.length).toBeLessThan(max + 100);
    });

    it("returns unicode output intact", { timeout: testTimeout }, async () => {
      const e = await env();
      const text = "héllo wörld ✓ 日本語 🎉 مرحبا";
      const r = await exec(e, `printf '%s\\n' '${text}'; echo '${text}' >&2`);
      expect(r.output).toBe(`${text}\n${text}\n`);
    });

    it("survives binary output (invalid UTF-8 becomes U+FFFD)", { timeout: testTimeout }, async () => {
      const e = await env();
      const r = await exec(e, "printf 'A\\377\\376B\\000C\\200\\n'");
      expect(r.exitCode).toBe(0);
      expect(r.output).toBe("A\uFFFD\uFFFDB\u0000C\uFFFD\n");
      const noise = await exec(e, "head -c 200000 /dev/urandom; echo; echo END", { maxOutputChars: 5_000 });
      expect(noise.exitCode).toBe(0);
      expect(noise.output.endsWith("END\n")).toBe(true);
    });

    it("closes idempotently and is unusable afterwards", { timeout: testTimeout }, async () => {
      const e = await env();
      expect((await exec(e, "echo hi")).output).toBe("hi\n");
      await e.close();
      await e.close();
      await expect(exec(e, "echo again")).rejects.toThrow();
    });

    it("kills a running command when closed", { timeout: testTimeout }, async () => {
      const e = await env();
      // Handled from the start: a backend may reject it while close() is still busy.
      const pending = exec(e, "sleep 30").catch((err: unknown) => err);
      await new Promise((r) => setTimeout(r, 300));
      const started = Date.now();
      await e.close();
      const r = await pending;
      expect(Date.now() - started).toBeLessThan(10_000);
      if (!(r instanceof Error)) expect((r as ExecResult).exitCode).not.toBe(0);
    });

    it("runs commands of different tasks at the same time", { timeout: testTimeout }, async () => {
      const [a, b] = await Promise.all([env(), env()]);
      const started = Date.now();
      const [ra, rb] = await Promise.all([exec(a, "sleep 1; echo a"), exec(b, "sleep 1; echo b")]);
      expect([ra.output, rb.output]).toEqual(["a\n", "b\n"]);
      expect(Date.now() - started).toBeLessThan(1_900);
    });
  });
}

function shQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * A command printing `gone` once `pid` no longer runs (absent or a zombie),
 * polling for up to 3 s; `alive` otherwise. Builtins and /proc only.
 */
function processGone(pid: number): string {
  return [
    "for i in $(seq 30); do",
    `  if [ -r /proc/${pid}/stat ]; then read -r s < /proc/${pid}/stat 2>/dev/null || s=; s=\${s##*) }; s=\${s%% *}; else s=; fi`,
    '  case "$s" in ""|Z|X) echo gone; exit 0;; esac',
    "  sleep 0.1",
    "done",
    "echo alive",
  ].join("\n");
}
