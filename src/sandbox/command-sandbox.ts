/**
 * The one interface the runtime sees of the OS sandbox: wrap a command line,
 * and say whether the sandbox is active and, when it cannot be, why.
 * `LocalEnvironment` (every terminal command, background processes, file
 * tools' scripts) and `runCode` (execute_code's node process) wrap their
 * argv with it; neither knows bubblewrap.
 *
 * What is writable, by mode:
 *
 * | | read-only | workspace-write |
 * |---|---|---|
 * | the workspace (the task's starting directory) | no | yes |
 * | `writable_roots` | no | yes |
 * | the task's state directory (cwd, exported variables) | yes | yes |
 * | /tmp (private to the task) | yes | yes |
 * | the profile home (config, approvals, process records) | no | no, even inside the workspace |
 * | everything else | no | no |
 *
 * Configured but unusable is an error, never a silent fallback: creating a
 * sandbox throws `SandboxUnavailableError`, and the environment is not created.
 */

import { mkdirSync, realpathSync, statSync } from "node:fs";
import path from "node:path";

import { mibyanHome } from "../config/home.js";
import { bubblewrapArgv, checkBubblewrap, type SandboxLayout } from "./bubblewrap.js";
import { SandboxConfigError, SandboxUnavailableError } from "./errors.js";
import type { SandboxMode, SandboxPolicy } from "./policy.js";

/** Whether commands run sandboxed, for `mibyan tools` and callers. */
export interface SandboxStatus {
  mode: SandboxMode;
  network: boolean;
  writableRoots: string[];
  /** Commands run inside the sandbox. False when the mode is `off`, or when it cannot work here (`reason`). */
  active: boolean;
  /** Why a configured sandbox cannot be used (commands are then refused, not run unsandboxed). */
  reason?: string;
  /** The bwrap binary and its version, when found. */
  program?: string;
  version?: string;
}

export interface CommandSandbox {
  readonly status: SandboxStatus;
  readonly layout: SandboxLayout;
  /** The argv that runs `argv` inside the sandbox. */
  wrap(argv: readonly string[]): string[];
}

/** Where one sandbox's directories are on the host. */
export interface SandboxPlaces {
  /** Writable in `workspace-write` mode, read-only in `read-only` mode. */
  workspace: string;
  /** Directories the runtime's own scripts write inside the sandbox (the shell's state files). Writable in every mode. */
  runtimeWritable?: readonly string[];
  /**
   * Directories of the runtime whose contents bind sources come from (the task's
   * state directory, holding the private /tmp and the shell's files): kept
   * read-only when they lie inside a writable directory, so a command cannot
   * swap a source for a symlink before the next command is mounted.
   */
  runtimeOwned?: readonly string[];
  /** Directories that must stay visible (read-only) even when they lie under the host's /tmp (execute_code's program). */
  runtimeReadable?: readonly string[];
  /** The host directory mounted at /tmp; created (0700) when missing. */
  privateTmp: string;
  /** The profile home, kept read-only. Default: `mibyanHome()`. */
  profileHome?: string;
  /** The bubblewrap program. Default `bwrap` on PATH. */
  program?: string;
}

/** The status of `policy` without building a sandbox (no directories needed): what `mibyan tools` prints. */
export function sandboxStatus(policy: SandboxPolicy, program?: string): SandboxStatus {
  const status: SandboxStatus = { mode: policy.mode, network: policy.network, writableRoots: [...policy.writableRoots], active: false };
  if (policy.mode === "off") return status;
  const check = checkBubblewrap(program);
  if (check.program !== undefined) status.program = check.program;
  if (check.version !== undefined) status.version = check.version;
  if (check.problem !== undefined) status.reason = check.problem;
  else status.active = true;
  return status;
}

function existingDirectory(dir: string, what: string): string {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    throw new SandboxConfigError(`${what} ${dir} does not exist`);
  }
  if (!statSync(real).isDirectory()) throw new SandboxConfigError(`${what} ${dir} is not a directory`);
  return real;
}

