/**
 * bubblewrap (`bwrap`), the program that builds the sandbox on Linux: the
 * argument list for a layout, and a one-time check that it works here.
 *
 * Every command gets new user, mount (and, with the network off, network)
 * namespaces, with all capabilities dropped:
 *
 * - `--unshare-user --cap-drop ALL`: even when the runtime is root, the command
 *   has no capabilities on the host, so it cannot remount the read-only root
 *   writable (with only a mount namespace, root inside could, and did in our
 *   first trial). The read-only binds are locked mounts for it.
 * - `--ro-bind / /`, then the writable directories bound over it: writes
 *   anywhere else fail with "Read-only file system".
 * - `--dev /dev`: a fresh /dev with null, zero, random, tty, its own devpts
 *   (so `script` opens a pseudo-terminal) and no disks.
 * - A private /tmp (a host directory of the task's own, bound at /tmp, and
 *   `TMPDIR=/tmp`), so commands neither see nor touch other tasks' or other
 *   programs' temporary files.
 * - No pid namespace and no `--die-with-parent`, on purpose: a background
 *   process outlives the command that launched it, and the process registry
 *   finds it by its host pid through /proc (docs/sandbox.md).
 * - No `--new-session`: the command stays in the process group the runtime
 *   kills on a timeout. (The session's purpose, stopping TIOCSTI injection
 *   into a controlling terminal, does not arise: commands start in a session
 *   of their own without a terminal.)
 */

import { spawnSync } from "node:child_process";

import { findExecutable } from "../util/find-executable.js";

/** What is mounted where, as host paths (each bound at the same path inside, but `privateTmp`). */
export interface SandboxLayout {
  /** Whether the command keeps the host's network. Off: an empty network namespace (loopback only) and no /run. */
  network: boolean;
  /** A host directory of the task's own, mounted at /tmp. */
  privateTmp: string;
  /** Directories the command may write. None lies inside another (see `createCommandSandbox`). */
  writable: readonly string[];
  /** Directories shown read-only although the private /tmp would hide them (ones under the host's /tmp). */
  readable: readonly string[];
  /** Paths inside writable directories that stay read-only (the profile home, the runtime's state directory). */
  protectedPaths: readonly string[];
  /** The runtime's own writable directories (the shell's state files), mounted last: they may lie inside a protected path. */
  runtimeWritable: readonly string[];
}

/** `bwrap` and the arguments that run `argv` in `layout`. */
export function bubblewrapArgv(program: string, layout: SandboxLayout, argv: readonly string[]): string[] {
  const args = [program, "--unshare-user", "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev"];
  if (!layout.network) {
    // /run holds the sockets of local daemons (docker, podman, dbus): with the
    // network off, a command should not reach them either. Sockets elsewhere
    // (in the workspace, the home directory) stay reachable; see docs/sandbox.md.
    args.push("--unshare-net", "--tmpfs", "/run");
  }
  args.push("--bind", layout.privateTmp, "/tmp");
  // Parents before children, so a directory inside another one is mounted on top of it.
  const binds = [
    ...layout.readable.map((dir) => ({ dir, flag: "--ro-bind" })),
    ...layout.writable.map((dir) => ({ dir, flag: "--bind" })),
  ].sort((a, b) => depth(a.dir) - depth(b.dir));
  for (const { dir, flag } of binds) args.push(flag, dir, dir);
  for (const dir of layout.protectedPaths) args.push("--ro-bind", dir, dir);
  for (const dir of layout.runtimeWritable) args.push("--bind", dir, dir);
  args.push("--setenv", "TMPDIR", "/tmp", "--", ...argv);
  return args;
}

function depth(dir: string): number {
  return dir.split("/").filter(Boolean).length;
}

export interface BubblewrapCheck {
  /** The program's path, when found. */
  program?: string;
  /** `bubblewrap 0.8.0`, when it runs. */
  version?: string;
  /** Why it cannot be used, when it cannot. */
  problem?: string;
}

const checks = new Map<string, BubblewrapCheck>();

/**
 * Whether bubblewrap is installed and can build the sandbox here: runs
 * `bwrap` once with the same namespaces a command gets (user, mount, network)
 * and a trivial command. The answer is kept for the process's lifetime (per
 * program path); `forgetBubblewrapCheck` drops it.
 */
export function checkBubblewrap(program = "bwrap"): BubblewrapCheck {
  const cached = checks.get(program);
  if (cached) return cached;
  const check = runCheck(program);
  checks.set(program, check);
  return check;
}

/** Drops remembered answers of `checkBubblewrap` (after installing bubblewrap, in tests). */
export function forgetBubblewrapCheck(): void {
  checks.clear();
}

function runCheck(name: string): BubblewrapCheck {
  if (process.platform !== "linux") {
    return { problem: `the local sandbox uses bubblewrap, which needs Linux (this is ${process.platform}; macOS Seatbelt is not implemented)` };
  }
  const program = findExecutable(name);
  if (program === undefined) {
    return { problem: `bubblewrap (${name}) is not installed or not on PATH; install it (Debian/Ubuntu: apt-get install bubblewrap)` };
  }
  const run = spawnSync(
    program,
    ["--unshare-user", "--cap-drop", "ALL", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--", "/bin/sh", "-c", "exit 0"],
    { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "pipe"] },
  );
  if (run.error !== undefined || run.status !== 0) {
    const said = `${run.stderr ?? ""}`.trim().split("\n")[0] || run.error?.message || `exit status ${run.status ?? run.signal}`;
    return {
      program,
      problem: `${program} cannot create the sandbox's namespaces here (${said}); unprivileged user namespaces may be disabled (sysctl kernel.unprivileged_userns_clone, or an AppArmor restriction)`,
    };
  }
  const version = spawnSync(program, ["--version"], { encoding: "utf8", timeout: 5_000 });
  return { program, version: `${version.stdout ?? ""}`.trim() || "bubblewrap" };
}
