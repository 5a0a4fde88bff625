/**
 * Background-process benchmarks for bench/run.mjs: what starting and reaping
 * short background processes through `ProcessRegistry` costs on the local
 * backend, and what writing one receipt costs, each next to a baseline
 * measured in the same run.
 *
 *   1. start1000     1,000 background `true` started through `registry.start`
 *                    on one local task environment, 8 at a time, then all
 *                    waited for (`registry.wait`), 8 at a time; against the
 *                    same count of bare `spawn("bash", ["-c", "true"])`, 8 at a
 *                    time (stdin ignored, see bareTrue). Every result is checked (exited, exit code 0, a
 *                    receipt on disk, the checkpoint empty again).
 *   2. memory        peak RSS and peak heap-used growth of the Node process
 *                    during (1), sampled every 20 ms, against the bare spawns.
 *   3. receiptWrite  `ReceiptStore.write` of a receipt with 10 KB (and 50 KB)
 *                    of output, against a plain `writeFile` of the same JSON
 *                    bytes to a new file in the same directory.
 *
 * (1) and (2) are one run: each run happens in a fresh Node process (this
 * file, started with `--child`), with the profile home, `MIBYAN_HOME`, the
 * task's state and the processes' directories all in a temporary directory,
 * so neither the user's profile nor the benchmarks before it play a part.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { open, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { measureMemory, median, round, runJsonChild } from "./common.mjs";

const SELF = fileURLToPath(import.meta.url);
const DIST = path.resolve(path.dirname(SELF), "..", "dist");

/** Background processes in flight at once (starts, then waits), and bare spawns at once. */
const CONCURRENCY = 8;
/** Time ratio of a background start+reap to a bare spawn that the benchmark must stay under. */
const START_RATIO_TARGET = 4;
/** Memory sampling period of the start/wait runs. */
const SAMPLE_MS = 20;
/** Output sizes of the receipt-write benchmark (characters, ASCII). */
const RECEIPT_OUTPUT_SMALL = 10_000;
const RECEIPT_OUTPUT_LARGE = 50_000;

/** Nearest-rank percentile (`p` in 0..100). */
function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Runs `fn(i)` for i = 0..count-1, at most `limit` at once; resolves with the results in order. */
async function pool(count, limit, fn) {
  const results = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await fn(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return results;
}

/**
 * `spawn("bash", ["-c", "true"])` with stdin ignored and stdout/stderr piped (as the local environment spawns its
 * commands), resolved once it exited and its pipes closed. Not the default stdio: Debian's bash reads ~/.bashrc
 * when its stdin is a socket (it takes that for sshd), and Node's pipes are sockets; a ~/.bashrc that runs
 * something (pyenv's rehash on this machine) would then be measured as part of the baseline.
 */
function bareTrue() {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", "true"], { stdio: ["ignore", "pipe", "pipe"] });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`bash -c true exited with ${code}`))));
  });
}

// ---------------------------------------------------------------------------
// The parent side: bench/run.mjs calls benchProcesses().
// ---------------------------------------------------------------------------

/**
 * Runs the process benchmarks and returns their result rows (the shape
 * bench/run.mjs prints). `note` prints progress.
 */
export async function benchProcesses({ quick, note }) {
  if (process.platform === "win32") {
    note("processes: skipped (the local backend needs bash and POSIX process groups)");
    return [];
  }
  const settings = quick ? { count: 100, bareRuns: 1, receiptWrites: 40, receiptWarmups: 3 } : { count: 1000, bareRuns: 2, receiptWrites: 200, receiptWarmups: 5 };
  // Receipt writes first: the start/wait run rewrites the checkpoint some 2,000 times (hundreds of
  // MB for 1,000 processes), and the kernel's write-back of that would slow the fsyncs measured here.
  const receiptRows = await benchReceiptWrite({ settings, note });
  const startRows = await benchStart({ settings, note });
  return [...startRows, ...receiptRows];
}

/** Runs this file as a child in `mode`; resolves with the JSON line it prints. */
function runChild(mode, count) {
  return runJsonChild(SELF, [mode, String(count), String(CONCURRENCY)], "processes");
}

