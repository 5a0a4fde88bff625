/**
 * Stdio MCP servers started early (src/mcp/client/launch.ts): spawned before the client (the SDK) is
 * loaded, as soon as the full command-line check allows, then adopted by the first connection. Real
 * processes throughout; every test plays the attacker for one promise: a refused entry never runs,
 * not even early; a failing early child is handled like any other; no child outlives a close, a throw,
 * or a client that fails to load.
 *
 * The first two tests must run before anything in this file loads the bash grammar (each test file
 * gets fresh modules): they check what happens without it.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";

import { discoverLaunched } from "../src/mcp/client/discover.js";
import { launchMcpServers, type McpLaunch } from "../src/mcp/client/launch.js";
import { discoverySettings } from "../src/mcp/client/options.js";
import { checkStdioCommand } from "../src/mcp/client/security.js";
import { liveStdioPids } from "../src/mcp/client/stdio-process.js";
import { ToolRegistry } from "../src/registry/tool-registry.js";
import { isShellParserReady } from "../src/shell/index.js";
import { createMemoryLogger } from "../src/util/logger.js";
import type { McpServerConfig } from "../src/config/config-types.js";
import { discover, FIXTURE, messages, pidAlive, tempDir, waitFor } from "./support/mcp.js";

const launches: McpLaunch[] = [];
afterEach(async () => {
  await Promise.all(launches.splice(0).map((launch) => launch.close()));
});

async function launch(config: Record<string, McpServerConfig>, dir: string, env: NodeJS.ProcessEnv = process.env) {
  const warnings: string[] = [];
  const result = await launchMcpServers({ config, env, home: dir, warn: (message) => warnings.push(message) });
  launches.push(result);
  return { launch: result, warnings };
}

/** The fixture server recording its pid in `spawns`. */
function recorded(spawns: string, flags: string[] = []): McpServerConfig {
  return { command: process.execPath, args: [FIXTURE, `--spawn-file=${spawns}`, ...flags] };
}

function pids(file: string): number[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map(Number);
}

/** Live processes whose command line mentions `text` (a temporary directory only this test uses). */
function processesMentioning(text: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(text) && pidAlive(Number(name))) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z") out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * A bash entry whose inline script leaves `marker` behind if it ever runs, then would start the
 * fixture. The paths are left unquoted (temporary paths need no quotes) so that the line stays in the
 * fast parser's subset unless `script` takes it out.
 */
function shellEntry(script: string, marker: string, spawns: string): McpServerConfig {
  return { command: "/bin/bash", args: ["-c", `touch ${marker}; ${script}; exec ${process.execPath} ${FIXTURE} --spawn-file=${spawns}`] };
}

