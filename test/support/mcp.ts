// Shared pieces of the MCP client tests: the fixture server, a registry with a memory logger, a
// discovery that is always closed after the test, a clock driven by hand, and process checks.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { afterEach } from "vitest";

import type { McpServerConfig } from "../../src/config/config-types.js";
import { discoverMcpTools, type DiscoverMcpOptions, type McpHandle } from "../../src/mcp/client/discover.js";
import type { McpClock } from "../../src/mcp/client/types.js";
import { ToolRegistry } from "../../src/registry/tool-registry.js";
import { createMemoryLogger, type MemoryLogger } from "../../src/util/logger.js";

export const FIXTURE = fileURLToPath(new URL("../fixtures/mcp/server.mjs", import.meta.url));

/** A stdio entry running the fixture with `flags`. */
export function fixtureServer(flags: string[] = [], extra: Partial<McpServerConfig> = {}): McpServerConfig {
  return { command: process.execPath, args: [FIXTURE, ...flags], ...extra };
}

export interface McpTestBed {
  registry: ToolRegistry;
  logger: MemoryLogger;
  handle: McpHandle;
}

const openHandles: McpHandle[] = [];
const tempDirs: string[] = [];

afterEach(async () => {
  await Promise.all(openHandles.splice(0).map((handle) => handle.close()));
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A temporary directory removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(path.join(process.env.TMPDIR ?? tmpdir(), "mcp-test-"));
  tempDirs.push(dir);
  return dir;
}

/** `discoverMcpTools` into a fresh registry; closed after the test whatever happens. */
export async function discover(config: Record<string, McpServerConfig>, options: Partial<DiscoverMcpOptions> = {}): Promise<McpTestBed> {
  // A registry the test made keeps its own (memory) logger, so one logger sees every discovery into it.
  const registry = options.registry ?? new ToolRegistry({ logger: createMemoryLogger() });
  const logger = (options.logger ?? registry.logger) as MemoryLogger;
  const env = { ...process.env, ...(options.env ?? {}) };
  const handle = await discoverMcpTools({ ...options, registry, config, logger, env });
  openHandles.push(handle);
  return { registry, logger, handle };
}

export function messages(logger: MemoryLogger, level?: "debug" | "info" | "warn" | "error"): string[] {
  return logger.messages.filter((m) => level === undefined || m.level === level).map((m) => m.message);
}

/** Whether `pid` is a live process (a zombie waiting for its parent, or for init in a container, is not). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

export async function waitFor(check: () => boolean, ms = 3_000, what = "condition"): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A clock whose timers fire only when the test says so. */
export class ManualClock implements McpClock {
  private time = 0;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; ms: number; fn: () => void }>();

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  advance(ms: number): void {
    this.time += ms;
  }

  /** Pending timer delays, earliest first. */
  pending(): number[] {
    return [...this.timers.values()].sort((a, b) => a.at - b.at).map((t) => t.ms);
  }

  /** Waits (in real time) until a timer of `ms` is pending, moves the clock to it and fires it. */
  async fire(ms: number, within = 4_000): Promise<void> {
    let found: [number, { at: number; ms: number; fn: () => void }] | undefined;
    await waitFor(() => (found = [...this.timers].find(([, t]) => t.ms === ms)) !== undefined, within, `a ${ms} ms timer (pending: ${this.pending().join(", ")})`);
    const [id, timer] = found!;
    this.timers.delete(id);
    this.time = Math.max(this.time, timer.at);
    timer.fn();
  }
}
