import { listApprovals, revokeApproval } from "../../approval/flow/allowlist.js";

/** `mibyan approvals [list]`: the persisted (scope `always`) approvals of config.yaml. */
export function listCommand(json: boolean): number {
  const entries = listApprovals();
  if (json) {
    process.stdout.write(`${JSON.stringify({ approvals: entries }, null, 2)}\n`);
    return 0;
  }
  if (entries.length === 0) {
    process.stdout.write("No persisted approvals.\n");
    return 0;
  }
  for (const entry of entries) {
    process.stdout.write(`${entry.id}  ${entry.rule}  ${entry.backend}  ${entry.prefix}${entry.added ? `  (added ${entry.added})` : ""}\n`);
  }
  return 0;
}

/** `mibyan approvals revoke ID`: exit 1 when no approval has that id. */
export async function revokeCommand(id: string, json: boolean): Promise<number> {
  const removed = await revokeApproval(id);
  if (removed === undefined) {
    process.stderr.write(`mibyan: no persisted approval has the id ${JSON.stringify(id)} (see mibyan approvals list)\n`);
    return 1;
  }
  process.stdout.write(json ? `${JSON.stringify({ revoked: removed })}\n` : `Revoked ${removed.id}: ${removed.rule} ${removed.prefix} (${removed.backend})\n`);
  return 0;
}
