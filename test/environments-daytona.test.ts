/**
 * The daytona backend against a local stand-in of Daytona
 * (test/support/daytona-stand-in.ts): the real `@daytonaio/sdk` talks to a
 * real HTTP/WebSocket server on 127.0.0.1 that runs the commands with real
 * bash, so what is checked here is what the SDK really sends and what the
 * commands really do. The shared contract suite runs over `SandboxEnvironment`
 * with this backend's transport.
 */

import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { BACKENDS } from "../src/environments/backends.js";
import {
  createDaytonaFactory,
  daytonaApiUrlProblem,
  daytonaKeepAliveMs,
  daytonaOptionsFromConfig,
  daytonaOptionsFromEnv,
  daytonaUnavailableReason,
  DaytonaTransport,
  mergeDaytonaOptions,
  resolveDaytonaCredentials,
  type DaytonaOptions,
} from "../src/environments/daytona.js";
import { endTag, frameCommand, FramedOutput, unswap } from "../src/environments/daytona-output.js";
import type { SandboxCommandEnd } from "../src/environments/sandbox-transport.js";
import { DaytonaStandIn } from "./support/daytona-stand-in.js";
import { environmentContract } from "./support/environment-contract.js";

const API_KEY = `dtn_${randomBytes(16).toString("hex")}`;
const JWT = `eyJ.${randomBytes(12).toString("hex")}.sig`;
const JWT_ORG = "org-jwt-1";

let standIn: DaytonaStandIn;
const opened: DaytonaTransport[] = [];

beforeAll(async () => {
  standIn = await DaytonaStandIn.start({ apiKeys: [API_KEY], jwts: [{ token: JWT, organizationId: JWT_ORG }] });
});

afterAll(async () => {
  await Promise.allSettled(opened.map((t) => t.close()));
  await standIn?.close();
});

function options(extra: DaytonaOptions = {}): DaytonaOptions {
  return { apiKey: API_KEY, apiUrl: standIn.apiUrl, ...extra };
}

async function open(taskId: string, extra: DaytonaOptions = {}): Promise<DaytonaTransport> {
  const transport = await DaytonaTransport.open(taskId, options(extra));
  opened.push(transport);
  return transport;
}

interface Collected {
  output: Buffer;
  end: SandboxCommandEnd;
  /** When each chunk arrived, ms after the start. */
  times: number[];
}

async function run(transport: DaytonaTransport, argv: string[]): Promise<Collected> {
  const chunks: Buffer[] = [];
  const times: number[] = [];
  const started = Date.now();
  const command = await transport.start(argv, (chunk) => {
    chunks.push(Buffer.from(chunk));
    times.push(Date.now() - started);
  });
  const end = await command.done;
  return { output: Buffer.concat(chunks), end, times };
}

const sh = (script: string): string[] => ["bash", "-c", script];

/** The absolute path of a program on this process's PATH. */
function onPath(name: string): string {
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const path = join(dir, name);
    if (dir !== "" && existsSync(path)) return path;
  }
  throw new Error(`${name} is not on PATH`);
}

