// What a tool hands the model passes the redaction policy: every tool's error
// text (thrown errors, fail() messages, JSON error strings), and the output of
// tools that ask for it (`redactOutput`: plugin and MCP tools by default, tools
// registered in code when they opt in). These tests play the tool that leaks.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

import { afterEach, describe, expect, it } from "vitest";

import { ToolRegistry } from "../src/registry/tool-registry.js";
import { fail, ok } from "../src/dispatch/result.js";
import { handleFunctionCall, handleFunctionCallDetailed } from "../src/dispatch/handle-function-call.js";
import { executeToolCalls } from "../src/dispatch/execute-tool-calls.js";
import { applyRules, mayContainSecret, redactSecrets } from "../src/redaction/redact.js";
import { redactTextOrJson } from "../src/redaction/json.js";
import { clearConfigCache } from "../src/config/load-config.js";

const GITHUB = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB";
const AWS = "AKIAIOSFODNN7EXAMPLE";
const OPENAI = "sk-proj-abcdefghijklmnopqrstuvwxyz012345";

function leaky(): ToolRegistry {
  const reg = new ToolRegistry();
  const tool = (name: string, handler: () => unknown) =>
    reg.register({ name, toolset: "demo", schema: { description: name }, handler, redactOutput: name.startsWith("secret_") || name === "clean" });
  tool("boom", () => {
    throw new Error("db password=hunter2 failed at /home/u/app.ts:12");
  });
  tool("boom_async", async () => {
    throw new Error(`could not push with ${GITHUB}`);
  });
  tool("failer", () => fail(`AWS rejected ${AWS}`));
  tool("failer_plain", () => ({ success: false, error: `token ${OPENAI} expired` }));
  tool("error_json", () => JSON.stringify({ error: "login failed", password: "hunter2", tried: `curl -u admin:s3cret https://x` }));
  tool("secret_object", () => ({ token: GITHUB, note: `my api key is ${OPENAI}`, rows: [{ aws: AWS }], cmd: 'export API_KEY="abc123xyz"' }));
  tool("secret_text", () => `here you go: ${GITHUB}\nAPI_KEY=abc123xyz`);
  tool("secret_json_text", () => '{"password":"hunter2","user":"bob"}');
  tool("clean", () => ({ rows: [{ id: 1, name: "row 1" }] }));
  return reg;
}

function expectNoSecret(text: string): void {
  for (const secret of ["hunter2", GITHUB, AWS, OPENAI, "s3cret", "abc123xyz"]) expect(text).not.toContain(secret);
}

describe("error texts are redacted before they reach the model", () => {
  it("a thrown Error (sync and async), a fail() message, a plain failure, a JSON error string", async () => {
    const reg = leaky();
    for (const name of ["boom", "boom_async", "failer", "failer_plain", "error_json"]) {
      const outcome = await handleFunctionCallDetailed(name, {}, { registry: reg });
      expect(outcome.isError, name).toBe(true);
      expectNoSecret(outcome.content);
      expect(outcome.content).toContain("[REDACTED]");
      // Still JSON the model can read.
      expect(() => JSON.parse(outcome.content), name).not.toThrow();
    }
    expect(await handleFunctionCall("boom", {}, { registry: reg })).toBe(
      '{"error":"Tool execution failed: Error: db password=[REDACTED] failed at /home/u/app.ts:12"}',
    );
    expect(JSON.parse(await reg.dispatch("error_json"))).toEqual({ error: "login failed", password: "[REDACTED]", tried: "curl -u admin:[REDACTED] https://x" });
  });

  it("typed callers keep the tool's own words (the app's code, not the model)", async () => {
    const reg = leaky();
    const result = await reg.invoke({ name: "boom", arguments: {} });
    expect(result.error?.message).toContain("hunter2");
  });

  it("a post-hook's error quoting a secret is redacted too", async () => {
    const reg = leaky();
    reg.addPostHook(() => {
      throw new Error(`redactor crashed on ${GITHUB}`);
    });
    const content = await reg.dispatch("clean");
    expect(content).toContain("post-hook");
    expectNoSecret(content);
  });

  it("error texts of built-in tools are redacted as well", async () => {
    const reg = new ToolRegistry();
    reg.register({ name: "builtin_boom", toolset: "demo", source: { kind: "builtin" }, schema: { description: "b" }, handler: () => { throw new Error(`key ${AWS}`); } });
    expectNoSecret(await reg.dispatch("builtin_boom"));
  });
});

