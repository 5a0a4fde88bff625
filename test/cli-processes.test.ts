/**
 * End-to-end tests of `mibyan processes` and `mibyan processes show`, as real
 * processes of the built CLI (`npm run build` first).
 *
 * Every test has its own MIBYAN_HOME (and HOME). They run one after another
 * all the same: each spawns several CLIs in turn, and run side by side on a
 * small machine they came close to the time limit. A background process
 * outlives the CLI that started it; the pids `terminal` reports are killed
 * (whole groups, unless the pid was recycled) at the end.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";

import { processStartTime } from "../src/process/writer-identity.js";
import { BIN, cliEnv, ROOT, spawnCollect, type CliRun } from "./support/cli-run.js";

const MAIN = path.join(ROOT, "dist", "cli", "main.js");

const tempDirs: string[] = [];
/** Background processes the tests started (pid → start time), killed (their whole group) at the end. */
const started = new Map<number, string | undefined>();
/** Their private directories (log, FIFO, exit file): the registry leaves them behind, the tests remove them. */
const runnerDirs = new Set<string>();

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

type Run = CliRun;

function mibyan(home: string, ...args: string[]): Promise<Run> {
  return spawnCollect(process.execPath, [BIN, ...args], { env: cliEnv(home, tempDir("mibyan-proc-user-")), cwd: home });
}

function parseJson<T>(run: Run): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${run.status}):\n${run.stdout}\n--- stderr ---\n${run.stderr}`);
  }
}

interface Row {
  process_id: string;
  status: string;
  exit_code: number | null;
  pid: number;
  command: string;
  managed_by: string | null;
}

interface Listing {
  session: string;
  running: Row[];
  ended: Row[];
}

/** Starts `command` in the background for `session`; returns its id and pid. */
async function startBackground(home: string, session: string, command: string): Promise<{ id: string; pid: number }> {
  const run = await mibyan(home, "call", "terminal", JSON.stringify({ command, background: true }), "--session", session);
  const result = parseJson<{ process_id?: string; pid?: number; status?: string }>(run);
  if (run.status !== 0 || typeof result.process_id !== "string" || typeof result.pid !== "number") {
    throw new Error(`could not start a background process (exit ${run.status}): ${run.stdout}${run.stderr}`);
  }
  started.set(result.pid, processStartTime(result.pid));
  const dir = runnerDir(home, result.process_id);
  if (dir !== undefined) runnerDirs.add(dir);
  return { id: result.process_id, pid: result.pid };
}

async function waitFor(home: string, session: string, id: string): Promise<{ status: string; exit_code: number | null; output: string }> {
  const run = await mibyan(home, "call", "process", JSON.stringify({ action: "wait", process_id: id, timeout: 10 }), "--session", session);
  return parseJson(run);
}

/** The writer recorded for `id` in the checkpoint file (which registry manages it), if it is there. */
function checkpointWriter(home: string, id: string): unknown {
  const file = path.join(home, "processes", "checkpoint.json");
  if (!existsSync(file)) return undefined;
  const checkpoint = JSON.parse(readFileSync(file, "utf8")) as { entries: { id: string; writer: unknown }[] };
  return checkpoint.entries.find((entry) => entry.id === id)?.writer;
}

/** The process's directory in the environment, from its checkpoint entry or (ended already) its receipt. */
function runnerDir(home: string, id: string): string | undefined {
  const checkpoint = path.join(home, "processes", "checkpoint.json");
  const entry = existsSync(checkpoint)
    ? (JSON.parse(readFileSync(checkpoint, "utf8")) as { entries: { id: string; dir: string }[] }).entries.find((e) => e.id === id)
    : undefined;
  if (entry) return entry.dir;
  const receipt = receiptFile(home, id);
  return existsSync(receipt) ? path.dirname((JSON.parse(readFileSync(receipt, "utf8")) as { logPath: string }).logPath) : undefined;
}

function receiptFile(home: string, id: string): string {
  return path.join(home, "logs", "process-results", `${id}.json`);
}

beforeAll(() => {
  if (!existsSync(MAIN)) {
    throw new Error(`${path.relative(ROOT, MAIN)} is missing: the CLI tests run the built package. Run \`npm run build\` first.`);
  }
});

