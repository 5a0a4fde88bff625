import { existsSync, readFileSync, realpathSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { cleanTerminalOutput, normalizeNewlines, stripAnsi } from "../src/terminal/ansi.js";
import { runLocal, type RunLocalOptions } from "../src/terminal/local-runner.js";
import { CappedOutput, omissionMarker } from "../src/terminal/output-buffer.js";

const base: RunLocalOptions = { timeoutMs: 10_000, maxOutputChars: 50_000 };

/** Alive = exists and is not a zombie waiting to be reaped. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const statFile = `/proc/${pid}/stat`;
  if (!existsSync(statFile)) return true;
  try {
    const stat = readFileSync(statFile, "latin1");
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

async function waitUntilDead(pids: number[], ms = 1_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (pids.every((p) => !isAlive(p))) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return pids.every((p) => !isAlive(p));
}

function pidsIn(output: string): number[] {
  return [...output.matchAll(/PID=(\d+)/g)].map((m) => Number(m[1]));
}

const leftovers: number[] = [];
afterAll(() => {
  for (const pid of leftovers) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
});

describe("CappedOutput", () => {
  it("keeps everything under the cap", () => {
    const out = new CappedOutput(100);
    out.push(Buffer.from("hello "));
    out.push(Buffer.from("world"));
    out.end();
    expect(out.toString()).toBe("hello world");
    expect(out.truncated).toBe(false);
    expect(out.totalChars).toBe(11);
  });

  it("keeps head and tail with a marker when cut", () => {
    const out = new CappedOutput(10, { headRatio: 0.2 });
    const text = "abcdefghijklmnopqrstuvwxyz";
    for (const ch of text) out.push(Buffer.from(ch));
    out.end();
    expect(out.truncated).toBe(true);
    expect(out.totalChars).toBe(26);
    expect(out.toString()).toBe("ab" + omissionMarker(16) + "stuvwxyz");
  });

  it("handles a single chunk larger than the whole cap", () => {
    const out = new CappedOutput(10);
    out.push("0123456789".repeat(10));
    expect(out.toString()).toBe("01" + omissionMarker(90) + "23456789");
  });

  it("decodes UTF-8 split across chunk boundaries", () => {
    const text = "héllo wörld — ✓ 😀 日本語";
    const bytes = Buffer.from(text, "utf8");
    const out = new CappedOutput(1_000);
    for (let i = 0; i < bytes.length; i++) out.push(bytes.subarray(i, i + 1));
    out.end();
    expect(out.toString()).toBe(text);
  });

  it("never splits a surrogate pair at the head or tail edge", () => {
    const out = new CappedOutput(10, { headRatio: 0.5 });
    out.push("abcd😀" + "x".repeat(20) + "😀abcd");
    const s = out.toString();
    expect(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s)).toBe(false);
    // Head room is 5: "abcd" + the high half would split the emoji, so the head stops at 4.
    expect(s.startsWith("abcd\n\n[")).toBe(true);
    // Tail room is 5: the last 5 code units start with the low half of 😀, which is dropped.
    expect(s.endsWith("]\n\nabcd")).toBe(true);
  });

  it("bounds memory by the cap for 20 MB of input in small and large chunks", () => {
    const out = new CappedOutput(1_000);
    const big = Buffer.alloc(64 * 1024, "y");
    for (let i = 0; i < 320; i++) {
      out.push(big);
      expect(out.retainedChars).toBeLessThanOrEqual(1_000);
    }
    const small = Buffer.from("z\n");
    for (let i = 0; i < 200_000; i++) out.push(small);
    expect(out.retainedChars).toBeLessThanOrEqual(1_000);
    expect(out.totalChars).toBe(320 * 64 * 1024 + 400_000);
    expect(out.toString().endsWith("z\n".repeat(400))).toBe(true);
  });
});

describe("ansi", () => {
  it("strips escapes and normalises CRLF", () => {
    expect(stripAnsi("\x1b[1;31mred\x1b[0m \x1b]0;title\x07ok")).toBe("red ok");
    expect(normalizeNewlines("a\r\nb\rc\n")).toBe("a\nb\rc\n");
    expect(cleanTerminalOutput("\x1b[32mgreen\x1b[0m\r\nnext\x00\x07\tend")).toBe("green\nnext\tend");
  });
});

describe("runLocal", () => {
  it("returns output and exit code 0", async () => {
    const r = await runLocal("echo hello; printf 'no newline'", base);
    expect(r.output).toBe("hello\nno newline");
    expect(r.exitCode).toBe(0);
    expect(r.timedOut).toBe(false);
    expect(r.aborted).toBe(false);
    expect(r.truncated).toBe(false);
    expect(r.totalChars).toBe(r.output.length);
    expect(r.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("reports non-zero exit codes", async () => {
    expect((await runLocal("exit 3", base)).exitCode).toBe(3);
    expect((await runLocal("false", base)).exitCode).toBe(1);
    const missing = await runLocal("definitely_not_a_command_xyz", base);
    expect(missing.exitCode).toBe(127);
    expect(missing.output).toMatch(/bash: line 1: definitely_not_a_command_xyz: command not found/);
  });

  it("reports 128+signo when the command is killed by a signal", async () => {
    const r = await runLocal("kill -USR1 $$", base);
    expect(r.exitCode).toBe(128 + 10);
    expect(r.signal).toBe("SIGUSR1");
  });

  it("runs bash, not sh, and no login shell", async () => {
    const r = await runLocal('echo "$BASH_VERSION" ; shopt -q login_shell && echo login || echo nologin; [[ 1 == 1 ]] && echo ok', base);
    const [version, login, ok] = r.output.trim().split("\n");
    expect(version).toMatch(/^\d+\.\d+/);
    expect(login).toBe("nologin");
    expect(ok).toBe("ok");
  });

  it("merges stderr into stdout in the order written", async () => {
    const script = Array.from({ length: 50 }, (_, i) => (i % 2 ? `echo out${i}` : `echo err${i} >&2`)).join("; ");
    const r = await runLocal(script, base);
    const expected = Array.from({ length: 50 }, (_, i) => (i % 2 ? `out${i}` : `err${i}`)).join("\n") + "\n";
    expect(r.output).toBe(expected);
  });

  it("merges the stderr of child processes too", async () => {
    const r = await runLocal(`node -e 'process.stdout.write("a\\n"); process.stderr.write("b\\n"); process.stdout.write("c\\n")'`, base);
    expect(r.output).toBe("a\nb\nc\n");
  });

  it("closes stdin", async () => {
    const r = await runLocal("cat; echo done", base);
    expect(r.output).toBe("done\n");
    expect(r.exitCode).toBe(0);
  });

  it("honours cwd and env", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "mibyan-runner-")));
    try {
      const r = await runLocal('pwd; echo "$MIBYAN_TEST_VAR"', {
        ...base,
        cwd: dir,
        env: { PATH: process.env.PATH, MIBYAN_TEST_VAR: "hi there" },
      });
      expect(r.output).toBe(`${dir}\nhi there\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("rejects when the cwd does not exist", async () => {
    await expect(runLocal("true", { ...base, cwd: "/definitely/not/here" })).rejects.toThrow(/Failed to start command/);
  });

  it("decodes multi-byte characters split across pipe chunks", async () => {
    // 70,000 × "é" (2 bytes) crosses several 64 KiB read boundaries, at odd offsets thanks to the leading "x".
    const r = await runLocal(`printf x; for i in $(seq 1 7); do printf 'é%.0s' $(seq 1 10000); done; printf '😀\\n'`, {
      ...base,
      maxOutputChars: 200_000,
    });
    expect(r.output).toBe("x" + "é".repeat(70_000) + "😀\n");
    expect(r.output.includes("\ufffd")).toBe(false);
  });

  it("caps 20 MB of output, keeping head and tail", async () => {
    const r = await runLocal("printf 'START\\n'; yes 0123456789 | head -c 20000000; printf 'END\\n'", {
      ...base,
      maxOutputChars: 1_000,
    });
    expect(r.exitCode).toBe(0);
    expect(r.truncated).toBe(true);
    expect(r.totalChars).toBe(6 + 20_000_000 + 4);
    expect(r.output.startsWith("START\n")).toBe(true);
    expect(r.output.endsWith("END\n")).toBe(true);
    expect(r.output).toContain(`[... ${r.totalChars - 1_000} characters omitted ...]`);
    expect(r.output.length).toBeLessThan(1_100);
  });

  it("kills the whole process group on timeout and reports 124", async () => {
    const started = Date.now();
    const r = await runLocal("sleep 30 & echo PID=$!; bash -c 'sleep 30 & echo PID=$!; sleep 30' & echo PID=$!; echo PID=$$; sleep 30", {
      ...base,
      timeoutMs: 500,
    });
    const pids = pidsIn(r.output);
    leftovers.push(...pids);
    expect(pids.length).toBe(4);
    expect(r.timedOut).toBe(true);
    expect(r.aborted).toBe(false);
    expect(r.exitCode).toBe(124);
    expect(r.signal).toBe("SIGTERM");
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await waitUntilDead(pids, 200)).toBe(true);
  });

  it("leaves no sleep alive after `bash -c 'sleep 30 & sleep 30'` times out", async () => {
    const r = await runLocal(`bash -c 'sleep 30 & echo PID=$!; exec sleep 30' & echo PID=$!; wait`, { ...base, timeoutMs: 400 });
    const pids = pidsIn(r.output);
    leftovers.push(...pids);
    expect(pids.length).toBe(2);
    expect(r.exitCode).toBe(124);
    expect(await waitUntilDead(pids, 200)).toBe(true);
  });

  it("escalates to SIGKILL when the group ignores SIGTERM", async () => {
    const started = Date.now();
    const r = await runLocal(`trap '' TERM; bash -c "trap '' TERM; echo PID=\\$\\$; sleep 30" & echo PID=$$; wait`, {
      ...base,
      timeoutMs: 300,
      killGraceMs: 300,
    });
    const pids = pidsIn(r.output);
    leftovers.push(...pids);
    expect(pids.length).toBe(2);
    expect(r.exitCode).toBe(124);
    expect(r.signal).toBe("SIGKILL");
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await waitUntilDead(pids, 200)).toBe(true);
  });

  it("aborts via the signal with exit code 130 and kills the group", async () => {
    const ac = new AbortController();
    const promise = runLocal("sleep 30 & echo PID=$!; echo PID=$$; sleep 30", { ...base, signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    const r = await promise;
    const pids = pidsIn(r.output);
    leftovers.push(...pids);
    expect(r.aborted).toBe(true);
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(130);
    expect(pids.length).toBe(2);
    expect(await waitUntilDead(pids, 200)).toBe(true);
  });

  it("does not start anything when the signal is already aborted", async () => {
    const ac = new AbortController();
    ac.abort();
    const r = await runLocal("echo should-not-run", { ...base, signal: ac.signal });
    expect(r).toMatchObject({ output: "", exitCode: 130, aborted: true });
  });

  it("does not hang on a background grandchild that keeps the pipe open", async () => {
    const started = Date.now();
    const r = await runLocal("sleep 100 & echo PID=$!; echo main done", { ...base, timeoutMs: 20_000 });
    const pids = pidsIn(r.output);
    leftovers.push(...pids);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(r.exitCode).toBe(0);
    expect(r.timedOut).toBe(false);
    expect(r.output).toContain("main done");
  });

  it("does not wait when the background job closed its output", async () => {
    const started = Date.now();
    const r = await runLocal("sleep 100 >/dev/null 2>&1 & echo PID=$!", base);
    leftovers.push(...pidsIn(r.output));
    expect(r.exitCode).toBe(0);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