describe("output of tools registered with redactOutput is redacted for the model", () => {
  it("an object with a GitHub token, an OpenAI key, an AWS key and an exported API_KEY: redacted, still JSON", async () => {
    const reg = leaky();
    const outcome = await handleFunctionCallDetailed("secret_object", {}, { registry: reg });
    expect(outcome.isError).toBe(false);
    expectNoSecret(outcome.content);
    expect(JSON.parse(outcome.content)).toEqual({
      token: "[REDACTED]",
      note: "my api key is [REDACTED]",
      rows: [{ aws: "[REDACTED]" }],
      cmd: "export API_KEY=[REDACTED]",
    });
    // The typed result is the tool's data as it returned it.
    expect(outcome.result.data).toMatchObject({ token: GITHUB });
  });

  it("text and JSON text results", async () => {
    const reg = leaky();
    expect(await reg.dispatch("secret_text")).toBe("here you go: [REDACTED]\nAPI_KEY=[REDACTED]");
    expect(JSON.parse(await reg.dispatch("secret_json_text"))).toEqual({ password: "[REDACTED]", user: "bob" });
  });

  it("executeToolCalls redacts every call's content", async () => {
    const outcomes = await executeToolCalls(
      ["secret_object", "boom", "clean"].map((name, i) => ({ id: `c${i}`, name, arguments: {} })),
      { registry: leaky() },
    );
    for (const o of outcomes) expectNoSecret(o.content);
    expect(outcomes[2]!.content).toBe('{"rows":[{"id":1,"name":"row 1"}]}');
  });

  it("a result without a secret is byte for byte what the tool returned", async () => {
    const reg = new ToolRegistry();
    const data = { rows: [{ id: 1, name: "a  b" }], monkey: "business", "sort key": "x" };
    reg.register({ name: "plain", toolset: "demo", schema: { description: "p" }, handler: () => ok(data), redactOutput: true });
    expect(await reg.dispatch("plain")).toBe(JSON.stringify(data));
    // A fragment the pre-filter looks for ("key") without a secret: the tool's own layout is kept.
    const pretty = JSON.stringify({ keyboard: "us", monkey: 1 }, null, 2);
    reg.register({ name: "pretty", toolset: "demo", schema: { description: "p" }, handler: () => pretty, redactOutput: true });
    expect(await reg.dispatch("pretty")).toBe(pretty);
  });

  it("a tool registered in code sends its data as written unless it opts in; plugin and MCP tools are redacted by default", async () => {
    const reg = new ToolRegistry();
    // The application's own data: the name rules would rewrite `key` and `total_tokens` fields.
    const data = { rows: [{ key: "row1", value: 2 }], usage: { total_tokens: 12 }, token: GITHUB };
    reg.register({ name: "app_data", toolset: "demo", schema: { description: "a" }, handler: () => data });
    expect(JSON.parse(await reg.dispatch("app_data"))).toEqual(data);
    reg.register({ name: "from_plugin", toolset: "demo", source: { kind: "plugin", id: "p" }, schema: { description: "p" }, handler: () => data });
    reg.register({ name: "from_mcp", toolset: "demo", source: { kind: "mcp", server: "s" }, schema: { description: "m" }, handler: () => `got ${GITHUB}` });
    expect(JSON.parse(await reg.dispatch("from_plugin")).token).toBe("[REDACTED]");
    expect(await reg.dispatch("from_mcp")).toBe("got [REDACTED]");
    // A plugin may opt out, as code may opt in.
    reg.register({ name: "plugin_raw", toolset: "demo", source: { kind: "plugin", id: "p" }, redactOutput: false, schema: { description: "p" }, handler: () => `got ${GITHUB}` });
    expect(await reg.dispatch("plugin_raw")).toBe(`got ${GITHUB}`);
  });

  it("built-in tools' output is left to the tool (it redacts its own, line for line)", async () => {
    const reg = new ToolRegistry();
    reg.register({ name: "builtin_out", toolset: "demo", source: { kind: "builtin" }, schema: { description: "b" }, handler: () => `line ${AWS}` });
    expect(await reg.dispatch("builtin_out")).toBe(`line ${AWS}`);
  });
});

