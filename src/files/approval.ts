/**
 * Writes pass the same approval gate as terminal commands.
 *
 * The gate judges shell commands, so a write is put to it as the command that
 * would do the same: `tee -- 'PATH' ['REAL PATH']` (the path as named and, when
 * symlinks lead elsewhere, where it really goes). Detection knows `tee`
 * writes its operands, so the write is classified exactly like a terminal
 * `... | tee PATH`: `/etc/hosts` is a system_file_write, `~/.ssh/authorized_keys`
 * and `/etc/passwd` credential_file_writes, `~/.bashrc` a shell_rc_write,
 * `/dev/sda` a hardline raw-device write; a file in a project is safe. The
 * environment's isolation goes with it, so the backend rules (an isolated
 * container needs no approval but for hardline rules) and the approval keys
 * (rule, `tee PATH`, backend) are the terminal's: an approval given for one
 * covers the other.
 */

import type { ApprovalGate } from "../approval/flow/gate.js";
import type { BackendInfo, CallApprovalScope } from "../approval/flow/types.js";
import { shellQuote } from "../environments/shell-state.js";
import { FileToolError } from "./errors.js";

/** The part of the approval gate the file tools use. */
export type WriteGate = Pick<ApprovalGate, "check">;

/** Asks whether the paths may be written; throws `FileToolError("blocked")` when not. */
export type WriteApproval = (paths: readonly string[]) => Promise<void>;

/** The command the gate is asked about for a write to `paths`. */
export function writeCommand(paths: readonly string[]): string {
  return `tee -- ${paths.map(shellQuote).join(" ")}`;
}

export interface GateApprovalOptions {
  gate: WriteGate;
  backend: BackendInfo;
  sessionId: string;
  signal?: AbortSignal;
  /** The approval scope of the call that writes (`ctx.approvalScope`). */
  approvalScope?: CallApprovalScope | undefined;
  /** The tool asking (for the message). */
  tool: string;
}

export function gateApproval(options: GateApprovalOptions): WriteApproval {
  return async (paths) => {
    const decision = await options.gate.check(writeCommand(paths), {
      sessionId: options.sessionId,
      backend: options.backend,
      signal: options.signal,
      approvalScope: options.approvalScope,
    });
    if (!decision.allowed) {
      throw new FileToolError("blocked", `${options.tool} was not allowed to write ${paths[0]}: ${decision.reason}`);
    }
  };
}
