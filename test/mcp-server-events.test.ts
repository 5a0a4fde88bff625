/**
 * tools/list_changed from the registry's change event, over the server's Streamable HTTP transport on
 * 127.0.0.1 with the SDK's own Client and its `listChanged.tools.onChanged` (acceptance 2.4 items 9 and
 * 14): a tool registered at runtime, a tool of an MCP server the registry is a client of, a tool whose
 * check starts passing after `refreshAvailability()`. A change outside the served selection is not
 * announced; a burst of registrations is one notification. The periodic recheck is off in these tests
 * (`availabilityRecheckMs: 0`), so only the event can be what told the client.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";

import { createMcpServer, createMemoryLogger, ToolRegistry, ToolUnavailableError, type MibyanMcpServer } from "../src/index.js";
import { discover, fixtureServer } from "./support/mcp.js";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close().catch(() => undefined);
});

const schema = (description: string) => ({ description, parameters: { type: "object" as const, properties: {} } });

function baseRegistry(): ToolRegistry {
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  registry.register({ name: "echo", toolset: "basic", schema: schema("Echo."), handler: () => "echo" });
  return registry;
}

interface Watched {
  client: Client;
  /** The tool names of every onChanged, with the time it came. */
  lists: { at: number; names: string[] }[];
  /** How many list_changed notifications arrived. */
  notifications: () => number;
}

async function serveOverHttp(registry: ToolRegistry, options: Parameters<typeof createMcpServer>[0] = {}): Promise<{ server: MibyanMcpServer; url: string }> {
  const server = await createMcpServer({ registry, availabilityRecheckMs: 0, ...options });
  open.push(server);
  const http = await server.listen();
  return { server, url: http.url };
}

