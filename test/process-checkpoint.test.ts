/**
 * The checkpoint file of running background processes and the writer
 * identities that decide adoption, with real files in a temp directory and
 * real child processes (killed with SIGKILL, as a crashed agent host would be).
 */

import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { afterAll, afterEach, describe, expect, it } from "vitest";

import { CheckpointStore, CorruptCheckpointError, checkpointPath, type CheckpointStoreOptions } from "../src/process/checkpoint.js";
import type { CheckpointEntry, WriterIdentity } from "../src/process/types.js";
import { currentWriter, processStartTime, writerGone } from "../src/process/writer-identity.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DIST_CHECKPOINT = path.join(ROOT, "dist", "process", "checkpoint.js");
const DIST_WRITER = path.join(ROOT, "dist", "process", "writer-identity.js");
const NO_SUCH_PID = 2 ** 22 + 12345;
const onLinux = process.platform === "linux";

const scratch = mkdtempSync(path.join(os.tmpdir(), "mibyan-checkpoint-"));
const children: ChildProcess[] = [];
let fileCount = 0;

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A fresh profile home with its own checkpoint path. */
function freshFile(): string {
  return checkpointPath(path.join(scratch, `home-${++fileCount}`));
}

function id(n: number): string {
  return `proc_${n.toString(16).padStart(12, "0")}`;
}

function entry(n: number, writer: WriterIdentity, extra: Partial<CheckpointEntry> = {}): CheckpointEntry {
  return {
    id: id(n),
    owner: "session-a",
    taskId: "task-1",
    backend: "local",
    pid: 1000 + n,
    pgid: 1000 + n,
    startTime: "123456",
    command: `sleep ${n}`,
    cwd: "/tmp",
    dir: `/tmp/mibyan-bg.${n}`,
    logPath: `/tmp/mibyan-bg.${n}/log`,
    pty: false,
    startedAt: new Date(0).toISOString(),
    notifyOnComplete: false,
    watchPatterns: [],
    writer,
    ...extra,
  };
}

function store(file: string, writer: WriterIdentity = currentWriter(), options: Partial<CheckpointStoreOptions> = {}): CheckpointStore {
  return new CheckpointStore({ file, writer, onCorrupt: () => undefined, ...options });
}

function idsOf(entries: CheckpointEntry[]): string[] {
  return entries.map((e) => e.id).sort();
}

/** A child that does nothing until killed; its identity as a writer, as `currentWriter` would record it inside it. */
async function idleChild(): Promise<{ child: ChildProcess; writer: WriterIdentity }> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  children.push(child);
  await once(child, "spawn");
  const startTime = processStartTime(child.pid!);
  expect(startTime).toMatch(/^\d+$/);
  return { child, writer: { pid: child.pid!, startTime: startTime!, host: os.hostname(), instance: `child-${child.pid}` } };
}

