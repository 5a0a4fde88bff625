/**
 * runAgent and a misbehaving endpoint: 429 with Retry-After retried after the wait it asked for,
 * 5xx retried with backoff and then a typed error, a Retry-After longer than the loop waits refused
 * at once, 401/403/404 as clear typed errors that never quote the API key, a bad base URL refused
 * before anything is sent, an unreachable one reported after the retries, a body that is not a
 * completion. The openai client's own retries are off (they would sleep through any Retry-After).
 */

import { createServer } from "node:net";

import { afterEach, describe, expect, it } from "vitest";

import { AgentConfigError, AgentEndpointError } from "../src/agent/loop/errors.js";
import { runAgent } from "../src/agent/loop/run-agent.js";
import { retryAfterMs } from "../src/agent/loop/retry.js";
import type { AgentEvent, RunAgentOptions } from "../src/agent/types.js";
import * as pkg from "../src/index.js";
import { ToolRegistry, createMemoryLogger } from "../src/index.js";
import { reply, startScriptedOpenAI, type ScriptedOpenAI } from "./support/scripted-openai.js";

let server: ScriptedOpenAI | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const KEY = "sk-secret-abcdef123456";
const options = (baseURL: string, extra: Partial<RunAgentOptions> = {}): RunAgentOptions => ({
  model: "m",
  apiKey: KEY,
  baseURL,
  prompt: "hi",
  registry: new ToolRegistry({ logger: createMemoryLogger() }),
  systemPrompt: false,
  ...extra,
});

async function failure(promise: Promise<unknown>): Promise<AgentEndpointError> {
  const thrown = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(thrown).toBeInstanceOf(AgentEndpointError);
  return thrown as AgentEndpointError;
}

describe("no key", () => {
  it("runs against an endpoint that takes none (no apiKey, no OPENAI_API_KEY): a placeholder, never an untyped client error", async () => {
    server = await startScriptedOpenAI([reply.text("hello without a key")]);
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const result = await runAgent(options(server.baseURL, { apiKey: undefined }));
      expect(result.finalText).toBe("hello without a key");
      expect(server.requests[0]!.headers.authorization).toBe("Bearer no-key");
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
  });
});

describe("retries", () => {
  it("429 with Retry-After: 1 is retried after about a second, and the run completes", async () => {
    server = await startScriptedOpenAI([reply.error(429, "slow down", { "retry-after": "1" }), reply.text("finally")]);
    const events: AgentEvent[] = [];
    const result = await runAgent(options(server.baseURL, { onEvent: (e) => events.push(e) }));
    expect(result.finalText).toBe("finally");
    expect(server.requests).toHaveLength(2);
    const gap = server.requests[1]!.receivedAt - server.requests[0]!.receivedAt;
    expect(gap).toBeGreaterThanOrEqual(950);
    expect(gap).toBeLessThan(3000);
    expect(events.find((e) => e.type === "retry")).toMatchObject({ attempt: 1, delayMs: 1000, status: 429, reason: "slow down" });
    // One completion counted; the refused attempt is not a request of the usage.
    expect(result.usage.requests).toBe(1);
  });

  it("retry-after-ms is honoured too", async () => {
    server = await startScriptedOpenAI([reply.error(503, "busy", { "retry-after-ms": "150" }), reply.text("ok")]);
    const events: AgentEvent[] = [];
    await runAgent(options(server.baseURL, { onEvent: (e) => events.push(e) }));
    expect(events.find((e) => e.type === "retry")).toMatchObject({ delayMs: 150, status: 503 });
  });

  it("5xx every time: 1 + 3 attempts with growing backoff, then a server error naming the status and attempts", async () => {
    server = await startScriptedOpenAI(Array.from({ length: 5 }, () => reply.error(502, "bad gateway")));
    const delays: number[] = [];
    const error = await failure(runAgent(options(server.baseURL, { retry: { initialDelayMs: 40 }, onEvent: (e) => e.type === "retry" && delays.push(e.delayMs) })));
    expect(server.requests).toHaveLength(4);
    expect(error.kind).toBe("server");
    expect(error.status).toBe(502);
    expect(error.details.attempts).toBe(4);
    expect(error.message).toMatch(/failed \(HTTP 502\) after 4 attempts: bad gateway/);
    expect(delays).toHaveLength(3);
    expect(delays[2]!).toBeGreaterThan(delays[0]!);
  });

  it("a Retry-After longer than the loop waits fails at once instead of holding the run for an hour", async () => {
    server = await startScriptedOpenAI([reply.error(429, "quota", { "retry-after": "3600" }), reply.text("never")]);
    const started = Date.now();
    const error = await failure(runAgent(options(server.baseURL)));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(error.kind).toBe("rate_limited");
    expect(error.message).toMatch(/asked to wait 3600 s/);
    expect(server.requests).toHaveLength(1);
  });

  it("reads Retry-After as seconds, as an HTTP date, and ignores garbage", () => {
    const now = Date.parse("2026-12-04T12:00:00Z");
    expect(retryAfterMs({ "retry-after": "2" }, now)).toBe(2000);
    expect(retryAfterMs({ "retry-after": "Fri, 04 Dec 2026 12:00:05 GMT" }, now)).toBe(5000);
    expect(retryAfterMs({ "retry-after": "soon" }, now)).toBeUndefined();
    expect(retryAfterMs({ "retry-after": "-5" }, now)).toBeUndefined();
    expect(retryAfterMs({}, now)).toBeUndefined();
  });
});

