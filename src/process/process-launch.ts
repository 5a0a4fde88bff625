/**
 * Starting a background process, write-ahead:
 *
 * 1. the registry picks the id, the directory (`<its root>/<id>`) and the
 *    owner token, checks that the profile home can take the checkpoint and
 *    the receipts, and records a `launching` entry in the checkpoint: a
 *    registry killed from here on leaves an entry that a later one finds;
 * 2. the launcher runs in the task's environment and reports the runner's
 *    pid, group and start time as the kernel gives them (one strict line);
 *    the runner holds the command at its gate;
 * 3. the registry records that pid in the checkpoint;
 * 4. only then does it say `go`, and the command runs.
 *
 * A failure at any step leaves nothing running: before step 4 the command has
 * not run, and the runner is told to abort (or gives up by itself).
 */

import { randomBytes } from "node:crypto";

import type { Environment } from "../environments/types.js";
import { redactSecrets } from "../redaction/redact.js";
import { NO_PTY_MESSAGE } from "../terminal/pty-command.js";
import { gateScript, removeScript } from "./background-scripts.js";
import { DEFAULT_CONTROL_ROOT, acceptableRoot } from "./control-dir.js";
import { launchScript, parseLaunch } from "./launch-script.js";
import { localGate, localRemove, prepareLocalDir, visibleHere } from "./local-control.js";
import { ProcessStateError } from "./process-errors.js";
import { ProcessPersistence } from "./process-persistence.js";
import { newProcessRecord, type ProcessRecord } from "./process-record.js";
import { SCRIPT_TIMEOUT_MS, type RegistryCore } from "./registry-core.js";
import type { CheckpointEntry } from "./types.js";
import { processStartTime } from "./writer-identity.js";

export interface LaunchRequest {
  owner: string;
  command: string;
  pty: boolean;
  cwd: string | undefined;
  timeoutSeconds: number;
  notifyOnComplete: boolean;
  watchPatterns: string[];
  signal: AbortSignal | undefined;
}

/** What the registry needs to know of an environment before its first launch, asked once per environment and root. */
interface EnvInfo {
  /** The control root, expanded there. */
  root: string;
  /** The environment sees Node's pid namespace and mounts (a local environment without a sandbox). */
  shared: boolean;
}

const envInfos = new WeakMap<Environment, Map<string, Promise<EnvInfo>>>();

function envInfo(core: RegistryCore, env: Environment): Promise<EnvInfo> {
  const configured = core.options.controlRoot;
  const key = configured ?? DEFAULT_CONTROL_ROOT;
  let byRoot = envInfos.get(env);
  if (!byRoot) {
    byRoot = new Map();
    envInfos.set(env, byRoot);
  }
  let info = byRoot.get(key);
  if (!info) {
    const root = configured === undefined ? `"${DEFAULT_CONTROL_ROOT}"` : `'${configured}'`;
    const script = `s=0; [ /proc/$$/ns/pid -ef /proc/${process.pid}/ns/pid ] && [ /proc/$$/ns/mnt -ef /proc/${process.pid}/ns/mnt ] && s=1; printf '%s %s' ${root} "$s"`;
    info = env.exec(script, { timeoutMs: SCRIPT_TIMEOUT_MS, maxOutputChars: 4096, saveState: false }).then((r) => {
      const match = /^(\/\S+) ([01])$/.exec(r.output);
      if (r.exitCode !== 0 || !match || !acceptableRoot(match[1]!, configured)) {
        throw new Error(`the environment's control root could not be found (${JSON.stringify(r.output.slice(0, 200))})`);
      }
      return { root: match[1]!, shared: match[2] === "1" };
    });
    byRoot.set(key, info);
    const map = byRoot;
    info.catch(() => map.delete(key));
  }
  return info;
}

