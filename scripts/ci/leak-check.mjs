#!/usr/bin/env node
// Checks that a test run leaves nothing behind: no new entries in the machine's
// shared temporary directories and no processes still running that were started
// during the run. Tests keep their files under their own temporary directories
// (test/support/isolated-home.ts) and stop what they start; this is the check.
//
//   node scripts/ci/leak-check.mjs snapshot FILE   record the state before the run
//   node scripts/ci/leak-check.mjs compare FILE    after the run: list what is new; exit 1 if anything is
//
// A process counts as left behind when it did not exist at the snapshot, is still
// alive at the comparison, and is not this script or one of its ancestors (the
// shell running the CI script), nor a kernel thread. Processes get a few seconds to finish exiting,
// because a test's last kill may still be in flight when the runner returns.
import { readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";

// LEAK_CHECK_DIRS (colon-separated) replaces the list, for the check's own test.
const SHARED_DIRS = process.env.LEAK_CHECK_DIRS
  ? process.env.LEAK_CHECK_DIRS.split(":").filter(Boolean)
  : [...new Set([tmpdir(), "/tmp", "/var/tmp", "/dev/shm"])];
const GRACE_MS = Number(process.env.LEAK_CHECK_GRACE_MS ?? 5_000);

function listDir(dir) {
  try {
    return readdirSync(dir).map((name) => `${dir}/${name}`);
  } catch {
    return [];
  }
}

/** Every live process as `pid:starttime` (pid reuse cannot make a new process look old), with its command line. */
function processes() {
  const found = new Map();
  for (const name of listDir("/proc")) {
    const pid = name.slice("/proc/".length);
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // Zombies are gone in all but their exit status; their parent reaps them.
      if (fields[0] === "Z") continue;
      // Kernel threads (kthreadd, pid 2, and its children) come and go with the kernel's work, not ours.
      if (pid === "2" || fields[1] === "2") continue;
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
      found.set(`${pid}:${fields[19]}`, { pid: Number(pid), ppid: Number(fields[1]), cmdline: cmdline || `[${stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))}]` });
    } catch {
      // The process ended while we read it.
    }
  }
  return found;
}

function ancestors() {
  const mine = new Set();
  let pid = process.pid;
  while (pid > 1) {
    mine.add(pid);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      pid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    } catch {
      break;
    }
  }
  return mine;
}

function snapshot() {
  return { files: SHARED_DIRS.flatMap(listDir), processes: [...processes().keys()] };
}

function leaks(before) {
  const oldFiles = new Set(before.files);
  const oldProcesses = new Set(before.processes);
  const mine = ancestors();
  const files = SHARED_DIRS.flatMap(listDir).filter((file) => !oldFiles.has(file));
  const stray = [...processes()].filter(([key, proc]) => !oldProcesses.has(key) && !mine.has(proc.pid));
  return { files, stray };
}

const [mode, file] = process.argv.slice(2);
if (!file || (mode !== "snapshot" && mode !== "compare")) {
  console.error("usage: leak-check.mjs snapshot|compare FILE");
  process.exit(2);
}
if (mode === "snapshot") {
  writeFileSync(file, JSON.stringify(snapshot()));
  process.exit(0);
}

const before = JSON.parse(readFileSync(file, "utf8"));
let found = leaks(before);
const deadline = Date.now() + GRACE_MS;
while (found.stray.length > 0 && Date.now() < deadline) {
  await new Promise((resolve) => setTimeout(resolve, 250));
  found = leaks(before);
}
for (const file of found.files) {
  let kind = "";
  try {
    kind = ` -> ${readlinkSync(file)}`;
  } catch {
    // not a symlink
  }
  console.error(`left behind: file ${file}${kind}`);
}
for (const [, proc] of found.stray) console.error(`left behind: process ${proc.pid} (parent ${proc.ppid}): ${proc.cmdline.slice(0, 300)}`);
if (found.files.length > 0 || found.stray.length > 0) {
  console.error(`the test run left ${found.files.length} file(s) and ${found.stray.length} process(es) behind`);
  process.exit(1);
}
console.log("leak check: the test run left no files in the shared temporary directories and no processes");