describe("daytona options", () => {
  it("reads every key of terminal.daytona", () => {
    expect(
      daytonaOptionsFromConfig({
        api_url: "https://daytona.example.com/api",
        target: "eu",
        organization_id: "org-1",
        image: "debian:12",
        cpu: 2,
        memory: "4",
        disk: 10,
        user: "root",
        auto_stop_minutes: 0,
        auto_delete_minutes: -1,
        network_block_all: false,
        network_allow_list: "10.0.0.0/8, 192.168.1.0/24",
        cwd: "/workspace",
        env: { FOO: "bar", N: 3 },
        labels: { team: "infra" },
        create_timeout_seconds: 300,
      }),
    ).toEqual({
      apiUrl: "https://daytona.example.com/api",
      target: "eu",
      organizationId: "org-1",
      image: "debian:12",
      cpu: 2,
      memory: 4,
      disk: 10,
      user: "root",
      autoStopMinutes: 0,
      autoDeleteMinutes: -1,
      networkBlockAll: false,
      networkAllowList: ["10.0.0.0/8", "192.168.1.0/24"],
      cwd: "/workspace",
      env: { FOO: "bar", N: "3" },
      labels: { team: "infra" },
      createTimeoutMs: 300_000,
    });
    expect(daytonaOptionsFromConfig({ snapshot: "my-snapshot", network_allow_list: ["1.2.3.4/32"] })).toEqual({ snapshot: "my-snapshot", networkAllowList: ["1.2.3.4/32"] });
    expect(daytonaOptionsFromConfig(undefined)).toEqual({});
  });

  it("rejects bad values, naming the key", () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ snapshot: "a", image: "b" }, /terminal\.daytona\.snapshot and terminal\.daytona\.image cannot both be set/],
      [{ cpu: 2 }, /terminal\.daytona\.cpu needs terminal\.daytona\.image/],
      [{ snapshot: "s", memory: 2 }, /terminal\.daytona\.memory needs terminal\.daytona\.image/],
      [{ image: "x", cpu: 1.5 }, /terminal\.daytona\.cpu must be a positive integer/],
      [{ image: "x", disk: 0 }, /terminal\.daytona\.disk must be a positive integer/],
      [{ auto_stop_minutes: -1 }, /terminal\.daytona\.auto_stop_minutes must be a whole number/],
      [{ auto_delete_minutes: -2 }, /terminal\.daytona\.auto_delete_minutes must be a whole number/],
      [{ network_block_all: "yes" }, /terminal\.daytona\.network_block_all must be true or false/],
      [{ network_allow_list: ["example.com"] }, /terminal\.daytona\.network_allow_list must be a non-empty list of IPv4 networks/],
      [{ network_allow_list: "10.0.0.0/33" }, /terminal\.daytona\.network_allow_list/],
      [{ cwd: "relative/dir" }, /terminal\.daytona\.cwd must be an absolute path/],
      [{ env: ["A=1"] }, /terminal\.daytona\.env must be a mapping/],
      [{ env: { "1BAD": "x" } }, /terminal\.daytona\.env\.1BAD is not a valid variable name/],
      [{ labels: { "mibyan.task": "x" } }, /terminal\.daytona\.labels\.mibyan\.task is set by mibyan itself/],
      [{ api_url: "http://daytona.example.com/api" }, /terminal\.daytona\.api_url must use https/],
      [{ api_url: "not a url" }, /terminal\.daytona\.api_url must be an absolute URL/],
      [{ create_timeout_seconds: 0 }, /terminal\.daytona\.create_timeout_seconds must be a positive number/],
      [{ snapshto: "typo" }, /terminal\.daytona\.snapshto is not a known key/],
      [{ image: "" }, /terminal\.daytona\.image must be a non-empty string/],
    ];
    for (const [section, message] of bad) expect(() => daytonaOptionsFromConfig(section), JSON.stringify(section)).toThrow(message);
  });

  it("never reads a credential from config.yaml", () => {
    expect(() => daytonaOptionsFromConfig({ api_key: "secret-value" })).toThrow(/terminal\.daytona\.api_key is not read from config\.yaml: set the DAYTONA_API_KEY environment variable/);
    expect(() => daytonaOptionsFromConfig({ jwt_token: "secret-value" })).toThrow(/DAYTONA_JWT_TOKEN/);
    try {
      daytonaOptionsFromConfig({ api_key: "secret-value" });
    } catch (err) {
      expect((err as Error).message).not.toContain("secret-value");
    }
  });

  it("takes credentials and defaults from the vendor's variables; the section wins", () => {
    const env = { DAYTONA_API_KEY: " key-1 ", DAYTONA_API_URL: "https://env.example.com/api", DAYTONA_TARGET: "us", DAYTONA_ORGANIZATION_ID: "org-env" };
    expect(daytonaOptionsFromEnv(env)).toEqual({ apiKey: "key-1", apiUrl: "https://env.example.com/api", target: "us", organizationId: "org-env" });
    expect(mergeDaytonaOptions({ target: "eu", api_url: "https://section.example.com/api" }, env)).toMatchObject({
      apiKey: "key-1",
      target: "eu",
      apiUrl: "https://section.example.com/api",
      organizationId: "org-env",
    });
    expect(() => daytonaOptionsFromEnv({ DAYTONA_API_URL: "http://remote.example.com" })).toThrow(/DAYTONA_API_URL must use https/);
    expect(daytonaApiUrlProblem("http://127.0.0.1:8080/api")).toBeUndefined();
    expect(daytonaApiUrlProblem("http://localhost/api")).toBeUndefined();
    expect(daytonaApiUrlProblem("https://user:pw@example.com/api")).toMatch(/credentials/);
  });

  it("resolves the credentials or says what is missing", () => {
    expect(resolveDaytonaCredentials({ apiKey: "k", jwtToken: "j" })).toEqual({ credentials: { kind: "apiKey", apiKey: "k" } });
    expect(resolveDaytonaCredentials({ jwtToken: "j", organizationId: "o" })).toEqual({ credentials: { kind: "jwt", jwtToken: "j", organizationId: "o" } });
    expect(resolveDaytonaCredentials({ jwtToken: "j" })).toEqual({ problem: expect.stringMatching(/DAYTONA_JWT_TOKEN is set but DAYTONA_ORGANIZATION_ID/) });
    expect(resolveDaytonaCredentials({})).toEqual({ problem: expect.stringMatching(/set DAYTONA_API_KEY/) });
  });

  it("is the registry's daytona backend", async () => {
    const factory = await BACKENDS.daytona!();
    expect(factory.backend).toBe("daytona");
  });

  it("is unavailable without credentials or without the SDK", () => {
    expect(daytonaUnavailableReason({}, () => true)).toMatch(/no Daytona credentials/);
    expect(daytonaUnavailableReason({ apiKey: "k" }, () => false)).toBe('install @daytonaio/sdk to use the daytona terminal backend (npm install "@daytonaio/sdk@^0.218.0")');
    expect(daytonaUnavailableReason({ apiKey: "k" })).toBeUndefined();
    expect(createDaytonaFactory({}).unavailableReason()).toMatch(/no Daytona credentials/);
    expect(createDaytonaFactory(() => daytonaOptionsFromConfig({ cpu: 1 })).unavailableReason()).toMatch(/its configuration is invalid: terminal\.daytona\.cpu needs/);
    expect(createDaytonaFactory({ apiKey: "k" }).unavailableReason()).toBeUndefined();
  });
});

