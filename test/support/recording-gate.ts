/**
 * What the framework-adapter test files share: a scratch directory, and before each test a fresh
 * approval gate in manual mode whose own prompt records the question and says no (a framework's
 * call must never reach it) and which records every decision. The process's previous gate is put
 * back after the file's tests. `asked` and `decisions` are emptied before each test.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, beforeEach } from "vitest";

import { getApprovalGate, setApprovalGate } from "../../src/approval/default-gate.js";
import type { ApprovalRequest, GateDecision } from "../../src/approval/flow/types.js";
import { createMemoryLogger } from "../../src/util/logger.js";

export interface RecordingGate {
  scratch: string;
  /** Questions put to the gate's own prompt during the current test. */
  asked: ApprovalRequest[];
  /** The gate's decisions during the current test. */
  decisions: GateDecision[];
}

export function useRecordingGate(name: string): RecordingGate {
  const scratch = mkdtempSync(path.join(tmpdir(), `mibyan-${name}-`));
  const previousGate = getApprovalGate();
  const asked: ApprovalRequest[] = [];
  const decisions: GateDecision[] = [];
  afterAll(() => {
    setApprovalGate(previousGate);
    rmSync(scratch, { recursive: true, force: true });
  });
  beforeEach(() => {
    asked.length = 0;
    decisions.length = 0;
    setApprovalGate({
      home: mkdtempSync(path.join(scratch, "home-")),
      settings: { mode: "manual" },
      // The gate's own prompt: never the answer for a framework's call.
      surface: { kind: "test", ask: async (r) => (asked.push(r), { scope: "deny", reason: "the gate's own prompt said no" }) },
      logger: createMemoryLogger(),
      observers: [{ onDecision: (d) => void decisions.push(d) }],
    });
  });
  return { scratch, asked, decisions };
}