async function benchStart({ settings, note }) {
  const { count, bareRuns } = settings;
  const countText = count.toLocaleString("en-US");
  note(
    `processes: ${countText} background \`true\` through ProcessRegistry (${CONCURRENCY} at a time, start all then wait all) vs ${countText} bare spawns, ` +
      `${bareRuns} bare run(s) around 1 registry run, each in a fresh process ...`,
  );
  const bare = [];
  const registry = [];
  // Full run: bare, registry, bare, so the baseline brackets the long run on a box whose load drifts.
  bare.push(await runChild("bare", count));
  registry.push(await runChild("registry", count));
  for (let i = 1; i < bareRuns; i++) bare.push(await runChild("bare", count));

  const rate = (list) => median(list.map((r) => (r.count / r.ms) * 1000));
  const regRate = rate(registry);
  const bareRate = rate(bare);
  const mbOf = (list, key) => median(list.map((r) => r[key] / 1e6));
  const regRss = mbOf(registry, "peakRssDelta");
  const bareRss = mbOf(bare, "peakRssDelta");
  const regHeap = mbOf(registry, "peakHeapDelta");
  const bareHeap = mbOf(bare, "peakHeapDelta");
  const bareLabel = `${countText} × spawn("bash", ["-c", "true"]) (stdin ignored), ${CONCURRENCY} at a time`;
  const r = registry[0];
  return [
    {
      name: "processes.start1000",
      label: `${countText} background \`true\` started and reaped via ProcessRegistry, ${CONCURRENCY} at a time`,
      value: round(regRate, 1),
      unit: "proc/s",
      baseline: round(bareRate, 1),
      baselineLabel: bareLabel,
      // As for the MB/s figures: baseline rate ÷ rate, so it is a time ratio (higher is slower).
      ratio: round(bareRate / regRate, 2),
      samples: registry.length,
      count,
      concurrency: CONCURRENCY,
      wallMs: round(median(registry.map((x) => x.ms)), 0),
      baselineWallMs: round(median(bare.map((x) => x.ms)), 0),
      startPhaseMs: round(r.startPhaseMs, 0),
      waitPhaseMs: round(r.waitPhaseMs, 0),
      startMedianMs: round(r.startMedianMs, 1),
      waitMedianMs: round(r.waitMedianMs, 1),
      peakCheckpointBytes: r.peakCheckpointBytes,
      // Node's own CPU time (user + system) for the run; the environment's processes are not counted.
      cpuMs: round(median(registry.map((x) => x.cpuMs)), 0),
      baselineCpuMs: round(median(bare.map((x) => x.cpuMs)), 0),
      // Issue 10: starting and reaping a background process costs at most 4 bare spawns.
      target: START_RATIO_TARGET,
      targetOn: "ratio",
      targetText: `≤ ${START_RATIO_TARGET}x bare spawns`,
      met: bareRate / regRate <= START_RATIO_TARGET,
    },
    {
      name: "processes.start1000.rss",
      label: `peak RSS growth, ${countText} background processes`,
      value: round(regRss, 1),
      unit: "MB",
      baseline: round(bareRss, 1),
      baselineLabel: bareLabel,
      ratio: round(regRss / Math.max(bareRss, 0.1), 2),
      samples: registry.length,
      target: null,
      targetOn: null,
      targetText: "(reported)",
      met: true,
    },
    {
      name: "processes.start1000.heap",
      label: `peak heap-used growth, ${countText} background processes`,
      value: round(regHeap, 1),
      unit: "MB",
      baseline: round(bareHeap, 1),
      baselineLabel: bareLabel,
      ratio: round(regHeap / Math.max(bareHeap, 0.1), 2),
      samples: registry.length,
      // Heap still in use after the run and three forced full GCs (what the registry keeps), against the bare run's.
      retainedHeapMB: round(mbOf(registry, "retainedHeapDelta"), 2),
      baselineRetainedHeapMB: round(mbOf(bare, "retainedHeapDelta"), 2),
      target: null,
      targetOn: null,
      targetText: "(reported)",
      met: true,
    },
  ];
}

/** About `chars` characters of ordinary build-log output (ASCII, nothing a redaction pattern matches). */
function logOutput(chars) {
  const lines = [];
  let length = 0;
  for (let i = 0; length < chars; i++) {
    const second = String(i % 60).padStart(2, "0");
    const line = `2026-12-03T10:00:${second}.${String(i % 1000).padStart(3, "0")}Z info  [build] compiled src/module-${String(i).padStart(4, "0")}.ts (${(i % 97) / 10 + 1} kB) in ${i % 40} ms\n`;
    lines.push(line);
    length += line.length;
  }
  return lines.join("").slice(0, chars);
}

/** A receipt as the registry writes it, fields in the store's order, so the plain baseline writes the very same bytes. */
function makeReceipt(id, output, writer) {
  return {
    version: 1,
    id,
    owner: "bench-session",
    taskId: "bench",
    backend: "local",
    command: "npm run build",
    cwd: "/tmp/mibyan-bench-project",
    pid: 123456,
    pty: false,
    startedAt: "2026-12-03T10:00:00.000Z",
    endedAt: "2026-12-03T10:00:42.000Z",
    durationMs: 42_000,
    exitCode: 0,
    ended: "exited",
    reason: null,
    output,
    outputBytes: output.length,
    outputTruncated: false,
    logPath: "/tmp/mibyan-bg.AbCdEf/log",
    writer,
  };
}