describe("daytona output framing", () => {
  it("quotes every argument into one command string", () => {
    const command = frameCommand(["printf", "%s\\n", "it's", "$HOME"], "0123456789abcdef");
    expect(command.startsWith("'bash' '-c' '")).toBe(true);
    expect(command.endsWith(`'mibyan-daytona' 'printf' '%s\\n' 'it'\\''s' '$HOME'`)).toBe(true);
    expect(() => frameCommand([], "0123456789abcdef")).toThrow(/empty argv/);
    expect(() => frameCommand(["true"], "not hex; rm -rf /")).toThrow(/nonce/);
  });

  it("takes the end marker out, split anywhere, and swaps the bytes back", () => {
    const nonce = "00112233445566778899aabb";
    const stream = Buffer.concat([Buffer.from("out\u0010put\u0011\u0012 line\nlast"), Buffer.from(`${endTag(nonce)}42${endTag(nonce)}`), Buffer.from("after\n")]).toString("utf8");
    for (const size of [1, 2, 7, 1000]) {
      const out: Buffer[] = [];
      const framed = new FramedOutput(nonce, (chunk) => out.push(chunk));
      let ended = 0;
      framed.onEnd = () => ended++;
      for (let at = 0; at < stream.length; at += size) framed.push(stream.slice(at, at + size));
      framed.end();
      expect(Buffer.concat(out)).toEqual(Buffer.from("out\u0000put\u0001\u0002 line\nlastafter\n"));
      expect(framed.exitCode).toBe(42);
      expect(ended).toBe(1);
    }
    expect(unswap(Buffer.from([0x00, 0x01, 0x02, 0x03, 0x0f, 0x10, 0x11, 0x12, 0x13, 0xff]))).toEqual(Buffer.from([0x10, 0x11, 0x12, 0x03, 0x0f, 0x00, 0x01, 0x02, 0x13, 0xff]));
  });
});

