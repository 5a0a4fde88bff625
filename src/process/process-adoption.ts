/**
 * Adoption: a registry takes over the checkpoint entries of registries that
 * are gone (their Node process died), under the checkpoint's lock so that
 * every entry goes to exactly one registry.
 *
 * Nothing in an entry is acted on unless it is one the registry could have
 * written (`control-dir.ts`): its directory is `<a registry root>/<its id>`,
 * and its pid is a group leader above 1. A `launching` entry (a registry died
 * in the middle of a start) is written off: its runner is told to abort (or
 * gives up by itself), so the command never runs unrecorded. Any other entry
 * is checked in its environment: still running with the recorded start time
 * (adopted), ended meanwhile (its receipt is written), or gone or recycled
 * (written off as `lost`, never signalled).
 */

import type { Environment } from "../environments/types.js";
import { untrustedEntryReason } from "./control-dir.js";
import { visibleHere } from "./local-control.js";
import { abandon } from "./process-launch.js";
import { newProcessRecord } from "./process-record.js";
import type { RegistryCore } from "./registry-core.js";
import type { CheckpointEntry } from "./types.js";
import { processStartTime } from "./writer-identity.js";

export async function adoptOrphans(core: RegistryCore): Promise<void> {
  if (!core.persistence || !core.hasEnvironments) return;
  const claimed = await core.persistence.checkpoint.claimOrphans((entry) => !core.records.has(entry.id));
  await Promise.all(claimed.map((entry) => adoptEntry(core, entry)));
  if (claimed.length > 0) core.schedulePolling();
}

async function adoptEntry(core: RegistryCore, entry: CheckpointEntry): Promise<void> {
  const record = newProcessRecord(entry, undefined, core.options.bufferChars, core.options.watch);
  record.adopted = true;
  core.records.set(entry.id, record);
  const untrusted = untrustedEntryReason(entry, core.options.controlRoot);
  if (untrusted !== undefined) {
    // No environment on the record: finishing it touches nothing in it.
    await core.finish(record, "lost", undefined, untrusted);
    return;
  }
  let env: Environment | undefined;
  try {
    env = await (await core.provider())?.get(entry.taskId);
  } catch (err) {
    await core.finish(record, "lost", undefined, `its environment (task ${entry.taskId}) could not be opened again: ${(err as Error).message}`);
    return;
  }
  if (!env || env.backend !== entry.backend) {
    await core.finish(record, "lost", undefined, `it ran on the ${entry.backend} backend, and task ${entry.taskId} now uses ${env?.backend ?? "none"}`);
    return;
  }
  record.env = env;
  const here = env.backend === "local" && entry.nonce !== undefined && (await visibleHere(entry.dir, entry.nonce));
  if (entry.phase === "launching") {
    if (entry.nonce !== undefined) await abandon(env, entry.dir, entry.nonce, here);
    await core.finish(record, "lost", undefined, "its start was interrupted (the mibyan process starting it stopped) before the command was released; it never ran");
    return;
  }
  // The fast path only when the recorded process is visible from here as itself (same pid namespace).
  record.local = here && processStartTime(entry.pid) === entry.startTime;
  record.release = env.hold?.();
  // The first status read decides: still running (adopted), ended meanwhile (receipt), or gone/recycled (lost, never signalled).
  await core.refresh(record).catch(() => undefined);
}
