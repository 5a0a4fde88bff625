/**
 * What the agent-loop test files share: a scratch directory, the real local backend and a real
 * approval gate (manual mode, nobody asked: what needs approval is refused) installed as the
 * process's environment manager and gate for the file's tests and restored after them, and scripted
 * OpenAI-compatible servers closed after each test.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, beforeAll } from "vitest";

import { getApprovalGate, setApprovalGate } from "../../src/approval/default-gate.js";
import { getEnvironmentManager, setEnvironmentManager } from "../../src/environments/manager.js";
import { localFileTools, type LocalFileTools } from "./local-file-tools.js";
import type { ScriptEntry, ScriptedOpenAI } from "./scripted-openai.js";
import { useScriptedServers } from "./test-resources.js";

export interface LoopFixture {
  /** The file's scratch directory (removed after its tests), the terminal's starting directory. */
  scratch: string;
  /** `$HOME` of the local backend. */
  home: string;
  tools: LocalFileTools;
  /** A scripted endpoint, closed after the current test. */
  serve(script: ScriptEntry[]): Promise<ScriptedOpenAI>;
}

/** Call at the top of a test file: registers the hooks that install and restore the tools. */
export function useLoopFixture(name: string): LoopFixture {
  const scratch = mkdtempSync(path.join(tmpdir(), `mibyan-${name}-`));
  const home = mkdtempSync(path.join(scratch, "home-"));
  const tools = localFileTools(scratch, home);
  const previousGate = getApprovalGate();
  const previousManager = getEnvironmentManager();

  beforeAll(() => {
    setEnvironmentManager(tools.manager);
    setApprovalGate(tools.gate);
  });
  afterAll(async () => {
    setApprovalGate(previousGate);
    setEnvironmentManager(previousManager);
    await tools.manager.closeAll();
    rmSync(scratch, { recursive: true, force: true });
  });

  return { scratch, home, tools, serve: useScriptedServers() };
}
