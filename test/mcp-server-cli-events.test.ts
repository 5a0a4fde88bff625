/**
 * The built CLI (`npm run build` first) with a real plugin folder and real MCP clients:
 * - acceptance 2.4 item 8: a plugin's `post_tool_call` hook sees `surface: "mcp"` for calls from an MCP
 *   client of `mibyan mcp serve`, `"cli"` for `mibyan call`; its `pre_tool_call` block applies to MCP calls;
 * - item 9 through the CLI: a tool a plugin registers while the server runs reaches the SDK client's
 *   `listChanged.tools.onChanged` within 1 s;
 * - `mibyan call`'s wait for an MCP server's tool ends when the tool is registered, not when every
 *   configured server has settled (a server that never answers would hold it for the full 10 s);
 * - item 16: `--print-tools` against a snapshot; item 12: the HTTP server is not reachable on another
 *   address of the machine.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import path from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";

import { BIN, cliEnv, spawnCollect } from "./support/cli-run.js";
import { FIXTURE, pidAlive } from "./support/mcp.js";

const base = mkdtempSync(path.join(tmpdir(), "mcp-serve-events-"));
const clients: Client[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once("exit", resolve)));
  }
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

let counter = 0;

/**
 * A profile home with the `watcher` plugin enabled: its post_tool_call hook appends `{tool, surface}` to
 * surfaces.log in the plugin's folder; its pre_tool_call hook blocks any call whose `text` says "forbidden";
 * its tool `grow` registers a tool `grown_<n>` while the server runs.
 */
function homeWithPlugin(extraConfig = ""): { home: string; work: string; log: string } {
  const dir = path.join(base, String(counter++));
  const home = path.join(dir, "home");
  const work = path.join(dir, "work");
  const plugin = path.join(home, "plugins", "watcher");
  mkdirSync(plugin, { recursive: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(path.join(home, "config.yaml"), `plugins:\n  enabled: [watcher]\n${extraConfig}`);
  writeFileSync(path.join(plugin, "plugin.yaml"), "name: watcher\n");
  writeFileSync(
    path.join(plugin, "index.js"),
    `import { appendFileSync } from "node:fs";
const log = new URL("./surfaces.log", import.meta.url);
export function register(ctx) {
  let grown = 0;
  ctx.registerTool({ name: "say", toolset: "watcher", schema: { description: "Say the text.", parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
    handler: (args) => "said " + args.text });
  ctx.registerTool({ name: "grow", toolset: "watcher", schema: { description: "Register one more tool.", parameters: { type: "object", properties: {} } },
    handler: () => {
      grown += 1;
      const name = "grown_" + grown;
      ctx.registerTool({ name, toolset: "watcher", schema: { description: "Grown at run time.", parameters: { type: "object", properties: {} } }, handler: () => name + " ok" });
      return "registered " + name;
    } });
  ctx.registerHook("pre_tool_call", ({ args }) => (String(args.text ?? "").includes("forbidden") ? { action: "block", message: "watcher: forbidden text" } : undefined));
  ctx.registerHook("post_tool_call", ({ toolName, surface, status }) => {
    appendFileSync(log, JSON.stringify({ tool: toolName, surface, status }) + "\\n");
  });
}
`,
  );
  return { home, work, log: path.join(plugin, "surfaces.log") };
}

function logged(log: string): { tool: string; surface: string; status: string }[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { tool: string; surface: string; status: string });
}

async function stdioClient(home: string, work: string, onChanged?: (names: string[]) => void): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", "serve"], env: cliEnv(home, home) as Record<string, string>, cwd: work, stderr: "pipe" });
  transport.stderr?.on("data", () => undefined);
  const client = new Client(
    { name: "test", version: "1" },
    onChanged === undefined ? {} : { listChanged: { tools: { debounceMs: 0, onChanged: (_err, tools) => onChanged((tools ?? []).map((t) => t.name)) } } },
  );
  await client.connect(transport);
  clients.push(client);
  return client;
}

const text = (result: unknown): string => (((result as { content?: unknown }).content as { text?: string }[]) ?? []).map((b) => b.text ?? "").join("\n");

describe("hooks see where a call came from (item 8)", () => {
  it("an MCP client's calls: post_tool_call gets surface mcp; the plugin's pre_tool_call block applies", async () => {
    const { home, work, log } = homeWithPlugin();
    const client = await stdioClient(home, work);
    expect(text(await client.callTool({ name: "say", arguments: { text: "hello" } }))).toBe("said hello");
    const blocked = await client.callTool({ name: "say", arguments: { text: "forbidden words" } });
    expect(blocked.isError).toBe(true);
    expect(text(blocked)).toContain("watcher: forbidden text");
    await expect.poll(() => logged(log).length, { timeout: 5_000 }).toBe(2);
    expect(logged(log)).toEqual([
      { tool: "say", surface: "mcp", status: "ok" },
      { tool: "say", surface: "mcp", status: "blocked" },
    ]);
  });

  it("mibyan call: surface cli", async () => {
    const { home, work, log } = homeWithPlugin();
    const run = await spawnCollect(process.execPath, [BIN, "call", "say", JSON.stringify({ text: "from the shell" })], { env: cliEnv(home, home), cwd: work });
    expect(run.stdout.trim()).toBe("said from the shell");
    expect(run.status).toBe(0);
    expect(logged(log)).toEqual([{ tool: "say", surface: "cli", status: "ok" }]);
  });
});