async function watch(url: string): Promise<Watched> {
  const lists: Watched["lists"] = [];
  const client = new Client(
    { name: "test", version: "1" },
    // The SDK's own debounce is 300 ms by default; 0 makes the timings below the server's.
    { listChanged: { tools: { debounceMs: 0, onChanged: (_err, tools) => lists.push({ at: Date.now(), names: (tools ?? []).map((t) => t.name) }) } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  open.push(client);
  // With the SDK's debounce at 0, every notification is one onChanged (with the list fetched after it).
  return { client, lists, notifications: () => lists.length };
}

const quiet = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe("list_changed over Streamable HTTP", () => {
  it("a tool registered at runtime reaches the client's onChanged within 1 s, and can be called", async () => {
    const registry = baseRegistry();
    const { url } = await serveOverHttp(registry);
    const watched = await watch(url);
    expect((await watched.client.listTools()).tools.map((t) => t.name)).toEqual(["echo"]);
    const registeredAt = Date.now();
    registry.register({ name: "late", toolset: "basic", schema: schema("Came later."), handler: () => "late result" });
    await expect.poll(() => watched.lists.at(-1)?.names ?? [], { timeout: 1_000, interval: 10 }).toContain("late");
    expect(watched.lists.at(-1)!.at - registeredAt).toBeLessThan(1_000);
    const result = await watched.client.callTool({ name: "late", arguments: {} });
    expect(result.content).toEqual([{ type: "text", text: "late result" }]);
    // And a removal is announced the same way.
    registry.deregister("late");
    await expect.poll(() => watched.lists.at(-1)?.names ?? [], { timeout: 1_000, interval: 10 }).toEqual(["echo"]);
  });

  it("item 14: a tool whose check fails is not listed; once it passes, refreshAvailability() announces it and it appears", async () => {
    const registry = baseRegistry();
    delete process.env.MCP_EVENTS_DAEMON;
    registry.register({
      name: "daemon_tool",
      toolset: "basic",
      checkFn: () => {
        if (process.env.MCP_EVENTS_DAEMON !== "up") throw new ToolUnavailableError("the daemon is not running");
        return true;
      },
      schema: schema("Needs the daemon."),
      handler: () => "daemon says hi",
    });
    const { url } = await serveOverHttp(registry);
    const watched = await watch(url);
    expect((await watched.client.listTools()).tools.map((t) => t.name)).toEqual(["echo"]);
    const refused = await watched.client.callTool({ name: "daemon_tool", arguments: {} });
    expect(refused.isError).toBe(true);

    process.env.MCP_EVENTS_DAEMON = "up";
    try {
      // The check's answer is cached for 30 s: without the refresh nothing would be noticed for that long.
      await quiet(150);
      expect(watched.notifications()).toBe(0);
      registry.refreshAvailability();
      await expect.poll(() => watched.lists.at(-1)?.names ?? [], { timeout: 1_000, interval: 10 }).toEqual(["daemon_tool", "echo"]);
      expect(watched.notifications()).toBe(1);
      const result = await watched.client.callTool({ name: "daemon_tool", arguments: {} });
      expect(result.content).toEqual([{ type: "text", text: "daemon says hi" }]);
    } finally {
      delete process.env.MCP_EVENTS_DAEMON;
    }
    registry.refreshAvailability();
    await expect.poll(() => watched.lists.at(-1)?.names ?? [], { timeout: 1_000, interval: 10 }).toEqual(["echo"]);
  });

  it("a burst of registrations is one notification; a tool outside the served toolsets is none", async () => {
    const registry = baseRegistry();
    const { url } = await serveOverHttp(registry, { enabledToolsets: ["basic"] });
    const watched = await watch(url);
    registry.register({ name: "elsewhere", toolset: "other", schema: schema("Not served."), handler: () => "x" });
    await quiet(300);
    expect(watched.notifications()).toBe(0);
    for (let i = 0; i < 20; i++) registry.register({ name: `burst_${i}`, toolset: "basic", schema: schema(`burst ${i}`), handler: () => "b" });
    await expect.poll(() => watched.lists.at(-1)?.names.length ?? 0, { timeout: 1_000, interval: 10 }).toBe(21);
    await quiet(200);
    expect(watched.notifications()).toBe(1);
  });

  it("a changed schema is announced; registering the same definition again is not", async () => {
    const registry = baseRegistry();
    const { url } = await serveOverHttp(registry);
    const watched = await watch(url);
    registry.register({ name: "echo", toolset: "basic", schema: schema("Echo."), handler: () => "echo again" });
    await quiet(300);
    expect(watched.notifications()).toBe(0);
    registry.register({ name: "echo", toolset: "basic", schema: schema("Echo, described anew."), handler: () => "echo" });
    await expect.poll(() => watched.notifications(), { timeout: 1_000, interval: 10 }).toBe(1);
    expect((await watched.client.listTools()).tools[0]!.description).toBe("Echo, described anew.");
  });

  it("a tool of an MCP server the registry is a client of (a proxy): added there, announced here within 1 s", async () => {
    const registry = baseRegistry();
    // A real stdio MCP server whose add_tool changes its list and sends list_changed to our client.
    await discover({ dyn: fixtureServer(["--dynamic"]) }, { registry });
    expect(registry.has("mcp__dyn__add_tool")).toBe(true);
    const { url } = await serveOverHttp(registry);
    const watched = await watch(url);
    const before = (await watched.client.listTools()).tools.map((t) => t.name);
    expect(before).toContain("mcp__dyn__add_tool");
    expect(before).not.toContain("mcp__dyn__fresh");
    // The outer client calls the proxied tool through our server: the inner server adds a tool.
    const added = await watched.client.callTool({ name: "mcp__dyn__add_tool", arguments: { name: "fresh" } });
    expect(added.isError ?? false).toBe(false);
    const addedAt = Date.now();
    await expect.poll(() => watched.lists.at(-1)?.names ?? [], { timeout: 1_000, interval: 10 }).toContain("mcp__dyn__fresh");
    expect(watched.lists.at(-1)!.at - addedAt).toBeLessThan(1_000);
    const fresh = await watched.client.callTool({ name: "mcp__dyn__fresh", arguments: {} });
    expect(fresh.content).toEqual([{ type: "text", text: "fresh ok" }]);
  });

  it("plays the attacker: a check that flips on every run (TTL 0) cannot drive a notify-list loop faster than one per 250 ms", async () => {
    const registry = new ToolRegistry({ logger: createMemoryLogger(), availability: { ttlMs: 0 } });
    registry.register({ name: "echo", toolset: "basic", schema: schema("Echo."), handler: () => "echo" });
    let runs = 0;
    registry.register({ name: "flapping", toolset: "basic", checkFn: () => ++runs % 2 === 0, schema: schema("Flaps."), handler: () => "x" });
    const { url } = await serveOverHttp(registry);
    // The client lists again at every notification (the SDK's onChanged), which runs the check again.
    const watched = await watch(url);
    await watched.client.listTools();
    await quiet(1_200);
    const count = watched.notifications();
    expect(count).toBeGreaterThan(0); // it does flap, and is announced
    expect(count).toBeLessThanOrEqual(6);
  });

  it("a client that disconnected is not notified, and the registry holds no listener once the last one is gone", async () => {
    const registry = baseRegistry();
    const { server, url } = await serveOverHttp(registry);
    const watched = await watch(url);
    expect(registry.availability.observer).toBeTypeOf("function");
    await watched.client.close();
    await server.close();
    expect(registry.availability.observer).toBeUndefined();
    registry.register({ name: "after", toolset: "basic", schema: schema("After."), handler: () => "x" });
    await quiet(150);
    expect(watched.notifications()).toBe(0);
  });
});