function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

/**
 * What keeps `dir` read-only inside writable `roots`: for each root holding
 * it, the root's entry that leads to it (`~/.mibyan`, or `~/.config` for
 * `~/.config/mibyan`). Protecting that entry rather than `dir` itself matters:
 * a mount point cannot be renamed, but its parent can, so a command could
 * otherwise move `~/.config` away and put a config of its own where the
 * runtime reads it. `dir` is created when missing, so there is something to mount.
 */
function protectedEntries(dir: string, roots: readonly string[], what: string): string[] {
  const resolved = path.resolve(dir);
  const holders = roots.filter((root) => isInside(resolved, root));
  if (holders.length === 0) return [];
  mkdirSync(resolved, { recursive: true, mode: 0o700 });
  const real = realpathSync(resolved);
  const entries = new Set<string>();
  for (const root of holders) {
    if (real === root) throw new SandboxConfigError(`the writable directory ${root} is ${what} itself; it cannot be writable while ${what} stays read-only`);
    if (!isInside(real, root)) continue;
    entries.add(path.join(root, path.relative(root, real).split(path.sep)[0]!));
  }
  return [...entries];
}

/**
 * The outermost of `dirs`: one inside another is writable through it already,
 * and must not be mounted on its own, since bwrap resolves a bind's source on
 * the host at every command and the command could have renamed a parent and
 * put a symlink in its place (a workspace inside a writable root, or a root
 * inside the workspace).
 */
function outermost(dirs: readonly string[]): string[] {
  const unique = [...new Set(dirs)];
  return unique.filter((dir) => !unique.some((other) => other !== dir && isInside(dir, other)));
}

/** Builds the sandbox for `policy` (not `off`). Throws `SandboxUnavailableError` or `SandboxConfigError`. */
export function createCommandSandbox(policy: SandboxPolicy, places: SandboxPlaces): CommandSandbox {
  if (policy.mode === "off") throw new Error("createCommandSandbox: the policy's mode is off");
  const status = sandboxStatus(policy, places.program);
  if (!status.active) throw new SandboxUnavailableError(status.reason ?? "bubblewrap cannot be used");
  const program = status.program!;

  const workspace = existingDirectory(places.workspace, "the workspace");
  const writable: string[] = [];
  const readable: string[] = [];
  if (policy.mode === "workspace-write") {
    // Writing "everything under /" is no sandbox; refuse rather than pretend.
    if (workspace === "/") throw new SandboxConfigError("the workspace is / (the task starts in the root directory): workspace-write would make everything writable; set terminal.cwd to a project directory");
    writable.push(workspace);
    for (const root of policy.writableRoots) {
      const real = existingDirectory(root, "terminal.local.sandbox.writable_roots entry");
      if (real === "/") throw new SandboxConfigError("terminal.local.sandbox.writable_roots must not contain /");
      writable.push(real);
    }
  } else {
    readable.push(workspace);
  }
  const outer = outermost(writable);
  const protectedPaths = new Set(protectedEntries(places.profileHome ?? mibyanHome(), outer, "the profile home"));
  for (const dir of places.runtimeOwned ?? []) {
    for (const entry of protectedEntries(dir, outer, "the runtime's state directory")) protectedPaths.add(entry);
  }
  for (const dir of places.runtimeReadable ?? []) readable.push(existingDirectory(dir, "the runtime directory"));
  const runtimeWritable = (places.runtimeWritable ?? []).map((dir) => existingDirectory(dir, "the runtime directory"));
  mkdirSync(places.privateTmp, { recursive: true, mode: 0o700 });

  const layout: SandboxLayout = {
    network: policy.network,
    privateTmp: realpathSync(places.privateTmp),
    writable: outer,
    readable: [...new Set(readable)],
    protectedPaths: [...protectedPaths],
    runtimeWritable,
  };
  return {
    status,
    layout,
    wrap: (argv) => bubblewrapArgv(program, layout, argv),
  };
}