describe("launching stdio servers before the client loads", () => {
  it("a command line the fast parser takes is judged in full without the bash grammar: allowed ones run at once, refused ones never", async () => {
    const dir = tempDir();
    const spawns = path.join(dir, "spawns.txt");
    const marker = path.join(dir, "RAN");
    const evil = shellEntry(`chmod u+s ${path.join(dir, "bin")}`, marker, spawns);
    expect(isShellParserReady()).toBe(false);
    expect(checkStdioCommand(evil.command!, evil.args!).complete).toBe(true);

    const { launch: started, warnings } = await launch({ good: recorded(spawns), evil }, dir);
    expect(isShellParserReady()).toBe(false); // nothing here needed it, so nothing loaded it
    expect(started.servers.map((s) => [s.name, s.refusal])).toEqual([
      ["good", undefined],
      ["evil", expect.stringMatching(/privilege-setuid/)],
    ]);
    expect(warnings).toEqual([expect.stringMatching(/MCP server 'evil' is not started: .*privilege-setuid/)]);
    // The good server runs with no client at all; the refused one has no child and never ran.
    await waitFor(() => pids(spawns).length === 1, 5_000, "the good server's pid");
    expect(started.take("evil")).toBeUndefined();
    const good = started.take("good")!;
    expect(good.pid).toBe(pids(spawns)[0]);
    expect(started.take("good")).toBeUndefined(); // handed over once
    await good.terminate();
    expect(pidAlive(pids(spawns)[0]!)).toBe(false);
    expect(existsSync(marker)).toBe(false);
  });

  it("a command line that needs the grammar waits for it and is checked again before anything is spawned", async () => {
    const dir = tempDir();
    const spawns = path.join(dir, "spawns.txt");
    const evilMarker = path.join(dir, "EVIL_RAN");
    const fineMarker = path.join(dir, "FINE_RAN");
    // `case … a|b)` is beyond the fast parser; `history -c` is only the engine's finding (no text rule has it).
    const evil = shellEntry("case $x in a|b) :;; esac; history -c", evilMarker, spawns);
    const fine = shellEntry("case $x in a|b) :;; esac", fineMarker, spawns);
    expect(isShellParserReady()).toBe(false);
    expect(checkStdioCommand(evil.command!, evil.args!)).toEqual({ refusal: undefined, complete: false });

    const before = new Set(liveStdioPids());
    const { launch: started, warnings } = await launch({ evil, fine }, dir);
    expect(isShellParserReady()).toBe(true);
    expect(started.servers[0]!.refusal).toMatch(/history-wipe/);
    expect(started.servers[1]!.refusal).toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(/MCP server 'evil' is not started: .*history-wipe/)]);
    expect(started.take("evil")).toBeUndefined();
    expect(liveStdioPids().filter((pid) => !before.has(pid))).toHaveLength(1); // only `fine`
    await waitFor(() => existsSync(fineMarker) && pids(spawns).length === 1, 5_000, "the allowed server");
    expect(existsSync(evilMarker)).toBe(false);
    await started.close();
    expect(pids(spawns).filter(pidAlive)).toEqual([]);
  });

  it("MIBYAN_SAFE_MODE spawns nothing, early or late", async () => {
    const dir = tempDir();
    const spawns = path.join(dir, "spawns.txt");
    const before = new Set(liveStdioPids());
    const { launch: started } = await launch({ a: recorded(spawns), b: recorded(spawns) }, dir, { ...process.env, MIBYAN_SAFE_MODE: "1" });
    expect(liveStdioPids().filter((pid) => !before.has(pid))).toEqual([]);
    expect(started.take("a")).toBeUndefined();
    const { handle } = await discover({ a: recorded(spawns) }, { env: { MIBYAN_SAFE_MODE: "1" }, home: dir });
    expect(handle.servers[0]!.state).toBe("disabled");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(pids(spawns)).toEqual([]);
  });

  it("the first connection adopts the early child; retries spawn afresh; the failure is parked with the server's stderr", async () => {
    const dir = tempDir();
    const spawns = path.join(dir, "spawns.txt");
    const failing = { command: "/bin/sh", args: ["-c", `echo $$ >> '${spawns}'; echo 'early boom: no token configured' >&2; exit 1`] };
    const { handle, logger } = await discover({ failing }, { home: dir, timings: { initialRetries: 2, backoffBaseMs: 20 } });
    await handle.settled();
    const status = handle.servers[0]!;
    expect(status.state).toBe("parked");
    expect(status.lastError).toMatch(/early boom: no token configured/);
    expect(messages(logger, "warn").join("\n")).toMatch(/'failing' is parked .*early boom/);
    // Three attempts, three processes: the early one was used by the first attempt, not spawned beside it.
    expect(pids(spawns)).toHaveLength(3);
    expect(pids(spawns).filter(pidAlive)).toEqual([]);
    expect(readFileSync(path.join(dir, "logs", "mcp", "failing.log"), "utf8")).toMatch(/early boom/);
  });

  it("an early child that died before the client attached fails that attempt exactly as a child the attempt spawned", async () => {
    const dir = tempDir();
    const failing = { command: "/bin/sh", args: ["-c", "echo 'died before the client came' >&2; exit 1"] };
    const { launch: started } = await launch({ failing }, dir);
    const child = started.take("failing")!;
    await child.exited; // dead, its stderr read, before any client exists
    let held: typeof child | undefined = child;
    const oneShot: McpLaunch = {
      servers: started.servers,
      close: started.close,
      take: () => {
        const out = held;
        held = undefined;
        return out;
      },
    };
    const settings = await discoverySettings({ registry: new ToolRegistry({ logger: createMemoryLogger() }), config: {}, home: dir, timings: { initialRetries: 0 } });
    const handle = await discoverLaunched(settings, oneShot);
    try {
      await handle.settled();
      expect(handle.servers[0]!.state).toBe("parked");
      // The SDK's own words for a server that went away mid-handshake, then its stderr.
      expect(handle.servers[0]!.lastError).toMatch(/Connection closed.*died before the client came/);
    } finally {
      await handle.close();
    }
  });

  it("a healthy early child is connected and used; close() right away ends every child and its process group", async () => {
    const dir = tempDir();
    const spawns = path.join(dir, "spawns.txt");
    // A background grandchild, as `npx` leaves, must go with the group.
    const grouped = { command: "/bin/sh", args: ["-c", `sleep 30 & exec '${process.execPath}' '${FIXTURE}' --spawn-file='${spawns}'`] };
    const { registry, handle } = await discover({ a: recorded(spawns), b: recorded(spawns), grouped }, { home: dir });
    expect(handle.servers.map((s) => s.state)).toEqual(["ready", "ready", "ready"]);
    expect(await registry.dispatch("mcp__a__echo", { text: "early" })).toBe("early");
    expect(handle.servers.map((s) => s.pid).sort()).toEqual([...pids(spawns)].sort());
    const group = groupMembers(handle.servers[2]!.pid!);
    expect(group.length).toBeGreaterThanOrEqual(2);
    await handle.close();
    expect(pids(spawns).filter(pidAlive)).toEqual([]);
    // The group's SIGKILL is sent last; the kernel may take a moment to carry it out on a loaded machine.
    await waitFor(() => group.filter(pidAlive).length === 0, 2_000, "the server's process group to end");
  });

  it("close() before the client ever connected (launched, never adopted) ends every child", async () => {
    const dir = tempDir();
    const spawns = path.join(dir, "spawns.txt");
    const before = new Set(liveStdioPids());
    const { launch: started } = await launch({ a: recorded(spawns), b: recorded(spawns) }, dir);
    const early = liveStdioPids().filter((pid) => !before.has(pid));
    expect(early).toHaveLength(2);
    await waitFor(() => pids(spawns).length === 2, 5_000, "both servers running");
    await started.close();
    expect(early.filter(pidAlive)).toEqual([]);
    expect(started.take("a")).toBeUndefined(); // nothing to adopt after close
  });

  it("a throw while discovery sets up (after the children were spawned) ends them before the error leaves", async () => {
    const dir = tempDir();
    const spawns = path.join(dir, "spawns.txt");
    const before = new Set(liveStdioPids());
    const { launch: started } = await launch({ a: recorded(spawns), b: recorded(spawns) }, dir);
    const early = liveStdioPids().filter((pid) => !before.has(pid));
    expect(early).toHaveLength(2);
    // The attacker's lever: options that throw when read, deep inside setting up a connection.
    const timings = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error("hostile timings");
        },
      },
    );
    const settings = await discoverySettings({ registry: new ToolRegistry({ logger: createMemoryLogger() }), config: {}, home: dir, timings });
    await expect(discoverLaunched(settings, started)).rejects.toThrow(/hostile timings/);
    expect(early.filter(pidAlive)).toEqual([]);
  });
});

