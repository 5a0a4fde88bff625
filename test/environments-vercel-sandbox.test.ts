/**
 * The vercel_sandbox backend, driven through the real `@vercel/sandbox` SDK
 * against a local stand-in for the Vercel Sandbox API
 * (test/support/vercel-sandbox-stand-in.ts: a real HTTP server on 127.0.0.1
 * that runs the commands with real bash in a private temporary directory and
 * records every request). Covered: option parsing and credentials, the
 * requests the client makes (creation, commands, stop and delete, the token as
 * a bearer), API errors surfaced clearly and without the token, and the shared
 * environment contract over `SandboxEnvironment`.
 */

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";

import { BACKENDS } from "../src/environments/backends.js";
import type { SandboxCommandEnd } from "../src/environments/sandbox-transport.js";
import type { Environment } from "../src/environments/types.js";
import {
  createVercelSandboxFactory,
  mergeVercelSandboxOptions,
  vercelSandboxOptionsFromConfig,
  vercelSandboxUnavailableReason,
  VercelSandboxTransport,
  type VercelSandboxOptions,
} from "../src/environments/vercel-sandbox.js";
import { rebasedFetch } from "../src/environments/vercel-sandbox-transport.js";
import { environmentContract } from "./support/environment-contract.js";
import { VercelSandboxStandIn, type RecordedRequest } from "./support/vercel-sandbox-stand-in.js";

const TOKEN = "vcp_test_8f3a61c2d9e04b7a";
const TEAM = "team_mibyan";
const PROJECT = "prj_mibyan";
/** A Vercel OIDC token's shape: a JWT naming its team (owner_id) and project; valid for a day. */
const OIDC_TOKEN = [
  Buffer.from(JSON.stringify({ alg: "RS256", typ: "JWT" })).toString("base64url"),
  Buffer.from(JSON.stringify({ owner_id: "team_oidc", project_id: "prj_oidc", exp: Math.floor(Date.now() / 1000) + 86_400 })).toString("base64url"),
  "c2lnbmF0dXJl",
].join(".");

const base = { timeoutMs: 20_000, maxOutputChars: 100_000 };

let standIn: VercelSandboxStandIn;
const transports: VercelSandboxTransport[] = [];

beforeAll(async () => {
  standIn = await VercelSandboxStandIn.start([
    { token: TOKEN, teamId: TEAM, projectId: PROJECT },
    { token: OIDC_TOKEN, teamId: "team_oidc", projectId: "prj_oidc" },
  ]);
});

afterAll(async () => {
  await Promise.allSettled(transports.splice(0).map((t) => t.close()));
  await standIn.close();
});

function options(extra: VercelSandboxOptions = {}): VercelSandboxOptions {
  return { token: TOKEN, teamId: TEAM, projectId: PROJECT, apiUrl: standIn.apiUrl, ...extra };
}

async function open(taskId: string, extra: VercelSandboxOptions = {}): Promise<VercelSandboxTransport> {
  const transport = await VercelSandboxTransport.open(taskId, options(extra));
  transports.push(transport);
  return transport;
}

/** Runs argv to its end through the transport, collecting its output. */
async function run(transport: VercelSandboxTransport, argv: string[]): Promise<{ output: string; end: SandboxCommandEnd }> {
  const chunks: Buffer[] = [];
  const command = await transport.start(argv, (chunk) => chunks.push(Buffer.from(chunk)));
  const end = await command.done;
  return { output: Buffer.concat(chunks).toString("utf8"), end };
}