const jsonOf = (receipt) => `${JSON.stringify(receipt, null, 2)}\n`;

/** What a receipt write must at least do to be durable: create, write, fsync the file, fsync the directory. */
async function syncedWrite(dir, file, data) {
  const handle = await open(file, "wx", 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  const dirHandle = await open(dir, "r");
  try {
    await dirHandle.sync();
  } finally {
    await dirHandle.close();
  }
}

async function benchReceiptWrite({ settings, note }) {
  const { ReceiptStore, receiptsDir } = await import(pathToFileURL(path.join(DIST, "process", "receipts.js")).href);
  const writes = settings.receiptWrites;
  note(`processes: ReceiptStore.write (10 KB and 50 KB of output) vs writeFile of the same bytes, ${writes} writes each ...`);
  const writer = { pid: process.pid, startTime: "0", host: hostname(), instance: "bench-receipts" };
  let serial = 0;
  const newId = () => `proc_${(0xbe0000000000 + serial++).toString(16)}`;
  const rows = [];
  for (const [name, chars] of [
    ["processes.receiptWrite", RECEIPT_OUTPUT_SMALL],
    ["processes.receiptWrite50k", RECEIPT_OUTPUT_LARGE],
  ]) {
    const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-bench-receipts-"));
    try {
      const dir = receiptsDir(scratch);
      const store = new ReceiptStore({ dir });
      const output = logOutput(chars);
      // The first write creates the directory and prunes (finds nothing); later prunes wait 60 s.
      for (let i = 0; i < settings.receiptWarmups; i++) await store.write(makeReceipt(newId(), output, writer));
      // Sanity: the store writes exactly the bytes the baselines write.
      const checkId = newId();
      const { written } = await store.write(makeReceipt(checkId, output, writer));
      const expected = jsonOf(makeReceipt(checkId, output, writer));
      if (!written || readFileSync(path.join(dir, `${checkId}.json`), "utf8") !== expected) {
        throw new Error(`receipt sanity check failed: the store did not write the expected ${expected.length} bytes`);
      }
      const samples = { store: [], plain: [], synced: [] };
      const jobs = {
        store: async () => {
          const receipt = makeReceipt(newId(), output, writer);
          const start = performance.now();
          const result = await store.write(receipt);
          samples.store.push(performance.now() - start);
          if (!result.written) throw new Error(`receipt ${receipt.id} was not written`);
        },
        plain: async () => {
          const data = jsonOf(makeReceipt(newId(), output, writer));
          const file = path.join(dir, `plain-${serial}.json`);
          const start = performance.now();
          await writeFile(file, data);
          samples.plain.push(performance.now() - start);
        },
        synced: async () => {
          const data = jsonOf(makeReceipt(newId(), output, writer));
          const file = path.join(dir, `synced-${serial}.json`);
          const start = performance.now();
          await syncedWrite(dir, file, data);
          samples.synced.push(performance.now() - start);
        },
      };
      const names = Object.keys(jobs);
      for (let i = 0; i < writes; i++) {
        // Interleaved, rotating the order so no kind always runs first.
        for (let j = 0; j < names.length; j++) await jobs[names[(i + j) % names.length]]();
      }
      const value = median(samples.store);
      const plain = median(samples.plain);
      rows.push({
        name,
        label: `ReceiptStore.write, ${(chars / 1000).toLocaleString("en-US")} KB of output (${(expected.length / 1024).toFixed(1)} KiB file; fsync of file and dir)`,
        value: round(value, 3),
        unit: "ms",
        baseline: round(plain, 3),
        baselineLabel: "fs.promises.writeFile of the same bytes, new file, no fsync",
        ratio: round(value / plain, 2),
        samples: writes,
        p95: round(percentile(samples.store, 95), 3),
        // Create + write + fsync the file + fsync the directory: the floor for a durable write.
        syncedBaseline: round(median(samples.synced), 3),
        syncedRatio: round(value / median(samples.synced), 2),
        bytes: Buffer.byteLength(expected),
        target: null,
        targetOn: null,
        targetText: "(reported)",
        met: true,
      });
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------
// The child side: `node --expose-gc bench/processes.mjs --child <mode> <count> <concurrency>`
// prints one JSON line { count, ms, cpuMs, peakRssDelta, peakHeapDelta, retainedHeapDelta, ... }.
//
//   bare      `count` bare spawns of `bash -c true`, `concurrency` at a time
//   registry  `count` background `true` through ProcessRegistry.start, `concurrency`
//             at a time, then ProcessRegistry.wait for each, `concurrency` at a time
//
// Memory (RSS and heap used, no forced GC) is sampled every 20 ms during the run,
// plus the kernel's RSS high-water mark when the run raised it.
// ---------------------------------------------------------------------------

/** Memory of `run`: RSS and heap used sampled every SAMPLE_MS (no forced GC), and the heap kept after it. */
function measure(run) {
  return measureMemory(run, { intervalMs: SAMPLE_MS, heap: true, retained: true });
}

async function childBare(count, concurrency) {
  await pool(concurrency, concurrency, () => bareTrue()); // warm-up
  const { value: _value, ...figures } = await measure(() => pool(count, concurrency, () => bareTrue()));
  return { count, ...figures };
}

async function childRegistry(count, concurrency) {
  const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-bench-processes-"));
  const home = path.join(scratch, "home");
  const bgDir = path.join(scratch, "bg");
  mkdirSync(bgDir);
  // Before the package is loaded: config.yaml (retention, backend) is looked for here, never in the user's profile.
  process.env.MIBYAN_HOME = home;
  const { ProcessRegistry, EnvironmentManager, createLocalFactory } = await import(pathToFileURL(path.join(DIST, "index.js")).href);
  const { ReceiptStore, receiptsDir } = await import(pathToFileURL(path.join(DIST, "process", "receipts.js")).href);
  const manager = new EnvironmentManager({
    factories: [createLocalFactory({ initialCwd: scratch, tempDir: scratch })],
    defaultBackend: "local",
    idleTimeoutMs: 0,
  });
  // No background polling: processes are reaped by `wait` only, so every run does the same work.
  // controlRoot: the processes' directories go into the scratch directory (the registry never uses TMPDIR for them).
  const registry = new ProcessRegistry({ home, environments: manager, pollIntervalMs: 0, waitIntervalMs: 10, controlRoot: bgDir });
  const session = "bench-session";
  const checkpointFile = path.join(home, "processes", "checkpoint.json");
  const checkpointSize = () => {
    try {
      return readFileSync(checkpointFile).length;
    } catch {
      return 0;
    }
  };
  try {
    const env = await manager.get("bench");
    const startAndWait = async (n) => {
      const startLatency = [];
      const waitLatency = [];
      const t0 = performance.now();
      const infos = await pool(n, concurrency, async () => {
        const start = performance.now();
        const info = await registry.start(env, "true", { sessionId: session });
        startLatency.push(performance.now() - start);
        return info;
      });
      const t1 = performance.now();
      const peakCheckpointBytes = checkpointSize();
      const ends = await pool(n, concurrency, async (i) => {
        const start = performance.now();
        const end = await registry.wait(session, infos[i].id, 60_000);
        waitLatency.push(performance.now() - start);
        return end;
      });
      const t2 = performance.now();
      return { infos, ends, startPhaseMs: t1 - t0, waitPhaseMs: t2 - t1, startLatency, waitLatency, peakCheckpointBytes };
    };
    // Warm-up (modules loaded lazily, the lock, the receipt directory and its first prune): not measured.
    await startAndWait(concurrency);
    const { value, ...figures } = await measure(() => startAndWait(count));

    // Sanity, after the clock: every process exited 0, has a receipt, and left the checkpoint.
    const receipts = new ReceiptStore({ dir: receiptsDir(home) });
    for (let i = 0; i < count; i++) {
      const info = value.infos[i];
      const end = value.ends[i];
      if (info.warning !== undefined) throw new Error(`start of ${info.id} warned: ${info.warning}`);
      if (end.status !== "exited" || end.exitCode !== 0 || end.timedOut) throw new Error(`process ${info.id} ended ${JSON.stringify(end)}`);
      const receipt = await receipts.read(info.id);
      if (!receipt || receipt.ended !== "exited" || receipt.exitCode !== 0) throw new Error(`process ${info.id}: receipt ${JSON.stringify(receipt)}`);
    }
    const left = JSON.parse(readFileSync(checkpointFile, "utf8")).entries.length;
    if (left !== 0) throw new Error(`${left} entries left in the checkpoint after every process ended`);
    return {
      count,
      ...figures,
      startPhaseMs: value.startPhaseMs,
      waitPhaseMs: value.waitPhaseMs,
      startMedianMs: median(value.startLatency),
      waitMedianMs: median(value.waitLatency),
      peakCheckpointBytes: value.peakCheckpointBytes,
    };
  } finally {
    await registry.dispose();
    await manager.closeAll();
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child" && path.resolve(process.argv[1] ?? "") === SELF) {
  const [mode, countText, concurrencyText] = process.argv.slice(3);
  const count = Number(countText);
  const concurrency = Number(concurrencyText);
  let result;
  if (mode === "bare") result = await childBare(count, concurrency);
  else if (mode === "registry") result = await childRegistry(count, concurrency);
  else throw new Error(`unknown child mode ${mode}`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