describe("daytona transport (stand-in)", () => {
  it("creates the sandbox as configured, with the API key sent as the SDK sends it", async () => {
    const before = standIn.requests.length;
    const transport = await open("Task A/1", {
      snapshot: "my-snapshot",
      target: "eu",
      env: { FOO: "bar" },
      labels: { team: "infra" },
      autoStopMinutes: 45,
      autoDeleteMinutes: 5,
      networkBlockAll: true,
      user: "daytona",
    });
    expect(transport.description).toBe(`daytona sandbox ${transport.sandboxId}`);
    const [create] = standIn.requests.slice(before).filter((r) => r.method === "POST" && r.path === "/api/sandbox");
    expect(create).toBeDefined();
    expect(create!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(create!.headers["x-daytona-source"]).toMatch(/^sdk-typescript/);
    const body = create!.json as Record<string, unknown>;
    expect(body).toMatchObject({
      snapshot: "my-snapshot",
      target: "eu",
      env: { FOO: "bar" },
      labels: { team: "infra", "mibyan.task": "Task A/1", "mibyan.backend": "daytona" },
      autoStopInterval: 45,
      autoDeleteInterval: 5,
      networkBlockAll: true,
      user: "daytona",
    });
    expect(body.name).toMatch(/^mibyan-task-a-1-[0-9a-f]{8}$/);
    expect(body).not.toHaveProperty("buildInfo");
    expect(body).not.toHaveProperty("cpu");
    // The variables reach the commands.
    const r = await run(transport, sh('printf %s "$FOO"'));
    expect(r.output.toString()).toBe("bar");
    // Every toolbox request and the event socket carry the same credential.
    const toolbox = standIn.requests.slice(before).filter((q) => q.path.startsWith(`/toolbox/${transport.sandboxId}/`));
    expect(toolbox.length).toBeGreaterThanOrEqual(3);
    for (const request of toolbox) expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(standIn.eventClients.some((c) => (c.auth as { token?: string } | undefined)?.token === API_KEY && c.authorized)).toBe(true);
  });

  it("builds from an image with resources, and applies the defaults", async () => {
    const before = standIn.requests.length;
    const transport = await open("image-task", { image: "debian:12", cpu: 2, memory: 4, disk: 10, networkAllowList: ["10.0.0.0/8", "192.168.0.0/16"] });
    const create = standIn.requests.slice(before).find((r) => r.method === "POST" && r.path === "/api/sandbox")!;
    const body = create.json as Record<string, unknown>;
    expect(body).toMatchObject({ cpu: 2, memory: 4, disk: 10, autoStopInterval: 30, autoDeleteInterval: 0, networkAllowList: "10.0.0.0/8,192.168.0.0/16" });
    expect((body.buildInfo as { dockerfileContent: string }).dockerfileContent).toMatch(/^FROM debian:12/);
    expect(body).not.toHaveProperty("snapshot");
    expect((await run(transport, ["true"])).end.exitCode).toBe(0);
  });

  it("runs programs: output, exit codes, argv passed through unchanged", async () => {
    const transport = await open("run-task");
    const echo = await run(transport, ["echo", "hi"]);
    expect(echo.output.toString()).toBe("hi\n");
    expect(echo.end).toEqual({ exitCode: 0 });
    expect((await run(transport, sh("exit 42"))).end.exitCode).toBe(42);
    expect((await run(transport, ["false"])).end.exitCode).toBe(1);
    const args = await run(transport, ["printf", "[%s]", "it's", "$HOME", "a b", "", "`x`", "\\n"]);
    expect(args.output.toString()).toBe("[it's][$HOME][a b][][`x`][\\n]");
    // stderr arrives too, in order with stdout (the environment merges them itself; here they are separate streams).
    const both = await run(transport, sh("echo out; sleep 0.2; echo err >&2; sleep 0.2; echo out2"));
    expect(both.output.toString()).toBe("out\nerr\nout2\n");
  });

  it("delivers output as it is written, not at the end", async () => {
    const transport = await open("stream-task");
    const r = await run(transport, sh("echo first; sleep 1; echo second"));
    expect(r.output.toString()).toBe("first\nsecond\n");
    expect(r.times.length).toBeGreaterThanOrEqual(2);
    expect(r.times[r.times.length - 1]! - r.times[0]!).toBeGreaterThan(700);
  });

  it("gets every byte through the daemon's line labelers except 0x10", async () => {
    const transport = await open("bytes-task");
    // NUL, the labelers' stream markers, their swap partners, invalid UTF-8, and no final newline.
    const r = await run(transport, sh(String.raw`printf 'A\000B\001\001\001C\002\002\002D\021\022E\020F\377G\nno newline'`));
    expect(r.end.exitCode).toBe(0);
    expect(r.output).toEqual(Buffer.from("A\u0000B\u0001\u0001\u0001C\u0002\u0002\u0002D\u0011\u0012EF\uFFFDG\nno newline", "utf8"));
    const unicode = await run(transport, ["printf", "%s", "héllo ✓ 日本語 🎉"]);
    expect(unicode.output.toString()).toBe("héllo ✓ 日本語 🎉");
  });

  it("says when the image lacks tr, and gets every byte through without stdbuf", async () => {
    const bin = mkdtempSync(join(tmpdir(), "mibyan-daytona-bin-"));
    try {
      symlinkSync(onPath("bash"), join(bin, "bash"));
      const bare = await open("no-tr", { env: { PATH: bin } });
      const missing = await run(bare, sh("echo never; exit 3"));
      expect(missing.output.toString()).toBe("mibyan: the daytona backend needs tr (coreutils) in the sandbox image\n");
      expect(missing.end).toEqual({ exitCode: 127 });
      // tr but no stdbuf: the output arrives at the end, complete.
      symlinkSync(onPath("tr"), join(bin, "tr"));
      const plain = await run(bare, sh(String.raw`printf 'a\000b\nc'; exit 3`));
      expect(plain.output).toEqual(Buffer.from("a\u0000b\nc"));
      expect(plain.end).toEqual({ exitCode: 3 });
      await bare.close();
      // Through the environment: its init script fails, the message says why, the sandbox is deleted.
      const before = standIn.live().length;
      rmSync(join(bin, "tr"));
      await expect(createDaytonaFactory(() => options({ env: { PATH: bin } })).create("no-tr-env")).rejects.toThrow(
        /^preparing daytona sandbox \S+ failed \(exit code 127: mibyan: the daytona backend needs tr \(coreutils\) in the sandbox image\)$/,
      );
      expect(standIn.live().length).toBe(before);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it("gives the program an empty stdin", async () => {
    const transport = await open("stdin-task");
    const started = Date.now();
    const r = await run(transport, sh('cat; read -r line; echo "read=$?"'));
    expect(r.output.toString()).toBe("read=1\n");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("runs commands side by side, each in a session of its own, and reuses ended sessions", async () => {
    const transport = await open("sessions-task");
    const sessions = (): number => standIn.find("POST", new RegExp(`^/toolbox/${transport.sandboxId}/process/session$`)).length;
    const started = Date.now();
    const [a, b] = await Promise.all([run(transport, sh("sleep 1; echo a")), run(transport, sh("sleep 1; echo b"))]);
    expect([a.output.toString(), b.output.toString()]).toEqual(["a\n", "b\n"]);
    expect(Date.now() - started).toBeLessThan(1_900);
    expect(sessions()).toBe(2);
    for (let i = 0; i < 3; i++) expect((await run(transport, ["true"])).end.exitCode).toBe(0);
    expect(sessions()).toBe(2);
    const execs = standIn.find("POST", new RegExp(`^/toolbox/${transport.sandboxId}/process/session/[^/]+/exec$`));
    for (const exec of execs) expect(exec.json).toMatchObject({ runAsync: true, command: expect.stringMatching(/^'bash' '-c' /) });
  });

  it("detaches at once; a command whose background job holds the output still reports its exit code", async () => {
    const transport = await open("detach-task");
    const chunks: string[] = [];
    const held: string[] = [];
    const began = Date.now();
    const slow = await transport.start(sh("echo begun; sleep 1; echo late"), (c) => chunks.push(Buffer.from(c).toString()));
    const job = await transport.start(sh("(sleep 1; echo late-job) & echo started; exit 7"), (c) => held.push(Buffer.from(c).toString()));
    let settled = false;
    void job.done.then(() => (settled = true));
    while (!chunks.join("").includes("begun") || !held.join("").includes("started")) await new Promise((r) => setTimeout(r, 20));

    const at = Date.now();
    slow.detach();
    expect(await slow.done).toEqual({ exitCode: null });
    expect(Date.now() - at).toBeLessThan(200);
    slow.detach();

    await new Promise((r) => setTimeout(r, 300));
    // The program has ended, but its background job keeps the stream (and the session) open.
    expect(settled).toBe(false);
    job.detach();
    expect(await job.done).toEqual({ exitCode: 7 });
    // Nothing of the detached commands arrives later.
    await new Promise((r) => setTimeout(r, Math.max(0, began + 1_600 - Date.now())));
    expect(chunks.join("")).toBe("begun\n");
    expect(held.join("")).toBe("started\n");
  });

  it("refreshes the sandbox's activity while a command runs, and only then", async () => {
    expect(daytonaKeepAliveMs({})).toBe(300_000);
    expect(daytonaKeepAliveMs({ autoStopMinutes: 1 })).toBe(30_000);
    expect(daytonaKeepAliveMs({ autoStopMinutes: 6 })).toBe(120_000);
    expect(daytonaKeepAliveMs({ autoStopMinutes: 0 })).toBeUndefined();
    expect(daytonaKeepAliveMs({ autoStopMinutes: 0, keepAliveMs: 100 })).toBe(100);
    const transport = await open("keep-alive", { keepAliveMs: 150 });
    const refreshes = (): number => standIn.find("POST", new RegExp(`^/api/sandbox/${transport.sandboxId}/last-activity$`)).length;
    await new Promise((r) => setTimeout(r, 400));
    expect(refreshes()).toBe(0);
    expect((await run(transport, sh("sleep 1"))).end.exitCode).toBe(0);
    const during = refreshes();
    expect(during).toBeGreaterThanOrEqual(3);
    await new Promise((r) => setTimeout(r, 400));
    expect(refreshes()).toBe(during);
    for (const request of standIn.find("POST", /\/last-activity$/)) expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it("fetches the whole log when the stream ended before the end marker", async () => {
    const transport = await open("cut-task");
    const before = standIn.requests.length;
    standIn.cutNextLogStreamAfter = 2;
    const r = await run(transport, sh("seq 1 3000; printf tail; exit 5"));
    const expected = `${Array.from({ length: 3000 }, (_, i) => i + 1).join("\n")}\ntail`;
    expect(r.output.toString()).toBe(expected);
    expect(r.end).toEqual({ exitCode: 5 });
    const logs = standIn.requests.slice(before).filter((q) => q.method === "GET" && /\/command\/[^/]+\/logs$/.test(q.path));
    expect(logs.map((q) => q.headers.upgrade ?? "http")).toEqual(["websocket", "http"]);
  });

  it("deletes the sandbox on close, with everything in it; closing twice deletes once", async () => {
    const transport = await open("close-task");
    const id = transport.sandboxId;
    const running = await transport.start(sh("sleep 30"), () => undefined);
    await new Promise((r) => setTimeout(r, 300));
    expect(standIn.processesOf(id).length).toBeGreaterThan(0);
    const sandbox = standIn.sandboxes.get(id)!;
    await Promise.all([transport.close(), transport.close()]);
    await transport.close();
    expect(await running.done).toEqual({ exitCode: null });
    const deletes = standIn.find("DELETE", new RegExp(`^/api/sandbox/${id}$`));
    expect(deletes).toHaveLength(1);
    expect(deletes[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sandbox.deleted).toBe(true);
    expect(existsSync(sandbox.root)).toBe(false);
    expect(standIn.processesOf(id)).toEqual([]);
    await expect(transport.start(["true"], () => undefined)).rejects.toThrow(`daytona sandbox ${id} was deleted`);
  });

  it("authenticates with a JWT and its organization", async () => {
    const before = standIn.requests.length;
    const transport = await DaytonaTransport.open("jwt-task", { jwtToken: JWT, organizationId: JWT_ORG, apiUrl: standIn.apiUrl });
    opened.push(transport);
    expect((await run(transport, ["echo", "jwt"])).output.toString()).toBe("jwt\n");
    const requests = standIn.requests.slice(before).filter((r) => !r.path.startsWith("/api/socket.io"));
    for (const request of requests) {
      expect(request.headers.authorization).toBe(`Bearer ${JWT}`);
      expect(request.headers["x-daytona-organization-id"]).toBe(JWT_ORG);
    }
    expect(standIn.eventClients.some((c) => c.query.organizationId === JWT_ORG && c.authorized)).toBe(true);
    await transport.close();
  });

  it("reports API errors clearly, never showing the key", async () => {
    await expect(DaytonaTransport.open("bad-key", { apiKey: "dtn_wrong_key_123", apiUrl: standIn.apiUrl })).rejects.toThrow(
      /creating Daytona sandbox mibyan-bad-key-[0-9a-f]{8} from the default snapshot failed: HTTP 401: Unauthorized \(check DAYTONA_API_KEY/,
    );
    // A server that echoes the key back: the message carries [REDACTED] instead.
    standIn.failNext("POST", /^\/api\/sandbox$/, 400, `invalid request from key ${API_KEY}`);
    const err = (await DaytonaTransport.open("echo-key", options()).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(/HTTP 400: invalid request from key \[REDACTED\]/);
    expect(err.message).not.toContain(API_KEY);
    expect(String(err.stack)).not.toContain(API_KEY);
    expect((err as Error & { cause?: unknown }).cause).toBeUndefined();
    // No credentials at all: refused before any request.
    await expect(DaytonaTransport.open("no-creds", { apiUrl: standIn.apiUrl })).rejects.toThrow(/cannot create a Daytona sandbox: no Daytona credentials/);
  });

  it("deletes a sandbox that was created but did not start", async () => {
    standIn.failNextStart = "no runner available";
    const before = standIn.requests.length;
    const err = (await DaytonaTransport.open("doomed", options()).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(
      /^creating Daytona sandbox mibyan-doomed-[0-9a-f]{8} from the default snapshot failed: .*failed to start.*; the sandbox was error: no runner available \(deleted again\)$/,
    );
    const created = standIn.requests.slice(before).find((r) => r.method === "POST" && r.path === "/api/sandbox")!;
    const name = (created.json as { name: string }).name;
    const sandbox = [...standIn.sandboxes.values()].find((s) => s.name === name)!;
    expect(sandbox.deleted).toBe(true);
    expect(standIn.find("DELETE", new RegExp(`^/api/sandbox/${sandbox.id}$`))).toHaveLength(1);
  });

  it("reports a command that cannot be started, and a sandbox deleted elsewhere", async () => {
    const transport = await open("start-errors");
    standIn.failNext("POST", /\/process\/session\/[^/]+\/exec$/, 500, "daemon exploded");
    await expect(transport.start(["true"], () => undefined)).rejects.toThrow(`starting true in daytona sandbox ${transport.sandboxId} failed: HTTP 500: daemon exploded`);
    // The transport still works afterwards.
    expect((await run(transport, ["echo", "ok"])).output.toString()).toBe("ok\n");
    // Deleted behind its back (by auto-delete, or in the dashboard).
    const sdk = await import("@daytonaio/sdk");
    const other = new sdk.Daytona({ apiKey: API_KEY, apiUrl: standIn.apiUrl, useDeprecatedPolling: true });
    await (await other.get(transport.sandboxId)).delete();
    await expect(transport.start(["true"], () => undefined)).rejects.toThrow(/HTTP 404: .*\(the sandbox is gone/);
    await transport.close();
  });
});

describe("daytona environment (stand-in)", () => {
  it("starts in the configured directory and says it is isolated", async () => {
    const cwd = join(tmpdir(), `mibyan-daytona-cwd-${randomBytes(4).toString("hex")}`, "work dir");
    const factory = createDaytonaFactory(() => options({ cwd }));
    const env = await factory.create("env-cwd");
    try {
      expect(env.backend).toBe("daytona");
      expect(env.isolation).toEqual({ name: "daytona", hostMounts: false });
      expect(env.cwd).toBe(cwd);
      const r = await env.exec("pwd; echo $((6 * 7)); exit 3", { timeoutMs: 10_000, maxOutputChars: 10_000 });
      expect(r).toMatchObject({ output: `${cwd}\n42\n`, exitCode: 3, timedOut: false });
    } finally {
      await env.close();
    }
  });

  it("reports a sandbox that cannot be created", async () => {
    const factory = createDaytonaFactory(() => options({ apiKey: "dtn_wrong_key_456" }));
    await expect(factory.create("env-bad-key")).rejects.toThrow(/HTTP 401: Unauthorized/);
  });
});

// The behaviours every backend shares, over SandboxEnvironment and this transport (a sandbox per test).
environmentContract("daytona (local stand-in for Daytona)", (taskId) => createDaytonaFactory(() => options({ killGraceMs: 1_000 })).create(taskId), {
  testTimeoutMs: 30_000,
});

// The same against the real service, only when asked to (it creates billed sandboxes): credentials from the
// usual variables, every other option from MIBYAN_TEST_DAYTONA_CONFIG (JSON, snake_case keys).
const liveOptions = (): DaytonaOptions => mergeDaytonaOptions(JSON.parse(process.env.MIBYAN_TEST_DAYTONA_CONFIG || "{}") as Record<string, unknown>, process.env);
function liveSkip(): string | undefined {
  if (process.env.MIBYAN_TEST_DAYTONA !== "1") return "set MIBYAN_TEST_DAYTONA=1 and DAYTONA_API_KEY to run it";
  const reason = daytonaUnavailableReason(liveOptions());
  return reason === undefined ? undefined : `daytona is unavailable: ${reason}`;
}
const liveSkipReason = liveSkip();
environmentContract("daytona (the real Daytona service)", (taskId) => createDaytonaFactory(liveOptions).create(taskId), {
  testTimeoutMs: 180_000,
  ...(liveSkipReason !== undefined ? { skip: liveSkipReason } : {}),
});

describe("daytona cleanup", () => {
  it("left no sandbox, process or file behind", async () => {
    await Promise.allSettled(opened.splice(0).map((t) => t.close()));
    expect(standIn.live().map((s) => s.name)).toEqual([]);
    for (const sandbox of standIn.sandboxes.values()) {
      expect(existsSync(sandbox.root)).toBe(false);
      expect(standIn.processesOf(sandbox.id)).toEqual([]);
    }
  });
});
