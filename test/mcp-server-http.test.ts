/**
 * `mibyan mcp serve --transport http` on 127.0.0.1 (the built CLI), driven by the SDK's own Client
 * over Streamable HTTP, and attacked for real: a DNS-rebinding Host, a foreign Origin, a missing or
 * wrong bearer token. Sessions: one per client, DELETE ends one and not the other; stateless mode.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";

import { createMcpServer, createMemoryLogger, ToolRegistry } from "../src/index.js";
import { BIN, cliEnv } from "./support/cli-run.js";

const base = mkdtempSync(path.join(tmpdir(), "mcp-serve-http-"));
const children: ChildProcess[] = [];
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  for (const child of children.splice(0)) {
    child.kill("SIGTERM");
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once("exit", resolve)));
  }
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

const TOKEN = "correct-horse-battery-staple-0123456789";
let counter = 0;

/** Starts the CLI server and resolves with its URL (the line it prints on stdout). */
async function serve(args: string[] = [], env: Record<string, string> = {}): Promise<{ url: string; work: string; child: ChildProcess }> {
  const dir = path.join(base, String(counter++));
  const work = path.join(dir, "work");
  mkdirSync(work, { recursive: true });
  const child = spawn(process.execPath, [BIN, "mcp", "serve", "--transport", "http", "--port", "0", ...args], {
    env: { ...cliEnv(dir, dir), ...env },
    cwd: work,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  let err = "";
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
  return { url, work, child };
}

async function connect(url: string, options: { token?: string; elicit?: boolean } = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), options.token ? { requestInit: { headers: { Authorization: `Bearer ${options.token}` } } } : {});
  const client = new Client({ name: "test", version: "1" }, { capabilities: options.elicit ? { elicitation: {} } : {} });
  if (options.elicit) client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: { approve: true } }));
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

/** A raw POST of an initialize request with the given headers: the status and headers that come back. */
function rawInitialize(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers } }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("mibyan mcp serve --transport http", () => {
  it("binds 127.0.0.1, prints the URL, and serves the SDK client", async () => {
    const { url } = await serve(["--toolsets", "file"]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const { client } = await connect(url);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("read_file");
  });

  it("refuses a DNS-rebinding Host and a foreign Origin with 403", async () => {
    const { url } = await serve();
    const evilHost = await rawInitialize(url, { Host: "evil.example" });
    expect(evilHost.status).toBe(403);
    const port = new URL(url).port;
    const rebound = await rawInitialize(url, { Host: `evil.example:${port}` });
    expect(rebound.status).toBe(403);
    const evilOrigin = await rawInitialize(url, { Origin: "http://evil.example" });
    expect(evilOrigin.status).toBe(403);
    // The same request with honest headers is served.
    const honest = await rawInitialize(url, { Origin: `http://127.0.0.1:${port}` });
    expect(honest.status).toBe(200);
  });

  it("--token-env: no token or a wrong one is 401; the right one is served", async () => {
    const { url } = await serve(["--token-env", "MCP_TEST_TOKEN"], { MCP_TEST_TOKEN: TOKEN });
    expect((await rawInitialize(url, {})).status).toBe(401);
    expect((await rawInitialize(url, { Authorization: "Bearer wrong-token" })).status).toBe(401);
    expect((await rawInitialize(url, { Authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
    expect((await rawInitialize(url, { Authorization: TOKEN })).status).toBe(401);
    await expect(connect(url)).rejects.toThrow();
    const { client } = await connect(url, { token: TOKEN });
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it("--token-env naming an unset variable is a usage error", async () => {
    const dir = path.join(base, String(counter++));
    mkdirSync(dir);
    const child = spawn(process.execPath, [BIN, "mcp", "serve", "--transport", "http", "--token-env", "MCP_UNSET_TOKEN"], { env: cliEnv(dir, dir), cwd: dir });
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
    const status = await new Promise((resolve) => child.on("close", resolve));
    expect(status).toBe(2);
    expect(err).toContain("MCP_UNSET_TOKEN");
  });

  it("one session per client; DELETE ends one and the other still works", async () => {
    const { url } = await serve(["--toolsets", "file"]);
    const a = await connect(url);
    const b = await connect(url);
    expect(a.transport.sessionId).toBeTruthy();
    expect(b.transport.sessionId).toBeTruthy();
    expect(a.transport.sessionId).not.toBe(b.transport.sessionId);
    await a.transport.terminateSession();
    const stale = await new Promise<number>((resolve, reject) => {
      const req = request(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "Mcp-Session-Id": a.transport.sessionId ?? "gone" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end(JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }));
    });
    expect(stale).toBe(404);
    expect((await b.client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it("--stateless serves without session ids", async () => {
    const { url } = await serve(["--stateless", "--toolsets", "file"]);
    const raw = await rawInitialize(url, {});
    expect(raw.status).toBe(200);
    expect(raw.headers["mcp-session-id"]).toBeUndefined();
    const { client, transport } = await connect(url);
    expect(transport.sessionId).toBeUndefined();
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("read_file");
  });

  it("elicitation works over HTTP: the question travels on the call's stream", async () => {
    const { url, work } = await serve();
    mkdirSync(path.join(work, "build"));
    const { client } = await connect(url, { elicit: true });
    const result = await client.callTool({ name: "terminal", arguments: { command: "rm -rf build" } });
    expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
    expect(existsSync(path.join(work, "build"))).toBe(false);
  });

  it("stateless mode cannot ask, so a dangerous command is refused", async () => {
    const { url, work } = await serve(["--stateless"]);
    mkdirSync(path.join(work, "build"));
    const { client } = await connect(url, { elicit: true });
    await client.callTool({ name: "terminal", arguments: { command: "rm -rf build" } });
    expect(existsSync(path.join(work, "build"))).toBe(true);
  });
});

describe("listen() in a program", () => {
  it("a body over 4 MiB is 413, a GET to a stateless server 405, another path 404", async () => {
    const server = await createMcpServer({ registry: new ToolRegistry({ logger: createMemoryLogger() }) });
    const stateful = await server.listen();
    const stateless = await server.listen({ stateless: true });
    try {
      const status = (url: string, method: string, body?: string): Promise<number> =>
        new Promise((resolve, reject) => {
          const req = request(url, { method, headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          req.on("error", reject);
          req.end(body);
        });
      expect(await status(stateful.url, "POST", `{"pad":"${"x".repeat(5 * 1024 * 1024)}"}`)).toBe(413);
      expect(await status(stateless.url, "GET")).toBe(405);
      expect(await status(stateful.url.replace(/\/mcp$/, "/other"), "POST", "{}")).toBe(404);
      expect(await status(stateful.url, "POST", "not json")).toBe(400);
    } finally {
      await server.close();
    }
  });


  it("refuses to bind an address other than loopback without a token", async () => {
    const server = await createMcpServer({ registry: new ToolRegistry({ logger: createMemoryLogger() }) });
    try {
      await expect(server.listen({ host: "0.0.0.0" })).rejects.toThrow(/needs a bearer token/);
    } finally {
      await server.close();
    }
  });
});