afterAll(() => {
  for (const [pid, startTime] of started) {
    // A pid that now names another process (recycled) is left alone.
    if (startTime === undefined || processStartTime(pid) !== startTime) continue;
    try {
      // The runner leads its own process group (setsid): this reaches the whole tree.
      process.kill(-pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  for (const dir of runnerDirs) if (path.basename(dir).startsWith("mibyan-bg.")) rmSync(dir, { recursive: true, force: true });
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe("mibyan processes", () => {
  it("lists a background process started by another CLI, and shows its receipt once a later CLI waited for it", async ({ expect }) => {
    const home = tempDir("mibyan-proc-home-");
    const { id, pid } = await startBackground(home, "s1", "echo started; sleep 1; echo done; exit 3");
    expect(id).toMatch(/^proc_[0-9a-f]{12}$/);
    // Undefined when it ended while the CLI that started it was still exiting (a slow machine): then it has its receipt.
    const writerBefore = checkpointWriter(home, id);
    const endedEarly = writerBefore === undefined;
    expect(existsSync(receiptFile(home, id))).toBe(endedEarly);

    const listed = await mibyan(home, "processes", "--session", "s1", "--json");
    expect(listed.status).toBe(0);
    expect(listed.stderr).toBe("");
    const listing = parseJson<Listing>(listed);
    expect(listing.session).toBe("s1");
    const row = [...listing.running, ...listing.ended].find((r) => r.process_id === id);
    expect(row).toBeDefined();
    // Nothing watches an orphan: it is listed running (even if it has just ended) until a registry adopts it.
    expect(listing.running.some((r) => r.process_id === id)).toBe(!endedEarly);
    expect(row!.pid).toBe(pid);
    expect(row!.command).toBe("echo started; sleep 1; echo done; exit 3");
    if (listing.running.some((r) => r.process_id === id)) {
      expect(row!.status).toBe("running");
      expect(row!.exit_code).toBeNull();
      // The CLI that started it has exited: nobody manages it until a registry adopts it.
      expect(row!.managed_by).toBeNull();
    }
    // Listing is passive: nothing adopted the orphan (its checkpoint entry still names the CLI that started it) and no receipt was written.
    expect(existsSync(receiptFile(home, id))).toBe(endedEarly);
    expect(checkpointWriter(home, id)).toEqual(writerBefore);

    // A new CLI adopts the orphan and waits for it.
    const waited = await waitFor(home, "s1", id);
    expect(waited.status).toBe("exited");
    expect(waited.exit_code).toBe(3);
    expect(waited.output).toContain("done");

    const [shown, afterRun] = await Promise.all([
      mibyan(home, "processes", "show", id, "--session", "s1", "--json"),
      mibyan(home, "processes", "--session", "s1", "--json"),
    ]);
    expect(shown.status).toBe(0);
    expect(shown.stderr).toBe("");
    const receipt = parseJson<Record<string, unknown>>(shown);
    expect(Object.keys(receipt).sort()).toEqual(
      [
        "backend",
        "command",
        "cwd",
        "duration_ms",
        "ended_at",
        "exit_code",
        "log_path",
        "output",
        "output_bytes",
        "output_truncated",
        "owner",
        "pid",
        "process_id",
        "pty",
        "reason",
        "started_at",
        "status",
        "task_id",
      ].sort(),
    );
    expect(receipt).toMatchObject({ process_id: id, owner: "s1", exit_code: 3, status: "exited", pid, pty: false, backend: "local", reason: null });
    expect(receipt.output).toContain("started");
    expect(receipt.output).toContain("done");
    expect(receipt.output_bytes).toBe("started\ndone\n".length);

    const file = receiptFile(home, id);
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const after = parseJson<Listing>(afterRun);
    expect(after.running.map((r) => r.process_id)).not.toContain(id);
    expect(after.ended).toEqual([expect.objectContaining({ process_id: id, status: "exited", exit_code: 3, managed_by: null })]);
  });

  it("another session neither sees nor reads the process, and is answered as for a missing id", async ({ expect }) => {
    const home = tempDir("mibyan-proc-home-");
    const { id } = await startBackground(home, "s1", "echo mine; sleep 20");

    const [showRunning, listing, missing, own, byDefault] = await Promise.all([
      mibyan(home, "processes", "show", id, "--session", "s2"),
      mibyan(home, "processes", "--session", "s2", "--json"),
      mibyan(home, "processes", "show", "proc_000000000000", "--session", "s2"),
      mibyan(home, "processes", "show", id, "--session", "s1", "--json"),
      mibyan(home, "processes", "show", id),
    ]);
    expect(showRunning.status).toBe(1);
    expect(showRunning.stdout).toBe("");
    expect(showRunning.stderr).toBe(`mibyan: no background process ${id} in session s2\n`);
    // The same answer, word for word, as for an id that never existed.
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe("mibyan: no background process proc_000000000000 in session s2\n");
    expect(listing.status).toBe(0);
    expect(parseJson<Listing>(listing)).toEqual({ session: "s2", running: [], ended: [] });
    expect(listing.stdout).not.toContain(id);

    // Its owner sees it running; the default session does not.
    expect(own.status).toBe(0);
    expect(parseJson<Row>(own)).toMatchObject({ process_id: id, status: "running", exit_code: null });
    expect(byDefault.status).toBe(1);
    expect(byDefault.stderr).toBe(`mibyan: no background process ${id} in session default\n`);

    // Ended, it is still not s2's.
    const killed = await mibyan(home, "call", "process", JSON.stringify({ action: "kill", process_id: id }), "--session", "s1");
    expect(parseJson<{ status: string }>(killed).status).toBe("killed");
    expect(existsSync(receiptFile(home, id))).toBe(true);
    const [showEnded, listEnded] = await Promise.all([
      mibyan(home, "processes", "show", id, "--session", "s2", "--json"),
      mibyan(home, "processes", "--session", "s2", "--json"),
    ]);
    expect(showEnded.status).toBe(1);
    expect(showEnded.stdout).toBe("");
    expect(showEnded.stderr).toBe(`mibyan: no background process ${id} in session s2\n`);
    expect(parseJson<Listing>(listEnded)).toEqual({ session: "s2", running: [], ended: [] });
  });

  it("a secret in the command reaches neither the listing, nor show, nor the receipt file", async ({ expect }) => {
    const home = tempDir("mibyan-proc-home-");
    const secret = `sk-proj-${"a".repeat(40)}`;
    const { id } = await startBackground(home, "s3", `echo ${secret}; sleep 1`);

    const whileRunning = await Promise.all([
      mibyan(home, "processes", "--session", "s3", "--json"),
      mibyan(home, "processes", "show", id, "--session", "s3", "--json"),
      mibyan(home, "processes", "--session", "s3"),
    ]);
    for (const run of whileRunning) {
      expect(run.status).toBe(0);
      expect(run.stdout).toContain(id);
      expect(run.stdout).not.toContain(secret);
    }

    const waited = await waitFor(home, "s3", id);
    expect(waited.status).toBe("exited");

    const [listed, shown, shownHuman] = await Promise.all([
      mibyan(home, "processes", "--session", "s3", "--json"),
      mibyan(home, "processes", "show", id, "--session", "s3", "--json"),
      mibyan(home, "processes", "show", id, "--session", "s3"),
    ]);
    for (const run of [listed, shown, shownHuman]) {
      expect(run.status).toBe(0);
      expect(run.stdout).toContain(id);
      expect(run.stdout).not.toContain(secret);
      expect(run.stdout).not.toContain("a".repeat(40));
    }
    const receipt = parseJson<{ command: string; output: string }>(shown);
    expect(receipt.command).toContain("[REDACTED]");
    expect(receipt.output).toContain("[REDACTED]");
    const bytes = readFileSync(receiptFile(home, id));
    expect(bytes.includes(Buffer.from(secret))).toBe(false);
    expect(bytes.includes(Buffer.from("a".repeat(40)))).toBe(false);
  });

  it("a malformed id is refused with a clear one-line error, and no file is read", async ({ expect }) => {
    const home = tempDir("mibyan-proc-home-");
    const [traversal, multiline, json] = await Promise.all([
      mibyan(home, "processes", "show", "../../etc/passwd"),
      mibyan(home, "processes", "show", "proc_\nx\u001b[2J"),
      mibyan(home, "processes", "show", "../../etc/passwd", "--json", "--session", "s1"),
    ]);
    expect(traversal.status).toBe(1);
    expect(traversal.stdout).toBe("");
    expect(traversal.stderr).toBe("mibyan: no background process ../../etc/passwd in session default (a process id is proc_ followed by 12 hex digits)\n");
    expect(multiline.status).toBe(1);
    expect(multiline.stdout).toBe("");
    // Quoted: one line, and no escape sequence reaches the terminal.
    expect(multiline.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(multiline.stderr).not.toContain("\u001b");
    expect(multiline.stderr).toContain('"proc_\\nx\\u001b[2J"');
    expect(json.status).toBe(1);
    expect(json.stdout).toBe("");
    expect(json.stderr).toContain("no background process ../../etc/passwd in session s1");
  });

  it("human output: a table per group with the id and the status words, then key: value lines and the output", async ({ expect }) => {
    const home = tempDir("mibyan-proc-home-");
    const long = `echo ${"x".repeat(100)}\necho second-line-of-command; sleep 20`;
    const [ended, running] = await Promise.all([startBackground(home, "h", "echo first line; exit 7"), startBackground(home, "h", long)]);
    expect((await waitFor(home, "h", ended.id)).exit_code).toBe(7);

    // The waiting CLI adopted the other orphan too; it has exited, so the process is an orphan again, still running.
    const [list, show, showRunning] = await Promise.all([
      mibyan(home, "processes", "--session", "h"),
      mibyan(home, "processes", "show", ended.id, "--session", "h"),
      mibyan(home, "processes", "show", running.id, "--session", "h"),
    ]);
    expect(list.status).toBe(0);
    expect(list.stderr).toBe("");
    const lines = list.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("Running (1)");
    expect(lines).toContain("Ended (1)");
    const runningLine = lines.find((l) => l.includes(running.id));
    const endedLine = lines.find((l) => l.includes(ended.id));
    expect(runningLine).toMatch(/\brunning\b/);
    expect(endedLine).toMatch(/\bexited\s+7\b/);
    expect(endedLine).toContain("echo first line; exit 7");
    // The long, multi-line command is cut to one line.
    expect(runningLine).toContain("…");
    expect(runningLine).not.toContain("second-line-of-command");
    expect(runningLine!.length).toBeLessThan(160);
    expect(list.stdout).toMatch(/\bUPTIME\b/);
    expect(list.stdout).toMatch(/\bDURATION\b/);

    expect(show.status).toBe(0);
    expect(show.stderr).toBe("");
    const [details, output] = show.stdout.split("\n\n");
    expect(details).toMatch(new RegExp(`^process_id:\\s+${ended.id}$`, "m"));
    expect(details).toMatch(/^status:\s+exited$/m);
    expect(details).toMatch(/^exit_code:\s+7$/m);
    expect(output).toBe("first line\n");

    expect(showRunning.status).toBe(0);
    expect(showRunning.stdout).toMatch(/^status:\s+running$/m);
    expect(showRunning.stdout).toMatch(/^uptime:\s+\S+/m);

  });

  it("nothing to show: one clear line, exit 0; --json gives empty lists", async ({ expect }) => {
    const home = tempDir("mibyan-proc-home-");
    const [human, json, defaultSession] = await Promise.all([
      mibyan(home, "processes", "--session", "nobody"),
      mibyan(home, "processes", "list", "--session", "nobody", "--json"),
      mibyan(home, "processes"),
    ]);
    expect(human.status).toBe(0);
    expect(human.stderr).toBe("");
    expect(human.stdout).toBe("No background processes for session nobody.\n");
    expect(json.status).toBe(0);
    expect(parseJson(json)).toEqual({ session: "nobody", running: [], ended: [] });
    expect(defaultSession.stdout).toBe("No background processes for session default.\n");
    // Looking wrote nothing into the profile home.
    expect(existsSync(path.join(home, "logs", "process-results"))).toBe(false);
    expect(existsSync(path.join(home, "processes", "checkpoint.json"))).toBe(false);
  });
});