describe("the package entry (public.ts) when the client fails to load", () => {
  afterEach(() => {
    vi.doUnmock("../src/mcp/client/discover.js");
    vi.resetModules();
  });

  /** Runs the lazy entry with discover.js replaced by `factory` (which sees both servers running first). */
  async function withBrokenClient(factory: () => Record<string, unknown>): Promise<{ error: unknown; spawns: string; dir: string }> {
    const dir = tempDir();
    const spawns = path.join(dir, "spawns.txt");
    writeFileSync(spawns, "");
    vi.resetModules();
    vi.doMock("../src/mcp/client/discover.js", async () => {
      // Long enough for both servers to be up and to have recorded their pids.
      await waitFor(() => pids(spawns).length === 2, 5_000, "both early servers running");
      return factory();
    });
    const lazy = await import("../src/mcp/client/public.js");
    const registry = new ToolRegistry({ logger: createMemoryLogger() });
    const error = await lazy.discoverMcpTools({ registry, config: { a: recorded(spawns), b: recorded(spawns) }, home: dir }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    return { error, spawns, dir };
  }

  it("a failed import of the client (the SDK missing) ends the children spawned early, then rejects", async () => {
    const { error, spawns, dir } = await withBrokenClient(() => {
      throw new Error("Cannot find package '@modelcontextprotocol/sdk'");
    });
    expect(error).toBeInstanceOf(Error);
    expect(pids(spawns)).toHaveLength(2);
    expect(pids(spawns).filter(pidAlive)).toEqual([]);
    expect(processesMentioning(dir)).toEqual([]);
  });

  it("a client that loads but is not what the entry expects (the call throws) ends them too", async () => {
    const { error, spawns, dir } = await withBrokenClient(() => ({}));
    expect(String(error)).toMatch(/discoverLaunched/);
    expect(pids(spawns)).toHaveLength(2);
    expect(pids(spawns).filter(pidAlive)).toEqual([]);
    expect(processesMentioning(dir)).toEqual([]);
  });
});
