// HTTP MCP servers on 127.0.0.1: headers, a wrong token, an expired session, the SSE fallback and
// OAuth token storage (next-features §1.5 item 16).
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";

import { afterEach, describe, expect, it } from "vitest";

import { FileOAuthProvider, tokenFilePath } from "../src/mcp/client/oauth-provider.js";
// @ts-expect-error -- an untyped ESM test fixture
import { startHttpFixture } from "./fixtures/mcp/http-server.mjs";
import { discover, tempDir, waitFor } from "./support/mcp.js";

interface Fixture {
  url: string;
  stats: { calls: number; initializes: number; notFound: number; unauthorized: number; refreshes: number };
  forgetSessions(): void;
  close(): Promise<void>;
}

const fixtures: Fixture[] = [];
afterEach(async () => {
  await Promise.all(fixtures.splice(0).map((f) => f.close()));
});

async function start(options: { token?: string; mode?: "streamable" | "sse"; port?: number; oauth?: boolean } = {}): Promise<Fixture> {
  const fixture = (await startHttpFixture(options)) as Fixture;
  fixtures.push(fixture);
  return fixture;
}

describe("Streamable HTTP", () => {
  it("works with the Authorization header from `headers` (and ${VAR} in it)", async () => {
    const fixture = await start({ token: "t" });
    const { registry, handle } = await discover({ web: { url: fixture.url, headers: { Authorization: "Bearer ${WEB_TOKEN}" } } }, { env: { WEB_TOKEN: "t" } });
    expect(handle.servers[0]).toMatchObject({ name: "web", transport: "http", state: "ready", toolCount: 2 });
    expect(await registry.dispatch("mcp__web__echo", { text: "over http" })).toBe("over http");
    expect(await registry.dispatch("mcp__web__whoami", {})).toBe("Bearer t");
  });

  it("a wrong token fails to connect and the server is parked with the error", async () => {
    const fixture = await start({ token: "t" });
    const { registry, handle } = await discover(
      { web: { url: fixture.url, headers: { Authorization: "Bearer wrong" } } },
      { timings: { backoffBaseMs: 10, keepaliveMs: 0 } },
    );
    await handle.settled();
    expect(handle.servers[0]!.state).toBe("parked");
    expect(handle.servers[0]!.lastError).toMatch(/401/);
    expect(fixture.stats.unauthorized).toBe(4); // the attempt and its 3 retries
    expect(registry.size).toBe(0);
  });

  it("a 404 'session not found' mid-session → a new session and the call retried once", async () => {
    const fixture = await start({ token: "t" });
    const { registry, handle } = await discover({ web: { url: fixture.url, headers: { Authorization: "Bearer t" } } });
    expect(await registry.dispatch("mcp__web__echo", { text: "one" })).toBe("one");
    fixture.forgetSessions();
    expect(await registry.dispatch("mcp__web__echo", { text: "two" })).toBe("two");
    expect(fixture.stats.notFound).toBeGreaterThanOrEqual(1);
    expect(fixture.stats.initializes).toBe(2);
    expect(fixture.stats.calls).toBe(2);
    expect(handle.servers[0]!.state).toBe("ready");
  });

  it("a server that goes away is reconnected with backoff and its tools work again when it is back", async () => {
    const first = await start({ token: "t" });
    const port = Number(new URL(first.url).port);
    const { registry, handle } = await discover({ web: { url: first.url, headers: { Authorization: "Bearer t" } } }, { timings: { backoffBaseMs: 100, keepaliveMs: 0 } });
    expect(await registry.dispatch("mcp__web__echo", { text: "before" })).toBe("before");
    await first.close();
    fixtures.splice(fixtures.indexOf(first), 1);
    expect(await registry.dispatch("mcp__web__echo", { text: "while down" })).toContain("MCP call failed");
    expect(handle.servers[0]!.state).toBe("reconnecting");
    const second = await start({ token: "t", port });
    await waitFor(() => handle.servers[0]!.state === "ready", 5000, "ready again");
    expect(await registry.dispatch("mcp__web__echo", { text: "after" })).toBe("after");
    expect(second.stats.initializes).toBe(1);
  });

  it("falls back to SSE when the endpoint does not take Streamable HTTP posts", async () => {
    const fixture = await start({ mode: "sse" });
    const { registry, handle } = await discover({ old: { url: fixture.url } });
    expect(handle.servers[0]).toMatchObject({ state: "ready", transport: "sse" });
    expect(await registry.dispatch("mcp__old__echo", { text: "via sse" })).toBe("via sse");
  });

  it("transport: sse connects with SSE directly", async () => {
    const fixture = await start({ mode: "sse" });
    const { registry } = await discover({ old: { url: fixture.url, transport: "sse" } });
    expect(await registry.dispatch("mcp__old__echo", { text: "sse" })).toBe("sse");
  });
});

