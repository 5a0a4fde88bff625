/**
 * What the file-tool tests share: a local environment rooted in a scratch
 * directory with its own `$HOME`, and a real approval gate in manual mode that
 * answers nobody (non-interactive: anything needing approval is refused).
 */

import { mkdtempSync } from "node:fs";
import { join } from "node:path";

import { MemoryAllowlist } from "../../src/approval/flow/allowlist.js";
import { ApprovalGate } from "../../src/approval/flow/gate.js";
import { NonInteractiveSurface } from "../../src/approval/surfaces/non-interactive.js";
import { createLocalFactory } from "../../src/environments/local.js";
import { EnvironmentManager } from "../../src/environments/manager.js";
import type { ToolContext } from "../../src/registry/types.js";
import { createMemoryLogger } from "../../src/util/logger.js";

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
export type Handler = (a: Record<string, unknown>, c: ToolContext) => Promise<string>;

export interface LocalFileTools {
  manager: EnvironmentManager;
  gate: ApprovalGate;
}

/** A manager whose local backend starts in `root` with `HOME=home`, and a gate that refuses what needs approval. */
export function localFileTools(root: string, home: string): LocalFileTools {
  const manager = new EnvironmentManager({
    factories: [createLocalFactory({ initialCwd: root, env: () => ({ ...process.env, HOME: home }) })],
    defaultBackend: "local",
    closeOnExit: false,
    idleTimeoutMs: 0,
  });
  const gate = new ApprovalGate({
    settings: { mode: "manual" },
    surface: new NonInteractiveSurface("deny"),
    allowlist: new MemoryAllowlist(),
    logger: createMemoryLogger(),
    home: mkdtempSync(join(root, "gate-home-")),
  });
  return { manager, gate };
}

export function fileToolContext(session: string): ToolContext {
  return { signal: new AbortController().signal, toolName: "file", taskId: session, sessionId: session };
}

/** Calls a tool handler and parses its JSON answer. */
export async function callFileTool(handler: Handler, args: Record<string, unknown>, session: string): Promise<Json> {
  return JSON.parse(await handler(args, fileToolContext(session))) as Json;
}