describe("errors that are not retried", () => {
  it("401: an authentication error naming the base URL, once, without the key", async () => {
    server = await startScriptedOpenAI([reply.error(401, `Incorrect API key provided: ${KEY}`), reply.text("never")]);
    const error = await failure(runAgent(options(server.baseURL)));
    expect(error.kind).toBe("authentication");
    expect(error.status).toBe(401);
    expect(error.message).toContain(`authentication failed for ${server.baseURL}`);
    expect(error.message).not.toContain(KEY);
    expect(error.message).toContain("[API key]");
    expect(server.requests).toHaveLength(1);
  });

  it("403 and 404 have their own kinds; 404 hints at the base URL and model", async () => {
    server = await startScriptedOpenAI([reply.error(403, "not for you"), reply.error(404, "The model `m` does not exist")]);
    expect((await failure(runAgent(options(server.baseURL)))).kind).toBe("permission");
    const notFound = await failure(runAgent(options(server.baseURL)));
    expect(notFound.kind).toBe("not_found");
    expect(notFound.message).toMatch(/model name "m".*\/v1/);
  });

  it("a base URL without /v1 reaches the server's 404 route and says so", async () => {
    server = await startScriptedOpenAI([]);
    const error = await failure(runAgent(options(server.baseURL.replace(/\/v1$/, ""))));
    expect(error.kind).toBe("not_found");
    expect(server.requests[0]!.path).toBe("/chat/completions");
  });

  it("400 is the request's fault: bad_request with the endpoint's words", async () => {
    server = await startScriptedOpenAI([reply.error(400, "context_length_exceeded: too long")]);
    const error = await failure(runAgent(options(server.baseURL)));
    expect(error.kind).toBe("bad_request");
    expect(error.message).toContain("context_length_exceeded");
  });

  it("a 200 that is not a completion is a bad_response", async () => {
    server = await startScriptedOpenAI([{ kind: "json", body: { hello: "world" } }]);
    const error = await failure(runAgent(options(server.baseURL)));
    expect(error.kind).toBe("bad_response");
  });
});

describe("bad base URLs and options", () => {
  it("an unparsable or non-http base URL is an AgentConfigError before anything is sent", async () => {
    for (const baseURL of ["not a url", "ftp://127.0.0.1/v1", "", "file:///etc/passwd"]) {
      const thrown = await runAgent(options(baseURL)).catch((e: unknown) => e);
      expect(thrown).toBeInstanceOf(AgentConfigError);
      expect((thrown as AgentConfigError).option).toBe("baseURL");
    }
  });

  it("credentials in the base URL are refused, and the message does not repeat the password", async () => {
    const thrown = await runAgent(options("http://user:hunter2@127.0.0.1:9/v1")).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(AgentConfigError);
    expect((thrown as Error).message).toContain("http://127.0.0.1:9/v1");
    expect((thrown as Error).message).not.toContain("hunter2");
  });

  it("a port nobody listens on: a connection error after the retries", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const error = await failure(runAgent(options(`http://127.0.0.1:${port}/v1`, { retry: { initialDelayMs: 10, maxRetries: 2 } })));
    expect(error.kind).toBe("connection");
    expect(error.details.attempts).toBe(3);
    expect(error.message).toContain(`cannot reach http://127.0.0.1:${port}/v1 after 3 attempts`);
    expect(error.message).toMatch(/ECONNREFUSED/);
  });

  it("bad options are typed errors naming the option", async () => {
    const cases: [Partial<RunAgentOptions>, string][] = [
      [{ model: "" }, "model"],
      [{ maxTurns: 0 }, "maxTurns"],
      [{ maxTurns: 2.5 }, "maxTurns"],
      [{ prompt: undefined }, "prompt"],
      [{ modelSettings: { tools: [] } }, "modelSettings"],
      [{ messages: [{ role: "wizard", content: "x" }] as never }, "messages"],
      [{ messages: [{ role: "tool", content: "x" }] as never }, "messages"],
    ];
    for (const [extra, option] of cases) {
      const thrown = await runAgent(options("http://127.0.0.1:9/v1", extra)).catch((e: unknown) => e);
      expect(thrown, option).toBeInstanceOf(AgentConfigError);
      expect((thrown as AgentConfigError).option).toBe(option);
    }
  });
});

describe("the package entry", () => {
  it("exports runAgent (loading the loop on first use) and the same error classes", async () => {
    expect(pkg.AgentConfigError).toBe(AgentConfigError);
    expect(pkg.AgentEndpointError).toBe(AgentEndpointError);
    server = await startScriptedOpenAI([reply.text("through the entry")]);
    const result = await pkg.runAgent(options(server.baseURL));
    expect(result.finalText).toBe("through the entry");
    await expect(pkg.runAgent(options("nope"))).rejects.toBeInstanceOf(AgentConfigError);
  });
});