describe("not an MCP endpoint", () => {
  it.each([200, 404])("a URL answering with an HTML page (%i) is parked at once, with no retry and no SSE fallback", async (status) => {
    let requests = 0;
    const site = http.createServer((_req, res) => {
      requests++;
      res.writeHead(status, { "content-type": "text/html" }).end("<!DOCTYPE html><html><body>Docs</body></html>");
    });
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(site.address() as { port: number }).port}/docs`;
      const { handle } = await discover({ site: { url } }, { timings: { keepaliveMs: 0 } });
      await handle.settled();
      expect(handle.servers[0]!.state).toBe("parked");
      expect(handle.servers[0]!.lastError).toContain("is not an MCP endpoint");
      expect(requests).toBe(1);
    } finally {
      site.closeAllConnections();
      await new Promise((resolve) => site.close(resolve));
    }
  });
});

describe("OAuth token storage", () => {
  it("auth: oauth sends the stored access token", async () => {
    const fixture = await start({ token: "from-oauth" });
    const home = tempDir();
    const file = tokenFilePath(home, "oa");
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ tokens: { access_token: "from-oauth", token_type: "Bearer" } }), { mode: 0o600 });
    const { registry, handle } = await discover({ oa: { url: fixture.url, auth: "oauth" } }, { home });
    expect(handle.servers[0]!.state).toBe("ready");
    // The fixture answers 401 to any other Authorization header; the model's view of the header is redacted.
    expect(fixture.stats.unauthorized).toBe(0);
    expect(await registry.dispatch("mcp__oa__whoami", {})).toBe("Bearer [REDACTED]");
  });

  it("an expired access token is refreshed through the SDK's OAuth client and the new tokens are stored (0600)", async () => {
    const fixture = await start({ token: "fresh", oauth: true });
    const home = tempDir();
    const file = tokenFilePath(home, "oa");
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(
      file,
      JSON.stringify({ tokens: { access_token: "expired", token_type: "Bearer", refresh_token: "r" }, client_information: { client_id: "mibyan-test" } }),
      { mode: 0o600 },
    );
    const { registry, handle } = await discover({ oa: { url: fixture.url, auth: "oauth" } }, { home, timings: { keepaliveMs: 0 } });
    expect(handle.servers[0]!.lastError).toBeUndefined();
    expect(handle.servers[0]!.state).toBe("ready");
    expect(fixture.stats.refreshes).toBe(1);
    expect(await registry.dispatch("mcp__oa__echo", { text: "authorised" })).toBe("authorised");
    const stored = JSON.parse(readFileSync(file, "utf8")) as { tokens: { access_token: string; refresh_token: string } };
    expect(stored.tokens).toMatchObject({ access_token: "fresh", refresh_token: "r2" });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("without tokens: the client registers, the authorisation URL is reported and stored, and the server is parked without retries", async () => {
    const fixture = await start({ token: "fresh", oauth: true });
    const home = tempDir();
    const urls: string[] = [];
    const { registry, handle } = await discover(
      { oa: { url: fixture.url, auth: "oauth" } },
      { home, timings: { keepaliveMs: 0 }, onAuthorizationUrl: (server, url) => urls.push(`${server} ${url.href}`) },
    );
    await handle.settled();
    expect(handle.servers[0]!.state).toBe("parked");
    expect(fixture.stats.unauthorized).toBe(1);
    expect(registry.size).toBe(0);
    expect(urls).toHaveLength(1);
    expect(urls[0]).toMatch(/^oa http:\/\/127\.0\.0\.1:\d+\/authorize\?.*code_challenge=/);
    const stored = JSON.parse(readFileSync(tokenFilePath(home, "oa"), "utf8")) as Record<string, unknown>;
    expect(stored.authorization_url).toBe(urls[0]!.slice("oa ".length));
    expect(stored.client_information).toMatchObject({ client_id: "registered-client" });
    expect(typeof stored.code_verifier).toBe("string");
    expect(stored.tokens).toBeUndefined();

    // The person consented; the application's redirect listener got code "c".
    await handle.finishAuth("oa", "c");
    expect(handle.servers[0]!.state).toBe("ready");
    expect(await registry.dispatch("mcp__oa__echo", { text: "authorised" })).toBe("authorised");
    expect((JSON.parse(readFileSync(tokenFilePath(home, "oa"), "utf8")) as { tokens: unknown }).tokens).toMatchObject({ access_token: "fresh" });
  });

  it("saves tokens as a 0600 file in a 0700 folder under the profile home, and a server name cannot leave it", async () => {
    const home = tempDir();
    const provider = new FileOAuthProvider({ home, server: "../../escape" });
    expect(path.dirname(provider.file)).toBe(path.join(home, "mcp-tokens"));
    await provider.saveTokens({ access_token: "a", token_type: "Bearer", refresh_token: "r" });
    expect(statSync(provider.file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(provider.file)).mode & 0o777).toBe(0o700);
    expect(provider.tokens()).toEqual({ access_token: "a", token_type: "Bearer", refresh_token: "r" });
    await provider.saveCodeVerifier("v");
    expect(provider.codeVerifier()).toBe("v");
    expect(provider.tokens()?.access_token).toBe("a");
    const seen: string[] = [];
    const noticing = new FileOAuthProvider({ home, server: "s", onAuthorizationUrl: (server, url) => seen.push(`${server} ${url.href}`) });
    await noticing.redirectToAuthorization(new URL("https://auth.example/authorize?x=1"));
    expect(seen).toEqual(["s https://auth.example/authorize?x=1"]);
    await provider.invalidateCredentials("tokens");
    expect(provider.tokens()).toBeUndefined();
  });
});