async function killHard(child: ChildProcess): Promise<void> {
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

describe.skipIf(!onLinux)("writer identity", () => {
  it("processStartTime is field 22 of /proc/<pid>/stat", () => {
    const text = readFileSync(`/proc/${process.pid}/stat`, "utf8");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    expect(processStartTime(process.pid)).toBe(fields[19]);
    expect(processStartTime(NO_SUCH_PID)).toBeUndefined();
  });

  it("currentWriter describes this process, with a random instance unless given", () => {
    const a = currentWriter();
    expect(a).toMatchObject({ pid: process.pid, startTime: processStartTime(process.pid), host: os.hostname() });
    expect(a.instance).toMatch(/^[0-9a-f]{16}$/);
    expect(currentWriter().instance).not.toBe(a.instance);
    expect(currentWriter("mine").instance).toBe("mine");
  });

  it("writerGone: missing or recycled pid on this host is gone; alive, unjudgeable or foreign writers are not", () => {
    const me = currentWriter();
    expect(writerGone({ ...me, instance: "other" })).toBe(false);
    expect(writerGone({ ...me, pid: NO_SUCH_PID })).toBe(true);
    expect(writerGone({ ...me, startTime: "1" })).toBe(true);
    expect(writerGone({ ...me, startTime: "" }, { ...me, startTime: "2" })).toBe(false);
    expect(writerGone({ ...me, pid: NO_SUCH_PID, host: `${os.hostname()}-elsewhere` })).toBe(false);
  });

  it.skipIf(process.platform !== "linux")("writerGone: another boot is gone; another pid namespace (a container sharing the home) is never judged", () => {
    const me = currentWriter();
    expect(me.bootId).toMatch(/^[0-9a-f-]{36}$/);
    expect(me.pidNamespace).toMatch(/^pid:\[\d+\]$/);
    // The pid is alive here, but it belonged to a process of an earlier boot.
    expect(writerGone({ ...me, instance: "x", pid: process.ppid, bootId: "00000000-0000-0000-0000-000000000000" })).toBe(true);
    // Its pid does not exist here, but pids of another namespace mean nothing here.
    expect(writerGone({ ...me, pid: NO_SUCH_PID, pidNamespace: "pid:[1]" })).toBe(false);
  });
});

describe("checkpoint store", () => {
  it("keeps the file under <home>/processes", () => {
    expect(checkpointPath("/h")).toBe(path.join("/h", "processes", "checkpoint.json"));
  });

  it("round-trips entries, with a private file (0600) in a private directory (0700)", async () => {
    const file = freshFile();
    const s = store(file);
    expect(await s.read()).toEqual([]);
    const written = [entry(1, s.writer), entry(2, s.writer, { cwd: null, pty: true, watchPatterns: ["ready"] })];
    await s.put(written);
    expect(await s.read()).toEqual(written);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const onDisk = JSON.parse(readFileSync(file, "utf8"));
    expect(onDisk.version).toBe(1);
    expect(onDisk.entries).toHaveLength(2);

    await s.put([entry(1, s.writer, { command: "replaced" })]);
    const after = await s.read();
    expect(after.map((e) => e.command)).toEqual(["replaced", "sleep 2"]);
  });

  it("refuses to write an invalid entry", async () => {
    const s = store(freshFile());
    await expect(s.put([entry(1, s.writer, { id: "proc_../../x" })])).rejects.toThrow(TypeError);
    await expect(s.put([{ ...entry(2, s.writer), pid: -1 }])).rejects.toThrow(/pid/);
    expect(await s.read()).toEqual([]);
  });

  it("merges concurrent writers in one process: 2 stores x 25 puts", async () => {
    const file = freshFile();
    const a = store(file);
    const b = store(file);
    const puts: Promise<void>[] = [];
    for (let i = 0; i < 25; i++) puts.push(a.put([entry(i, a.writer)]), b.put([entry(100 + i, b.writer)]));
    await Promise.all(puts);
    const all = await a.read();
    expect(all).toHaveLength(50);
    expect(all.filter((e) => e.writer.instance === a.writer.instance)).toHaveLength(25);
  });

  it("removes only its own entries unless forced", async () => {
    const file = freshFile();
    const a = store(file);
    const b = store(file);
    await a.put([entry(1, a.writer), entry(2, a.writer)]);
    await b.put([entry(3, b.writer)]);
    expect(await a.remove([id(1), id(3), id(99), "not-an-id"])).toEqual([id(1)]);
    expect(idsOf(await a.read())).toEqual([id(2), id(3)]);
    expect(await a.remove([id(3)], { force: true })).toEqual([id(3)]);
    expect(idsOf(await b.read())).toEqual([id(2)]);
  });

  it("drops and reports invalid entries but keeps the rest", async () => {
    const file = freshFile();
    const reports: string[] = [];
    const s = store(file, currentWriter(), { onCorrupt: (_f, e) => reports.push(e.message) });
    await s.put([entry(1, s.writer)]);
    const data = JSON.parse(readFileSync(file, "utf8"));
    data.entries.push({ ...entry(2, s.writer), pty: "yes" }, { ...entry(3, s.writer), id: "proc_X" });
    writeFileSync(file, JSON.stringify(data));
    expect(idsOf(await s.read())).toEqual([id(1)]);
    expect(reports).toHaveLength(2);
    expect(reports[0]).toMatch(/pty/);
    // A write rewrites the file without them.
    await s.put([entry(4, s.writer)]);
    expect(JSON.parse(readFileSync(file, "utf8")).entries.map((e: CheckpointEntry) => e.id)).toEqual([id(1), id(4)]);
  });

  it("a corrupt file: read throws, a write moves it aside and starts afresh", async () => {
    const file = freshFile();
    const reports: Error[] = [];
    const s = store(file, currentWriter(), { onCorrupt: (_f, e) => reports.push(e) });
    await s.put([entry(1, s.writer)]);
    const garbage = '{"version": 1, "entries": [';
    writeFileSync(file, garbage);
    const error = await s.read().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptCheckpointError);
    expect((error as CorruptCheckpointError).code).toBe("corrupt_checkpoint");

    await s.put([entry(2, s.writer)]);
    expect(idsOf(await s.read())).toEqual([id(2)]);
    const aside = readdirSync(path.dirname(file)).filter((n) => n.startsWith("checkpoint.json.corrupt-"));
    expect(aside).toHaveLength(1);
    expect(readFileSync(path.join(path.dirname(file), aside[0]!), "utf8")).toBe(garbage);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toBeInstanceOf(CorruptCheckpointError);

    // Parseable JSON of the wrong shape or version is just as corrupt.
    writeFileSync(file, JSON.stringify({ version: 2, entries: [] }));
    await expect(s.read()).rejects.toThrow(/version/);
  });

  it("takes over a stale lock left by a holder killed with SIGKILL", async () => {
    const file = freshFile();
    mkdirSync(`${file}.lock`, { recursive: true });
    const minuteAgo = new Date(Date.now() - 60_000);
    utimesSync(`${file}.lock`, minuteAgo, minuteAgo);
    const s = store(file, currentWriter(), { lockStaleMs: 2_000 });
    await s.put([entry(1, s.writer)]);
    expect(idsOf(await s.read())).toEqual([id(1)]);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});

describe.skipIf(!onLinux)("adoption claim", () => {
  it("claims entries of dead or recycled writers on this host, never of live or foreign ones", async () => {
    const file = freshFile();
    const dead = await idleChild();
    const live = await idleChild();
    await killHard(dead.child);
    const me = currentWriter();
    const seed = store(file, { ...me, instance: "seed" });
    await seed.put([
      entry(1, dead.writer),
      entry(2, live.writer),
      entry(3, { ...me, instance: "sibling-registry" }),
      entry(4, { ...me, startTime: "1", instance: "recycled" }),
      entry(5, { ...dead.writer, host: `${os.hostname()}-elsewhere` }),
      entry(6, dead.writer, { owner: "session-b" }),
    ]);

    const adopter = store(file);
    const claimed = await adopter.claimOrphans((e) => e.owner === "session-a");
    expect(idsOf(claimed)).toEqual([id(1), id(4)]);
    for (const e of claimed) expect(e.writer).toEqual(adopter.writer);

    const onDisk = new Map((await adopter.read()).map((e) => [e.id, e.writer.instance]));
    expect(onDisk.get(id(1))).toBe(adopter.writer.instance);
    expect(onDisk.get(id(2))).toBe(live.writer.instance);
    expect(onDisk.get(id(3))).toBe("sibling-registry");
    expect(onDisk.get(id(5))).toBe(dead.writer.instance);
    expect(onDisk.get(id(6))).toBe(dead.writer.instance);

    // Once claimed, they are the adopter's (alive): another claim gets only what `select` held back before.
    expect(await store(file).claimOrphans((e) => e.owner === "session-a")).toEqual([]);
    expect(idsOf(await store(file).claimOrphans())).toEqual([id(6)]);
    expect(await adopter.remove([id(1), id(4)])).toEqual([id(1), id(4)]);
  });

  it("two stores claiming at once: every orphan goes to exactly one", async () => {
    const file = freshFile();
    const dead = await idleChild();
    await killHard(dead.child);
    const seed = store(file, dead.writer);
    await seed.put(Array.from({ length: 30 }, (_, i) => entry(i, dead.writer)));

    const a = store(file);
    const b = store(file);
    const rounds = await Promise.all([a.claimOrphans(), b.claimOrphans(), a.claimOrphans(), b.claimOrphans()]);
    const byA = [...rounds[0]!, ...rounds[2]!].map((e) => e.id);
    const byB = [...rounds[1]!, ...rounds[3]!].map((e) => e.id);
    expect(byA.filter((x) => byB.includes(x))).toEqual([]);
    expect([...byA, ...byB].sort()).toEqual(Array.from({ length: 30 }, (_, i) => id(i)).sort());
    expect(new Set([...byA, ...byB]).size).toBe(30);
    for (const e of await a.read()) expect([a.writer.instance, b.writer.instance]).toContain(e.writer.instance);
  });
});

// The children run the compiled package: `npm test` builds dist/ first, so this only skips when vitest is run by hand before a build.
describe.skipIf(!existsSync(DIST_CHECKPOINT) || !existsSync(DIST_WRITER))("checkpoint store across processes", () => {
  it("merges 3 processes writing 20 entries each at once", async () => {
    const file = freshFile();
    const script = path.join(scratch, `writer-${fileCount}.mjs`);
    writeFileSync(
      script,
      [
        `import { CheckpointStore } from ${JSON.stringify(pathToFileURL(DIST_CHECKPOINT).href)};`,
        `import { currentWriter } from ${JSON.stringify(pathToFileURL(DIST_WRITER).href)};`,
        `const [file, base, goAt] = process.argv.slice(2);`,
        `const store = new CheckpointStore({ file, writer: currentWriter() });`,
        // Start together, so the 60 puts really contend for the lock.
        `await new Promise((r) => setTimeout(r, Math.max(0, Number(goAt) - Date.now())));`,
        `const entry = (n, writer) => ({`,
        `  id: "proc_" + n.toString(16).padStart(12, "0"), owner: "session-a", taskId: "task-1", backend: "local",`,
        `  pid: 1000 + n, pgid: 1000 + n, startTime: "1", command: "sleep 1", cwd: null,`,
        `  dir: "/tmp/mibyan-bg." + n, logPath: "/tmp/mibyan-bg." + n + "/log", pty: false,`,
        `  startedAt: new Date(0).toISOString(), notifyOnComplete: false, watchPatterns: [], writer,`,
        `});`,
        `await Promise.all(Array.from({ length: 20 }, (_, i) => store.put([entry(Number(base) + i, store.writer)])));`,
      ].join("\n"),
    );
    const goAt = Date.now() + 500;
    const runs = [0, 100, 200].map(async (base) => {
      const child = spawn(process.execPath, [script, file, String(base), String(goAt)], { stdio: ["ignore", "ignore", "pipe"] });
      children.push(child);
      let stderr = "";
      child.stderr!.on("data", (d) => (stderr += d));
      const [code] = await once(child, "exit");
      return { code, stderr };
    });
    for (const run of await Promise.all(runs)) expect(run).toEqual({ code: 0, stderr: "" });

    const all = await store(file).read();
    expect(all).toHaveLength(60);
    expect(new Set(all.map((e) => e.writer.pid)).size).toBe(3);
  });
});