/** Starts the process as described above; resolves with its record once the command was released. */
export async function launchProcess(core: RegistryCore, env: Environment, request: LaunchRequest): Promise<ProcessRecord> {
  const persistence = core.persistence;
  const id = ProcessPersistence.newId();
  const nonce = randomBytes(16).toString("hex");
  const where = await envInfo(core, env);
  const dir = `${where.root}/${id}`;
  const intent: CheckpointEntry = {
    id,
    owner: request.owner,
    taskId: env.taskId,
    backend: env.backend,
    pid: 0,
    pgid: 0,
    startTime: "",
    command: redactSecrets(request.command),
    cwd: request.cwd ?? env.cwd ?? null,
    dir,
    logPath: `${dir}/log`,
    pty: request.pty,
    startedAt: new Date().toISOString(),
    notifyOnComplete: request.notifyOnComplete,
    watchPatterns: request.watchPatterns,
    writer: core.writer,
    phase: "launching",
    nonce,
  };
  if (persistence) {
    try {
      await persistence.assertWritable();
      await persistence.checkpoint.put([intent]);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      throw new ProcessStateError(
        `Cannot start a background process: the profile home ${persistence.home} cannot be written${typeof code === "string" ? ` (${code})` : ""}: ${(err as Error).message}. Nothing was started; fix its permissions or set MIBYAN_HOME.`,
      );
    }
  }
  const forget = () => persistence?.checkpoint.remove([id], { force: true }).catch(() => undefined);

  let launched;
  try {
    // On this machine's own file system, Node makes the directory: one program fewer in the launcher.
    const premade = where.shared && env.backend === "local";
    if (premade) await prepareLocalDir(where.root, dir, nonce);
    const result = await env.exec(
      launchScript(request.command, { pty: request.pty, timeoutSeconds: request.timeoutSeconds, root: where.root, id, nonce, gateSeconds: core.options.gateSeconds, premade }, process.pid),
      {
        timeoutMs: SCRIPT_TIMEOUT_MS,
        maxOutputChars: 64 * 1024,
        ...(request.cwd !== undefined ? { cwd: request.cwd } : {}),
        ...(request.signal ? { signal: request.signal } : {}),
        saveState: false,
      },
    );
    if (result.output.includes(NO_PTY_MESSAGE)) throw new ProcessStateError(NO_PTY_MESSAGE);
    launched = parseLaunch(result.output, (reported) => reported === dir);
    if (typeof launched === "string" || result.exitCode !== 0) {
      const why = typeof launched === "string" ? launched : `exit code ${result.exitCode}`;
      throw new Error(`could not start the background process (${why}): ${result.output.trim().slice(0, 500)}`);
    }
  } catch (err) {
    await abandon(env, dir, nonce, false);
    await forget();
    throw err;
  }

  const entry: CheckpointEntry = { ...intent, pid: launched.pid, pgid: launched.pid, startTime: launched.startTime };
  delete entry.phase;
  if (launched.holderPid !== undefined) {
    entry.holderPid = launched.holderPid;
    entry.holderStartTime = launched.holderStartTime!;
  }
  const local = env.backend === "local" && launched.shared && processStartTime(launched.pid) === launched.startTime && (await visibleHere(dir, nonce));
  if (persistence) {
    try {
      await persistence.checkpoint.put([entry]);
    } catch (err) {
      // Not recorded: it must not run, or no later registry could find it.
      await abandon(env, dir, nonce, local);
      await forget();
      throw new ProcessStateError(`Cannot start a background process: its pid could not be recorded in the checkpoint (${(err as Error).message}). It did not run.`);
    }
  }

  const released = local ? await localGate(dir, "go") : (await gateRun(env, gateScript(dir, "go"))) === "ok";
  if (!released) {
    await abandon(env, dir, nonce, local);
    await forget();
    throw new ProcessStateError("Cannot start a background process: its runner stopped waiting before it was released. It did not run.");
  }
  const record = newProcessRecord(entry, env, core.options.bufferChars, core.options.watch);
  record.local = local;
  record.release = env.hold?.();
  core.records.set(id, record);
  core.schedulePolling();
  return record;
}

async function gateRun(env: Environment, script: string): Promise<string> {
  const result = await env.exec(script, { timeoutMs: SCRIPT_TIMEOUT_MS, maxOutputChars: 4096, saveState: false });
  return result.output.trim();
}

/** Tells a held runner to give up (the command never runs) and removes the directory if it is the registry's. */
export async function abandon(env: Environment | undefined, dir: string, nonce: string, local: boolean): Promise<void> {
  try {
    if (local) {
      await localGate(dir, "abort");
      await localRemove(dir, nonce);
    } else if (env) {
      await gateRun(env, `${gateScript(dir, "abort")}\n${removeScript(dir, nonce)}`);
    }
  } catch {
    // Best effort: a runner nobody releases gives up by itself at its gate's time limit.
  }
}
