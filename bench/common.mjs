/**
 * What the benchmark files share: statistics, running a file again as a child
 * Node process (`node --expose-gc <file> --child ...args`) so memory figures
 * see only that run, resolved with the JSON line the child prints, and the
 * memory sampling such a child does.
 */

import { spawn } from "node:child_process";

export function runJsonChild(file, args, label) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // npm may set it; measure a plain `node`
  const argv = ["--expose-gc", file, "--child", ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text) => (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text) => (stderr += text));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`${label} child (${args.join(" ")}) exited with ${code}: ${stderr.trim()}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function round(value, digits) {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/**
 * Runs `run` while sampling this process's memory every `intervalMs`; peaks are
 * relative to just before it (after three forced GCs, so start-up garbage is
 * gone). `heap`: also sample `heapUsed` (costlier than RSS alone); `gcEachSample`:
 * force a full GC before each sample, so only live memory counts; `retained`:
 * also report the heap still used after the run and three forced GCs.
 * Needs `--expose-gc`.
 */
export async function measureMemory(run, { intervalMs, heap = false, gcEachSample = false, retained = false }) {
  for (let i = 0; i < 3; i++) globalThis.gc();
  const startUsage = process.memoryUsage();
  const startMaxRss = process.resourceUsage().maxRSS * 1024;
  const peak = { rss: startUsage.rss, heap: startUsage.heapUsed };
  const sample = heap
    ? () => {
        if (gcEachSample) globalThis.gc();
        const usage = process.memoryUsage();
        peak.rss = Math.max(peak.rss, usage.rss);
        peak.heap = Math.max(peak.heap, usage.heapUsed);
      }
    : () => {
        peak.rss = Math.max(peak.rss, process.memoryUsage.rss());
      };
  const timer = setInterval(sample, intervalMs);
  const startCpu = process.cpuUsage();
  const start = performance.now();
  const value = await run();
  const ms = performance.now() - start;
  const cpu = process.cpuUsage(startCpu);
  clearInterval(timer);
  // Short runs may end before the first tick; what they still hold (the result) counts too.
  sample();
  // The kernel's high-water mark catches a peak between two samples, but only
  // when the run raised it (start-up may have left it above anything the run reaches).
  const maxRss = process.resourceUsage().maxRSS * 1024;
  if (maxRss > startMaxRss) peak.rss = Math.max(peak.rss, maxRss);
  const figures = {
    value,
    ms,
    // This process's own CPU time (user + system): far steadier than wall time on a busy box.
    cpuMs: (cpu.user + cpu.system) / 1000,
    peakRssDelta: peak.rss - startUsage.rss,
    peakHeapDelta: heap ? peak.heap - startUsage.heapUsed : null,
  };
  if (retained) {
    for (let i = 0; i < 3; i++) globalThis.gc();
    figures.retainedHeapDelta = process.memoryUsage().heapUsed - startUsage.heapUsed;
  }
  return figures;
}

/** A row for a figure reported against its same-run baseline, with no target: nanoseconds per operation. */
export function reportedNsRow({ name, label, value, baseline, baselineLabel }) {
  return {
    name,
    label,
    value: round(value.ns, 0),
    unit: "ns",
    baseline: round(baseline.ns, 0),
    baselineLabel,
    ratio: round(value.ns / baseline.ns, 2),
    samples: value.samples,
    target: null,
    targetOn: null,
    targetText: "(reported)",
    met: true,
  };
}

/** A seeded PRNG (mulberry32): generated corpora and queries are the same on every run. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
