/**
 * Where a process a session asks about is: managed by this registry (`live`),
 * by another live registry (`elsewhere`, as the checkpoint lists it), or only
 * a receipt. A session that may not see a process gets `ProcessNotFoundError`,
 * exactly as for an id that never existed.
 */

import { ProcessNotFoundError, ProcessStateError } from "./process-errors.js";
import { ProcessPersistence } from "./process-persistence.js";
import type { ProcessRecord } from "./process-record.js";
import type { RegistryCore } from "./registry-core.js";
import type { CheckpointEntry, ProcessReceipt } from "./types.js";

export type Found = { kind: "live"; record: ProcessRecord } | { kind: "elsewhere"; entry: CheckpointEntry } | { kind: "receipt"; receipt: ProcessReceipt };

/** Adopts orphans once, before the registry's first listing or lookup. */
export async function adoptOnce(core: RegistryCore, adopt: () => Promise<void>): Promise<void> {
  if (!core.persistence || !core.hasEnvironments) return;
  if (!core.persistence.adoptedOnce) {
    core.persistence.adoptedOnce = true;
    await adopt();
  }
}

export async function findProcess(core: RegistryCore, adopt: () => Promise<void>, sessionId: string, id: string): Promise<Found> {
  if (typeof id !== "string") throw new ProcessNotFoundError(String(id));
  const persistence = core.persistence;
  let record = core.records.get(id);
  if (!record && persistence && ProcessPersistence.validId(id)) {
    await adoptOnce(core, adopt);
    record = core.records.get(id);
    if (!record) {
      const inCheckpoint = async () => (await persistence.checkpoint.read().catch(() => [] as CheckpointEntry[])).find((e) => e.id === id);
      let entry = await inCheckpoint();
      if (entry && core.hasEnvironments && persistence.orphaned(entry)) {
        await adopt();
        record = core.records.get(id);
        // Another registry may have claimed it first.
        if (!record) entry = await inCheckpoint();
      }
      if (!record && entry && entry.writer.instance !== core.writer.instance) {
        if (await core.lineage.mayRead(entry.owner, sessionId)) return { kind: "elsewhere", entry };
        throw new ProcessNotFoundError(id);
      }
    }
  }
  if (record) {
    // Ended here and forgotten by nothing: its receipt, when there is one, is the answer of record.
    if (await core.lineage.mayRead(record.entry.owner, sessionId)) return { kind: "live", record };
    throw new ProcessNotFoundError(id);
  }
  const receipt = await receiptFor(core, sessionId, id);
  if (receipt) return { kind: "receipt", receipt };
  throw new ProcessNotFoundError(id);
}

export async function receiptFor(core: RegistryCore, sessionId: string, id: string): Promise<ProcessReceipt | undefined> {
  if (!core.persistence || !ProcessPersistence.validId(id)) return undefined;
  let receipt: ProcessReceipt | undefined;
  try {
    receipt = await core.persistence.receipts.read(id);
  } catch (err) {
    // A corrupt file must not tell another session that the id exists; the owner is warned.
    if ((err as { code?: unknown }).code !== "corrupt_receipt") throw err;
    process.emitWarning((err as Error).message, "MibyanWarning");
    return undefined;
  }
  if (!receipt || !(await core.lineage.mayRead(receipt.owner, sessionId))) return undefined;
  return receipt;
}

/** The record this registry manages; undefined when the process only has a receipt; refuses one another live registry manages. */
export async function managedRecord(core: RegistryCore, adopt: () => Promise<void>, sessionId: string, id: string, what: string): Promise<ProcessRecord | undefined> {
  const found = await findProcess(core, adopt, sessionId, id);
  if (found.kind === "live") return found.record;
  if (found.kind === "receipt") return undefined;
  const w = found.entry.writer;
  throw new ProcessStateError(`Cannot ${what} process ${id} from here: another mibyan process (pid ${w.pid} on ${w.host}) manages it; use that one, or wait for it to end.`);
}

/**
 * Checkpoint entries that another registry manages (or managed). `strict`:
 * a corrupt checkpoint is an error (a listing must not say "nothing runs"
 * when it cannot tell); otherwise only this registry's own processes count.
 */
export async function elsewhere(core: RegistryCore, strict = false): Promise<CheckpointEntry[]> {
  if (!core.persistence) return [];
  const read = core.persistence.checkpoint.read();
  const entries = strict ? await read : await read.catch(() => [] as CheckpointEntry[]);
  return entries.filter((e) => e.writer.instance !== core.writer.instance && !core.records.has(e.id));
}