function creation(name: string): RecordedRequest {
  const request = standIn.find("POST", /^\/v[23]\/sandboxes$/).find((r) => (r.json as { name?: string }).name === name);
  if (!request) throw new Error(`no creation request for ${name}`);
  return request;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("vercel_sandbox options", () => {
  it("reads every key of terminal.vercel_sandbox", () => {
    expect(
      vercelSandboxOptionsFromConfig({
        runtime: "node24",
        vcpus: 4,
        timeout_minutes: 45,
        ports: [3000, 3000, 8080],
        network: ["*.npmjs.org", "github.com"],
        region: "fra1",
        cwd: "/vercel/sandbox/work",
        env: { NODE_ENV: "test", RETRIES: 3, VERBOSE: true },
        team_id: "team_cfg",
        project_id: "prj_cfg",
        api_url: "https://sandbox-proxy.example.org/api",
      }),
    ).toEqual({
      runtime: "node24",
      vcpus: 4,
      timeoutMinutes: 45,
      ports: [3000, 8080],
      network: ["*.npmjs.org", "github.com"],
      region: "fra1",
      cwd: "/vercel/sandbox/work",
      env: { NODE_ENV: "test", RETRIES: "3", VERBOSE: "true" },
      teamId: "team_cfg",
      projectId: "prj_cfg",
      apiUrl: "https://sandbox-proxy.example.org/api",
    });
    expect(vercelSandboxOptionsFromConfig({ image: "vercel/sandbox/ubuntu", network: "deny-all", timeout_minutes: "0.5" })).toEqual({
      image: "vercel/sandbox/ubuntu",
      network: "deny-all",
      timeoutMinutes: 0.5,
    });
    expect(vercelSandboxOptionsFromConfig(undefined)).toEqual({});
  });

  it.each([
    [{ vcpus: 0 }, /terminal\.vercel_sandbox\.vcpus must be a positive integer/],
    [{ vcpus: 1.5 }, /terminal\.vercel_sandbox\.vcpus/],
    [{ timeout_minutes: -1 }, /terminal\.vercel_sandbox\.timeout_minutes must be a positive number/],
    [{ timeout_minutes: "soon" }, /terminal\.vercel_sandbox\.timeout_minutes/],
    [{ runtime: "node18" }, /terminal\.vercel_sandbox\.runtime must be one of node26, node24, node22, python3\.13/],
    [{ runtime: "node24", image: "vercel/sandbox/ubuntu" }, /runtime and terminal\.vercel_sandbox\.image cannot both be set/],
    [{ ports: [0] }, /terminal\.vercel_sandbox\.ports/],
    [{ ports: "3000" }, /terminal\.vercel_sandbox\.ports/],
    [{ ports: Array.from({ length: 16 }, (_, i) => 3000 + i) }, /at most 15/],
    [{ network: "none" }, /terminal\.vercel_sandbox\.network must be allow-all, deny-all/],
    [{ network: [] }, /terminal\.vercel_sandbox\.network/],
    [{ network: ["ok.example", "bad domain"] }, /terminal\.vercel_sandbox\.network/],
    [{ cwd: "work" }, /terminal\.vercel_sandbox\.cwd must be an absolute path/],
    [{ region: "" }, /terminal\.vercel_sandbox\.region must be a non-empty string/],
    [{ env: ["A=1"] }, /terminal\.vercel_sandbox\.env must be a mapping/],
    [{ env: { "1A": "x" } }, /terminal\.vercel_sandbox\.env\.1A is not a valid variable name/],
    [{ env: { A: { nested: 1 } } }, /terminal\.vercel_sandbox\.env\.A must be a string/],
    [{ api_url: "http://sandbox-proxy.example.org/api" }, /terminal\.vercel_sandbox\.api_url must use https/],
    [{ api_url: "ftp://127.0.0.1/api" }, /terminal\.vercel_sandbox\.api_url must use https/],
    [{ api_url: "not a url" }, /terminal\.vercel_sandbox\.api_url must be an absolute URL/],
    [{ vcpu: 2 }, /terminal\.vercel_sandbox\.vcpu is not a known key/],
  ])("rejects %j", (section, message) => {
    expect(() => vercelSandboxOptionsFromConfig(section as Record<string, unknown>)).toThrow(message);
  });

  it("refuses a token in config.yaml without repeating it", () => {
    let message = "";
    try {
      vercelSandboxOptionsFromConfig({ token: TOKEN });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/terminal\.vercel_sandbox\.token is not read from config\.yaml: set the VERCEL_TOKEN environment variable/);
    expect(message).not.toContain(TOKEN);
    expect(() => vercelSandboxOptionsFromConfig("yes" as unknown as Record<string, unknown>)).toThrow(/terminal\.vercel_sandbox must be a mapping/);
  });

  it("takes credentials from the vendor's variables; the section's team and project win", () => {
    const env = { VERCEL_TOKEN: ` ${TOKEN} `, VERCEL_TEAM_ID: "team_env", VERCEL_PROJECT_ID: "prj_env", VERCEL_OIDC_TOKEN: "" };
    expect(mergeVercelSandboxOptions({ team_id: "team_cfg", vcpus: 2 }, env)).toEqual({ token: TOKEN, teamId: "team_cfg", projectId: "prj_env", vcpus: 2 });
    expect(mergeVercelSandboxOptions(undefined, {})).toEqual({});
  });

  it("is unavailable without credentials or without the SDK, saying which, never showing a token", () => {
    const installed = () => true;
    expect(vercelSandboxUnavailableReason({}, installed)).toMatch(/set VERCEL_TOKEN, VERCEL_TEAM_ID and VERCEL_PROJECT_ID, or VERCEL_OIDC_TOKEN/);
    const noTeam = vercelSandboxUnavailableReason({ token: TOKEN }, installed)!;
    expect(noTeam).toMatch(/VERCEL_TOKEN is set but VERCEL_TEAM_ID .* and VERCEL_PROJECT_ID .* are missing/);
    expect(noTeam).not.toContain(TOKEN);
    expect(vercelSandboxUnavailableReason({ token: TOKEN, teamId: TEAM }, installed)).toMatch(/VERCEL_PROJECT_ID \(or terminal\.vercel_sandbox\.project_id\) is missing/);
    const badOidc = vercelSandboxUnavailableReason({ oidcToken: "not-a-jwt-but-secret" }, installed)!;
    expect(badOidc).toMatch(/VERCEL_OIDC_TOKEN is not a Vercel OIDC token/);
    expect(badOidc).not.toContain("not-a-jwt-but-secret");
    expect(vercelSandboxUnavailableReason({ token: TOKEN, teamId: TEAM, projectId: PROJECT }, installed)).toBeUndefined();
    expect(vercelSandboxUnavailableReason({ oidcToken: OIDC_TOKEN }, installed)).toBeUndefined();
    expect(vercelSandboxUnavailableReason({ token: TOKEN, teamId: TEAM, projectId: PROJECT }, () => false)).toMatch(/install @vercel\/sandbox to use the vercel_sandbox terminal backend/);
    // The SDK is a devDependency here, so the real check finds it.
    expect(vercelSandboxUnavailableReason({ token: TOKEN, teamId: TEAM, projectId: PROJECT })).toBeUndefined();
  });

  it("reports a malformed section as the factory's reason to be unavailable", () => {
    const factory = createVercelSandboxFactory(() => vercelSandboxOptionsFromConfig({ vcpus: "many" }));
    expect(factory.backend).toBe("vercel_sandbox");
    expect(factory.unavailableReason()).toMatch(/configuration is invalid: terminal\.vercel_sandbox\.vcpus/);
  });

  it("is the registry's vercel_sandbox backend", async () => {
    const factory = await BACKENDS.vercel_sandbox!();
    expect(factory.backend).toBe("vercel_sandbox");
  });
});

describe("vercel_sandbox transport against the stand-in", () => {
  it("creates the sandbox as configured, sending the token as a bearer", async () => {
    const transport = await open("task/A b", {
      runtime: "node22",
      vcpus: 4,
      timeoutMinutes: 10,
      ports: [3000],
      network: "deny-all",
      region: "fra1",
      env: { GREETING: "hello" },
    });
    expect(transport.name).toMatch(/^mibyan-task-A-b-[0-9a-f]{8}$/);
    expect(transport.description).toBe(`vercel sandbox ${transport.name}`);
    const request = creation(transport.name);
    // The legacy runtime goes to /v2; images (and the default) to /v3.
    expect(request.path).toBe("/v2/sandboxes");
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(request.headers["user-agent"]).toMatch(/^vercel\/sandbox\/\d/);
    expect(request.query).toEqual({ teamId: TEAM });
    expect(request.json).toEqual({
      name: transport.name,
      projectId: PROJECT,
      runtime: "node22",
      resources: { vcpus: 4 },
      timeout: 600_000,
      ports: [3000],
      networkPolicy: { mode: "deny-all" },
      region: "fra1",
      env: { GREETING: "hello" },
      persistent: false,
    });
    expect((await run(transport, ["bash", "-c", 'echo "$GREETING"'])).output).toBe("hello\n");

    const imaged = await open("task-b", { image: "vercel/sandbox/ubuntu", network: ["*.npmjs.org", "github.com"] });
    const second = creation(imaged.name);
    expect(second.path).toBe("/v3/sandboxes");
    expect(second.json).toEqual({
      name: imaged.name,
      projectId: PROJECT,
      image: "vercel/sandbox/ubuntu",
      timeout: 30 * 60_000,
      ports: [],
      networkPolicy: { allow: ["*.npmjs.org", "github.com"] },
      persistent: false,
    });
  });

  it("starts argv as a detached command, unquoted, and follows its output and exit code", async () => {
    const transport = await open("argv");
    const before = standIn.requests.length;
    const r = await run(transport, ["printf", "%s|", "a b", "it's", "$HOME", "ü ✓"]);
    expect(r.output).toBe("a b|it's|$HOME|ü ✓|");
    expect(r.end).toEqual({ exitCode: 0 });
    const calls = standIn.requests.slice(before);
    const post = calls.find((c) => c.method === "POST" && c.path.endsWith("/cmd"))!;
    expect(post.json).toMatchObject({ command: "printf", args: ["%s|", "a b", "it's", "$HOME", "ü ✓"] });
    expect(post.json).not.toHaveProperty("wait");
    expect(post.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(calls.some((c) => c.method === "GET" && c.path.endsWith("/logs"))).toBe(true);
    expect(calls.some((c) => c.method === "GET" && c.query.wait === "true")).toBe(true);

    expect((await run(transport, ["bash", "-c", "echo out; echo err >&2; exit 42"])).end.exitCode).toBe(42);
    const both = await run(transport, ["bash", "-c", "echo out; sleep 0.2; echo err >&2"]);
    expect(both.output).toBe("out\nerr\n");
    await expect(transport.start([], () => undefined)).rejects.toThrow(/no program/);
  });

  it("detaches without waiting for or signalling the program", async () => {
    const transport = await open("detach");
    const command = await transport.start(["bash", "-c", "sleep 0.6; echo late > late.txt; sleep 30"], () => undefined);
    const started = Date.now();
    setTimeout(() => command.detach(), 100);
    expect(await command.done).toEqual({ exitCode: null });
    expect(Date.now() - started).toBeLessThan(1_000);
    // It went on running in the sandbox.
    await vi.waitFor(async () => expect((await run(transport, ["cat", "late.txt"])).output).toBe("late\n"), { timeout: 5_000, interval: 200 });
  });

  it("close stops the session and deletes the sandbox, idempotently, killing what runs", async () => {
    const transport = await open("close");
    const chunks: Buffer[] = [];
    const running = await transport.start(["bash", "-c", "echo $$; exec sleep 30"], (c) => chunks.push(Buffer.from(c)));
    await vi.waitFor(() => expect(Buffer.concat(chunks).toString()).toMatch(/^\d+\n$/));
    const pid = Number(Buffer.concat(chunks).toString());
    expect(processAlive(pid)).toBe(true);

    const before = standIn.requests.length;
    await transport.close();
    const calls = standIn.requests.slice(before).filter((r) => r.method !== "GET");
    expect(calls.map((r) => `${r.method} ${r.path.replace(/sess_\w+/, "SESSION")}`)).toEqual([
      "POST /v2/sandboxes/sessions/SESSION/stop",
      `DELETE /v2/sandboxes/${transport.name}`,
    ]);
    expect(calls[1]!.query).toEqual({ teamId: TEAM, projectId: PROJECT });
    expect(calls.every((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(standIn.sandboxes.get(transport.name)!.deleted).toBe(true);
    expect((await running.done).exitCode).toBeNull();
    await vi.waitFor(() => expect(processAlive(pid)).toBe(false));

    const after = standIn.requests.length;
    await transport.close();
    expect(standIn.requests.length).toBe(after);
    await expect(transport.start(["true"], () => undefined)).rejects.toThrow(/vercel sandbox mibyan-close-\w+ was deleted/);
  });

  it("treats a sandbox already stopped or deleted as closed", async () => {
    const transport = await open("gone");
    standIn.expire(transport.name);
    standIn.failNext("DELETE", /^\/v2\/sandboxes\/mibyan-gone-/, 404, "Sandbox not found", "not_found");
    await expect(transport.close()).resolves.toBeUndefined();
  });

  it("surfaces a failed deletion clearly", async () => {
    const transport = await open("undeletable");
    standIn.failNext("DELETE", /^\/v2\/sandboxes\/mibyan-undeletable-/, 403, "Deleting sandboxes is not allowed for this token", "forbidden");
    await expect(transport.close()).rejects.toThrow(
      /deleting vercel sandbox mibyan-undeletable-\w+ failed: HTTP 403: Deleting sandboxes is not allowed for this token \(check VERCEL_TOKEN.*\(it ends by itself when its timeout runs out\)/,
    );
  });

  it("reports API errors clearly and never shows the token", async () => {
    const wrong = "vcp_wrong_0d1e2f3a4b5c";
    const rejected = await VercelSandboxTransport.open("bad-token", options({ token: wrong })).catch((err: Error) => err);
    expect(rejected).toBeInstanceOf(Error);
    expect((rejected as Error).message).toMatch(
      /^creating Vercel sandbox mibyan-bad-token-\w+ \(team team_mibyan, project prj_mibyan\) failed: HTTP 403: Not authorized: the token is missing, invalid or expired \(check VERCEL_TOKEN/,
    );
    expect((rejected as Error).message).not.toContain(wrong);
    expect(standIn.requests.at(-1)!.headers.authorization).toBe(`Bearer ${wrong}`);

    await expect(VercelSandboxTransport.open("bad-runtime", options({ runtime: "node18" }))).rejects.toThrow(/failed: HTTP 400: Unknown runtime node18$/);

    // A server message that echoes the token is redacted too.
    standIn.failNext("POST", /^\/v3\/sandboxes$/, 400, `token ${TOKEN} is not allowed here`);
    const echoed = (await VercelSandboxTransport.open("echo", options()).catch((err: Error) => err)) as Error;
    expect(echoed.message).toMatch(/HTTP 400: token \[REDACTED\] is not allowed here/);
    expect(echoed.message).not.toContain(TOKEN);

    await expect(VercelSandboxTransport.open("no-creds", { apiUrl: standIn.apiUrl })).rejects.toThrow(/cannot create a Vercel sandbox: no Vercel credentials/);
  });

  it("reports an unreachable API without the token", async () => {
    const closed = await VercelSandboxStandIn.start([]);
    const apiUrl = closed.apiUrl;
    await closed.close();
    const err = (await VercelSandboxTransport.open("unreachable", options({ apiUrl })).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(/^creating Vercel sandbox mibyan-unreachable-\w+ .* failed: fetch failed/);
    expect(err.message).not.toContain(TOKEN);
  });

  it("says so when the sandbox has stopped (its timeout ran out)", async () => {
    const transport = await open("expired");
    const chunks: Buffer[] = [];
    const running = await transport.start(["sleep", "30"], (c) => chunks.push(Buffer.from(c)));
    standIn.expire(transport.name);
    const end = await running.done;
    expect(end.exitCode).toBeNull();
    expect(end.error?.message).toMatch(/following the output of cmd_\w+ in vercel sandbox mibyan-expired-\w+ failed: sandbox_stopped: The sandbox timed out/);
    await expect(transport.start(["true"], () => undefined)).rejects.toThrow(
      /starting true in vercel sandbox mibyan-expired-\w+ failed: HTTP 410: The sandbox has stopped \(the sandbox has stopped: its timeout_minutes ran out/,
    );
    // It is not resumed behind the environment's back in a fresh session.
    expect(standIn.find("GET", /^\/v2\/sandboxes\/mibyan-expired-/)).toEqual([]);
  });

  it("authenticates with VERCEL_OIDC_TOKEN: team and project from the token", async () => {
    // The SDK re-reads the variable before each request (to refresh a token about to expire).
    vi.stubEnv("VERCEL_OIDC_TOKEN", OIDC_TOKEN);
    try {
      const factory = createVercelSandboxFactory(() => ({ ...mergeVercelSandboxOptions(undefined, { VERCEL_OIDC_TOKEN: OIDC_TOKEN }), apiUrl: standIn.apiUrl }));
      expect(factory.unavailableReason()).toBeUndefined();
      const before = standIn.requests.length;
      const env = await factory.create("oidc");
      try {
        expect((await env.exec("echo oidc", base)).output).toBe("oidc\n");
      } finally {
        await env.close();
      }
      const calls = standIn.requests.slice(before);
      expect(calls.length).toBeGreaterThan(4);
      for (const call of calls) {
        expect(call.headers.authorization).toBe(`Bearer ${OIDC_TOKEN}`);
        expect(call.query.teamId).toBe("team_oidc");
      }
      expect(calls[0]!.json).toMatchObject({ projectId: "prj_oidc" });
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("sends the SDK's requests to api_url only", async () => {
    await expect(rebasedFetch(standIn.apiUrl)("https://elsewhere.example/api/v2/sandboxes")).rejects.toThrow(/refusing to send a request outside the Sandbox API/);
  });
});

describe("vercel_sandbox environment", () => {
  const dirs: string[] = [];
  const envs: Environment[] = [];
  afterEach(async () => {
    await Promise.allSettled(envs.splice(0).map((e) => e.close()));
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("runs the task's commands as bash in the sandbox, from the configured cwd, with the configured env", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mibyan-vercel-cwd-"));
    dirs.push(dir);
    const factory = createVercelSandboxFactory(options({ cwd: `${dir}/work/project`, env: { MIBYAN_VERCEL: "configured" } }));
    const before = standIn.requests.length;
    const env = await factory.create("env-1");
    envs.push(env);
    expect(env.backend).toBe("vercel_sandbox");
    expect(env.isolation).toEqual({ name: "vercel_sandbox", hostMounts: false });
    expect(env.cwd).toBe(`${dir}/work/project`);
    const r = await env.exec('pwd; echo "$MIBYAN_VERCEL"; cd ..', base);
    expect(r.output).toBe(`${dir}/work/project\nconfigured\n`);
    expect(env.cwd).toBe(`${dir}/work`);
    const commands = standIn.requests.slice(before).filter((c) => c.method === "POST" && c.path.endsWith("/cmd"));
    expect(commands.length).toBe(2);
    for (const c of commands) expect(c.json).toMatchObject({ command: "bash", args: expect.arrayContaining(["-c"]) });
    expect((commands[1]!.json as { args: string[] }).args.at(-1)).toBe('pwd; echo "$MIBYAN_VERCEL"; cd ..');
  });

  it("runs the kill script as a second command on timeout", async () => {
    const env = await createVercelSandboxFactory(options({ killGraceMs: 500 })).create("env-2");
    envs.push(env);
    const before = standIn.requests.length;
    const r = await env.exec("sleep 30", { ...base, timeoutMs: 500 });
    expect(r).toMatchObject({ exitCode: 124, timedOut: true });
    expect(standIn.requests.slice(before).filter((c) => c.method === "POST" && c.path.endsWith("/cmd")).length).toBe(2);
  });

  it("deletes a sandbox whose preparation failed", async () => {
    const factory = createVercelSandboxFactory(options({ cwd: "/proc/mibyan-cannot-exist" }));
    await expect(factory.create("env-3")).rejects.toThrow(/preparing vercel sandbox mibyan-env-3-\w+ failed \(exit code 3/);
    const name = standIn.find("POST", /^\/v3\/sandboxes$/).map((r) => (r.json as { name: string }).name).filter((n) => n.startsWith("mibyan-env-3-")).at(-1)!;
    expect(standIn.sandboxes.get(name)!.deleted).toBe(true);
  });
});

// The behaviours every backend shares, over SandboxEnvironment and this transport (a sandbox per test).
environmentContract(
  "vercel_sandbox (local stand-in for the Vercel API)",
  (taskId) => createVercelSandboxFactory(() => options()).create(taskId),
  { testTimeoutMs: 30_000 },
);

// The same against the real service, only when asked to (it creates billed sandboxes): credentials from the
// usual variables, every other option from MIBYAN_TEST_VERCEL_SANDBOX_CONFIG (JSON, snake_case keys).
const liveOptions = (): VercelSandboxOptions =>
  mergeVercelSandboxOptions(JSON.parse(process.env.MIBYAN_TEST_VERCEL_SANDBOX_CONFIG || "{}") as Record<string, unknown>, process.env);
function liveSkip(): string | undefined {
  if (process.env.MIBYAN_TEST_VERCEL_SANDBOX !== "1") return "set MIBYAN_TEST_VERCEL_SANDBOX=1 and Vercel credentials to run it";
  const reason = vercelSandboxUnavailableReason(liveOptions());
  return reason === undefined ? undefined : `vercel_sandbox is unavailable: ${reason}`;
}
const liveSkipReason = liveSkip();
environmentContract(
  "vercel_sandbox (the real Vercel service)",
  (taskId) => createVercelSandboxFactory(liveOptions).create(taskId),
  { testTimeoutMs: 120_000, ...(liveSkipReason !== undefined ? { skip: liveSkipReason } : {}) },
);

describe("vercel_sandbox cleanup", () => {
  it("left no sandbox running and no files behind", async () => {
    await Promise.allSettled(transports.splice(0).map((t) => t.close()));
    expect(standIn.running().map((s) => s.name)).toEqual([]);
    for (const sandbox of standIn.sandboxes.values()) expect(existsSync(sandbox.session.dir)).toBe(false);
  });
});
