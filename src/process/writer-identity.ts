/**
 * Who writes a record (`WriterIdentity`) and whether that writer is certainly
 * gone. A pid alone says little: pids are recycled, so a writer is the pair
 * (pid, start time) on one host. Only a writer that is certainly gone may have
 * its checkpoint entries adopted; every doubt counts as alive, because
 * adopting a live registry's processes would have two registries steering
 * (and reaping) the same process.
 */

import { randomBytes } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import os from "node:os";
import type { WriterIdentity } from "./types.js";

interface ProcStat {
  /** Field 3: R, S, D, Z, X, ... */
  state: string;
  /** Field 22: clock ticks since boot. */
  startTime: string;
}

/** The fields after comm; undefined when the text is not a stat line. */
function parseStat(text: string): ProcStat | undefined {
  // Field 2 (comm) is in parentheses and may itself hold spaces and ')':
  // only the last ')' reliably ends it.
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  const fields = text.slice(close + 1).trim().split(/\s+/);
  // fields[0] is field 3, so field 22 is fields[19].
  const state = fields[0];
  const startTime = fields[19];
  if (state === undefined || startTime === undefined || !/^\d+$/.test(startTime)) return undefined;
  return { state, startTime };
}

/** `/proc/<pid>/stat` parsed; "absent" if there is no such file; undefined if it cannot be read or parsed, or not Linux. */
function readProcStat(pid: number): ProcStat | "absent" | undefined {
  if (process.platform !== "linux" || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ESRCH: the process ended between the open and the read.
    return code === "ENOENT" || code === "ESRCH" ? "absent" : undefined;
  }
}

/** The kernel's start time of `pid` (field 22 of `/proc/<pid>/stat`); undefined if no such process or not Linux. */
export function processStartTime(pid: number): string | undefined {
  const stat = readProcStat(pid);
  return typeof stat === "object" ? stat.startTime : undefined;
}

let ownStartTime: string | undefined;
let machine: { bootId?: string; pidNamespace?: string } | undefined;

/** This kernel's boot id and this process's pid namespace, where Linux tells them. */
function machineIdentity(): { bootId?: string; pidNamespace?: string } {
  if (machine) return machine;
  machine = {};
  if (process.platform !== "linux") return machine;
  try {
    machine.bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    // Unknown: the comparison below is skipped.
  }
  try {
    machine.pidNamespace = readlinkSync("/proc/self/ns/pid");
  } catch {
    // Unknown.
  }
  return machine;
}

/** This process's start time ("" where unknown); it never changes, so it is read once. */
function selfStartTime(): string {
  ownStartTime ??= processStartTime(process.pid) ?? "";
  return ownStartTime;
}

/** The identity of a registry in this Node process; `instance` is random unless given. */
export function currentWriter(instance?: string): WriterIdentity {
  return {
    pid: process.pid,
    startTime: selfStartTime(),
    host: os.hostname(),
    instance: instance ?? randomBytes(8).toString("hex"),
    ...machineIdentity(),
  };
}

/** Whether a process with `pid` exists, where procfs cannot say (not Linux). */
function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * Whether the writer is certainly gone: same host, and no process with that
 * pid, or one whose start time differs (pid recycled), or a zombie (it can
 * write nothing more). A writer on another host, or one we cannot judge
 * (startTime "" and the pid exists), is NOT gone.
 *
 * `self` is who asks (default: this process): its host is "here", and a writer
 * with its pid and start time is this very process, hence alive (another
 * registry instance in the same process counts as alive too).
 */
export function writerGone(writer: WriterIdentity, self?: WriterIdentity): boolean {
  const here = self ?? currentWriter("");
  if (writer.host !== here.host) return false;
  // Another pid namespace (a container with the same hostname and a shared home): its pids mean nothing here.
  if (writer.pidNamespace !== undefined && here.pidNamespace !== undefined && writer.pidNamespace !== here.pidNamespace) return false;
  // Same host name, another boot: every process of that boot is gone.
  if (writer.bootId !== undefined && here.bootId !== undefined && writer.bootId !== here.bootId) return true;
  // Not a pid any process can have: we cannot judge, and refusing to adopt is the safe side.
  if (!Number.isSafeInteger(writer.pid) || writer.pid <= 0) return false;
  if (writer.pid === here.pid && writer.startTime === here.startTime) return false;

  const stat = readProcStat(writer.pid);
  // Without a usable procfs (not mounted, say) every pid would look absent, and every writer gone.
  if (stat === "absent" && selfStartTime() !== "") return true;
  // procfs cannot answer: whether the pid exists is all that can be known; a start time cannot be compared.
  if (typeof stat !== "object") return !pidExists(writer.pid);
  if (stat.state === "Z" || stat.state === "X") return true;
  if (writer.startTime === "") return false;
  return stat.startTime !== writer.startTime;
}