describe("list_changed through mibyan mcp serve (item 9)", () => {
  it("a tool a plugin registers while the server runs reaches the client's onChanged within 1 s", async () => {
    const { home, work } = homeWithPlugin();
    const lists: { at: number; names: string[] }[] = [];
    const client = await stdioClient(home, work, (names) => lists.push({ at: Date.now(), names }));
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("grown_1");
    expect(text(await client.callTool({ name: "grow", arguments: {} }))).toBe("registered grown_1");
    const registeredAt = Date.now();
    await expect.poll(() => lists.at(-1)?.names ?? [], { timeout: 1_000, interval: 10 }).toContain("grown_1");
    expect(lists.at(-1)!.at - registeredAt).toBeLessThan(1_000);
    expect(text(await client.callTool({ name: "grown_1", arguments: {} }))).toBe("grown_1 ok");
  });
});

describe("mibyan call waits for its MCP tool by event", () => {
  it("goes on when the tool is registered, though another configured server never answers; nothing is left running", async () => {
    const dir = path.join(base, String(counter++));
    mkdirSync(dir, { recursive: true });
    const spawns = path.join(dir, "spawns.txt");
    writeFileSync(spawns, "");
    // Starts, records its pid, and never answers `initialize`: it settles only at its connect timeout (30 s).
    const silent = path.join(dir, "silent.mjs");
    writeFileSync(silent, `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(spawns)}, process.pid + "\\n");\nprocess.stdin.resume();\nsetInterval(() => {}, 1000);\n`);
    const entry = (name: string, args: string[], more = ""): string =>
      `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${args.map((a) => JSON.stringify(a)).join(", ")}]\n${more}`;
    writeFileSync(
      path.join(dir, "config.yaml"),
      `mcp_servers:\n${entry("demo", [FIXTURE, `--spawn-file=${spawns}`])}${entry("silent", [silent], "    connect_timeout: 30\n")}`,
    );
    const started = Date.now();
    const run = await spawnCollect(process.execPath, [BIN, "call", "mcp__demo__echo", JSON.stringify({ text: "event-driven" })], { env: cliEnv(dir, tmpdir()), cwd: dir });
    const elapsed = Date.now() - started;
    expect(run.stdout.trim(), run.stderr).toBe("event-driven");
    expect(run.status).toBe(0);
    // The wait's bound is CLI_MCP_WAIT_MS (10 s); the silent server would have held a wait for every server that long.
    expect(elapsed).toBeLessThan(8_000);
    const pids = readFileSync(spawns, "utf8").split("\n").filter((l) => l !== "").map(Number);
    expect(pids).toHaveLength(2);
    await expect.poll(() => pids.filter(pidAlive), { timeout: 3_000 }).toEqual([]);
  });
});

describe("mibyan mcp serve output", () => {
  it("--print-tools matches the snapshot (item 16: names, descriptions, schemas, annotations)", async () => {
    const dir = path.join(base, String(counter++));
    mkdirSync(dir, { recursive: true });
    const run = await spawnCollect(process.execPath, [BIN, "mcp", "serve", "--print-tools", "--tools", "read_file,terminal"], { env: cliEnv(dir, dir), cwd: dir });
    expect(run.status, run.stderr).toBe(0);
    const tools = JSON.parse(run.stdout) as { name: string; annotations?: Record<string, boolean> }[];
    expect(tools.find((t) => t.name === "read_file")!.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.find((t) => t.name === "terminal")!.annotations).toMatchObject({ destructiveHint: true });
    await expect(run.stdout).toMatchFileSnapshot("__snapshots__/mcp-serve-print-tools.json");
  });

  it("--transport http listens on 127.0.0.1 only: another address of this machine refuses the connection", async () => {
    const other = Object.values(networkInterfaces())
      .flat()
      .find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address;
    const dir = path.join(base, String(counter++));
    mkdirSync(dir, { recursive: true });
    const child = spawn(process.execPath, [BIN, "mcp", "serve", "--transport", "http", "--port", "0"], { env: cliEnv(dir, dir), cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    child.stderr!.resume();
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString("utf8");
        const match = /listening on (http:\/\/\S+)/.exec(out);
        if (match) resolve(match[1]!);
      });
      child.once("exit", (code) => reject(new Error(`server exited ${code}`)));
    });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const port = Number(new URL(url).port);
    const reach = (host: string): Promise<"connected" | string> =>
      new Promise((resolve) => {
        const socket = netConnect({ host, port }, () => {
          socket.destroy();
          resolve("connected");
        });
        socket.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      });
    expect(await reach("127.0.0.1")).toBe("connected");
    if (other === undefined) return; // a machine with loopback only: nothing else to try
    expect(await reach(other)).toBe("ECONNREFUSED");
  });
});