describe("the switch: config terminal.redact_output", () => {
  const home = process.env.MIBYAN_HOME!;
  afterEach(() => {
    rmSync(path.join(home, "config.yaml"), { force: true });
    clearConfigCache();
  });
  it("false turns redaction off for error texts and tools' output alike", async () => {
    mkdirSync(home, { recursive: true });
    writeFileSync(path.join(home, "config.yaml"), "terminal:\n  redact_output: false\n");
    clearConfigCache();
    const reg = leaky();
    expect(await reg.dispatch("boom")).toContain("hunter2");
    expect(await reg.dispatch("secret_object")).toContain(GITHUB);
  });
});

describe("the pre-filter never hides a secret from the rules", () => {
  const samples = [
    "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----",
    "Authorization: Basic dXNlcjpwYXNz",
    "Proxy-Authorization: Bearer abcdefghijkl",
    "Bearer abcdefghijklmnop",
    "https://user:pw@host/x",
    OPENAI,
    "sk_live_abcdefghijkl",
    "rk_test_abcdefghijkl",
    GITHUB,
    "github_pat_abcdefghijklmnopqrstuvwxyz",
    "glpat-abcdefghijklmnopqr",
    "xoxb-1234567890-abc",
    AWS,
    "ASIAIOSFODNN7EXAMPLE",
    "AIzaabcdefghijklmnopqrstuvwxyz0123456789",
    "hf_abcdefghijklmnopqrstuvwxyz",
    "npm_abcdefghijklmnopqrstuvwxyz0123456789",
    "eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0dXJl",
    '"password": "x1"',
    "X-Api-Key: v1",
    "export GITHUB_TOKEN=v1",
    "PWD=/secret/dir",
    "credentials=abc",
    "--passwd v1",
    "curl -u user:pass http://x",
    "curl --user user:pass http://x",
    "mysql -pHunter2",
    "DB_SECRET=v1",
  ];
  it("every rule's sample passes the pre-filter and is redacted", () => {
    for (const sample of samples) {
      expect(mayContainSecret(sample), sample).toBe(true);
      expect(redactSecrets(sample), sample).not.toBe(sample);
    }
  });
  it("random texts: whenever a rule matches, the pre-filter said so", () => {
    const pieces = ["a", "b", "=", ":", " ", "-", "_", "/", "@", '"', "'", "\n", ".", "x9", "AKIA", "IOSFODNN7EXAMPLE1", "k", "e", "y", "p", "u", "sk", "ghp", "Bearer", "AbCdEfGhIjKlMnOpQrStUv", "12345678901234567890"];
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    let matched = 0;
    for (let i = 0; i < 20_000; i++) {
      let text = "";
      for (let j = rand(30); j >= 0; j--) text += pieces[rand(pieces.length)];
      if (applyRules(text) !== text) {
        matched++;
        expect(mayContainSecret(text), text).toBe(true);
      }
    }
    expect(matched).toBeGreaterThan(30);
  });
  it("redacted JSON stays JSON, escaped quotes included", () => {
    const text = JSON.stringify({ out: 'API_KEY="abc123xyz" and password: "hunter2"', __proto__key: 1 });
    const redacted = redactTextOrJson(text);
    expect(() => JSON.parse(redacted)).not.toThrow();
    expectNoSecret(redacted);
  });
});
