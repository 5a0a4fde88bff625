/**
 * The modal backend through Modal's real JS SDK, talking to a local stand-in
 * of Modal's gRPC API (test/support/modal-stand-in.ts) that runs the commands
 * with real processes: the shared environment contract, the requests the SDK
 * makes on our behalf (sandbox, image, resources, commands, termination,
 * credentials), errors, options parsing and the availability check.
 */

import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Status } from "nice-grpc";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";

import { BACKENDS } from "../src/environments/backends.js";
import {
  createModalFactory,
  MODAL_EXEC_ARGV_LIMIT,
  modalCredentials,
  modalFactory,
  modalOptionsFromConfig,
  modalSandboxSpec,
  modalUnavailableReason,
  ModalSandboxTransport,
  openModalSandbox,
  type ModalOptions,
} from "../src/environments/modal.js";
import { SandboxEnvironment } from "../src/environments/sandbox-environment.js";
import type { Environment, ExecOptions } from "../src/environments/types.js";
import { environmentContract } from "./support/environment-contract.js";
import { ModalStandIn } from "./support/modal-stand-in.js";

const TOKEN_ID = "ak-standin0123456789";
const TOKEN_SECRET = "as-standinSECRETabcdef";
const base: ExecOptions = { timeoutMs: 20_000, maxOutputChars: 100_000 };

// The SDK reads these when a client is made; nothing of the developer's own Modal setup may leak in.
const MODAL_VARS = [
  "MODAL_SERVER_URL",
  "MODAL_TOKEN_ID",
  "MODAL_TOKEN_SECRET",
  "MODAL_PROFILE",
  "MODAL_CONFIG_PATH",
  "MODAL_ENVIRONMENT",
  "MODAL_LOGLEVEL",
  "MODAL_SANDBOX_V2",
  "MODAL_IMAGE_BUILDER_VERSION",
  "MODAL_OAUTH_REFRESH_TOKEN",
  "MODAL_OAUTH_CLIENT_ID",
  "MODAL_OAUTH_CLIENT_SECRET",
  "MODAL_OAUTH_JWT_KEY",
  "MIBYAN_HOME",
];
const savedEnv = Object.fromEntries(MODAL_VARS.map((name) => [name, process.env[name]]));
const scratch = mkdtempSync(join(tmpdir(), "mibyan-modal-test-"));
for (const name of MODAL_VARS) delete process.env[name];
process.env.MODAL_CONFIG_PATH = join(scratch, "absent.toml");
// The SDK warns (on every sandbox) that it dials a localhost command router without TLS.
process.env.MODAL_LOGLEVEL = "error";

let standIn: ModalStandIn;

beforeAll(async () => {
  standIn = await ModalStandIn.start({ tokenId: TOKEN_ID, tokenSecret: TOKEN_SECRET });
  process.env.MODAL_SERVER_URL = standIn.url;
});

afterAll(async () => {
  await standIn?.stop();
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  rmSync(scratch, { recursive: true, force: true });
});

const credentials = { tokenId: TOKEN_ID, tokenSecret: TOKEN_SECRET };
const contractFactory = createModalFactory({ ...credentials, appName: "mibyan-contract" });

environmentContract("modal (official SDK against a local stand-in)", (taskId) => contractFactory.create(taskId));

/** Environments a test opened, closed after it. */
const opened: Environment[] = [];
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((e) => e.close()));
});

async function create(options: ModalOptions, taskId = `modal-test-${opened.length}`): Promise<Environment> {
  const env = await createModalFactory(options).create(taskId);
  opened.push(env);
  return env;
}

/** The requests made since `from` (an index into `standIn.requests`). */
function since(from: number, method: string) {
  return standIn.requests.slice(from).filter((r) => r.method === method);
}

describe("modal backend: what the SDK asks of Modal", () => {
  it("creates the sandbox with the configured app, image, resources, timeout, network and env", async () => {
    const from = standIn.requests.length;
    const env = await create({
      ...credentials,
      appName: "mibyan-test-app",
      image: "debian:bookworm-slim",
      cpu: 0.5,
      memoryMiB: 512,
      timeoutSeconds: 120,
      blockNetwork: true,
      env: { MIBYAN_MODAL_VAR: "from config" },
      environment: "dev",
    });
    const [app] = since(from, "AppGetOrCreate");
    expect(app?.message).toMatchObject({ appName: "mibyan-test-app", environmentName: "dev", objectCreationType: 1 /* CREATE_IF_MISSING */ });
    const [image] = since(from, "ImageGetOrCreate");
    expect((image?.message.image as { dockerfileCommands: string[] }).dockerfileCommands).toEqual(["FROM debian:bookworm-slim"]);
    const [sandbox] = since(from, "SandboxCreateV2");
    const definition = sandbox?.message.definition as Record<string, any>;
    expect(definition.imageId).toMatch(/^im-/);
    expect(definition.timeoutSecs).toBe(120);
    expect(definition.resources).toMatchObject({ milliCpu: 500, memoryMb: 512 });
    expect(definition.networkAccess.networkAccessType).toBe(2 /* BLOCKED */);
    expect(sandbox?.message.secretSources).toEqual([{ env: { contents: { MIBYAN_MODAL_VAR: "from config" } } }]);
    // The variable really is in the sandbox.
    expect((await env.exec('echo "$MIBYAN_MODAL_VAR"', base)).output).toBe("from config\n");
  });

  it("follows the build of a new image, and uses a built one at once", async () => {
    const from = standIn.requests.length;
    await create({ ...credentials, image: "ubuntu:24.04" });
    expect(since(from, "ImageJoinStreaming")).toHaveLength(1);
    const again = standIn.requests.length;
    await create({ ...credentials, image: "ubuntu:24.04" });
    expect(since(again, "ImageGetOrCreate")).toHaveLength(1);
    expect(since(again, "ImageJoinStreaming")).toHaveLength(0);
  });

  it("uses python:3.12-slim, 1 CPU, 1024 MiB, one hour and no network by default", async () => {
    const from = standIn.requests.length;
    await create({ ...credentials });
    expect(since(from, "AppGetOrCreate")[0]?.message.appName).toBe("mibyan-tools");
    expect((since(from, "ImageGetOrCreate")[0]?.message.image as { dockerfileCommands: string[] }).dockerfileCommands).toEqual(["FROM python:3.12-slim"]);
    const definition = since(from, "SandboxCreateV2")[0]?.message.definition as Record<string, any>;
    expect(definition.resources).toMatchObject({ milliCpu: 1000, memoryMb: 1024 });
    expect(definition.timeoutSecs).toBe(3600);
    expect(definition.networkAccess.networkAccessType).toBe(2 /* BLOCKED */);
    expect(since(from, "SandboxCreateV2")[0]?.message.secretSources).toEqual([]);
  });

  it("opens the network and leaves Modal's resource defaults when told to", async () => {
    const from = standIn.requests.length;
    await create({ ...credentials, blockNetwork: false, cpu: null, memoryMiB: null });
    const definition = since(from, "SandboxCreateV2")[0]?.message.definition as Record<string, any>;
    expect(definition.networkAccess.networkAccessType).toBe(1 /* OPEN */);
    expect(definition.resources.milliCpu ?? 0).toBe(0);
    expect(definition.resources.memoryMb ?? 0).toBe(0);
  });

  it("runs each command as sandbox.exec(argv) with both streams piped, and terminates the sandbox on close", async () => {
    const from = standIn.requests.length;
    // The stand-in's sandboxes share this machine's file system: a directory of the test's own.
    const cwd = join(scratch, "work", "dir");
    const env = await create({ ...credentials, cwd });
    const command = `echo "it's $((6 * 7))" 'quoted'`;
    expect((await env.exec(command, base)).output).toBe("it's 42 quoted\n");
    expect(env.cwd).toBe(cwd);
    const starts = since(from, "TaskExecStart");
    // The init script, then the command.
    expect(starts).toHaveLength(2);
    const argv = starts[1]!.message.commandArgs as string[];
    expect(argv.slice(0, 2)).toEqual(["bash", "-c"]);
    expect(argv.at(-1)).toBe(command);
    expect(starts[1]!.message).toMatchObject({ stdoutConfig: 1 /* PIPE */, stderrConfig: 1 /* PIPE */ });
    expect(since(from, "TaskExecStdioRead").map((r) => r.message.fileDescriptor).sort()).toEqual([0, 0, 1, 1]);
    expect(since(from, "TaskExecWait")).toHaveLength(2);

    const sandbox = [...standIn.sandboxes.values()].find((s) => s.taskId === starts[0]!.message.taskId)!;
    const sandboxId = sandbox.sandboxId;
    expect(sandbox.terminated).toBe(false);
    await env.close();
    await env.close();
    expect(since(from, "SandboxTerminateV2").map((r) => r.message.sandboxId)).toEqual([sandboxId]);
    expect(sandbox.terminated).toBe(true);
    expect(existsSync(sandbox.root)).toBe(false);
    await expect(env.exec("echo again", base)).rejects.toThrow(/closed/);
  });

  it("returns once the command is done even while a background job keeps its output open", async () => {
    const env = await create({ ...credentials });
    const started = Date.now();
    const r = await env.exec("(sleep 3; echo late) & echo now", base);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(r).toMatchObject({ output: "now\n", exitCode: 0, timedOut: false });
    expect((await env.exec("echo next", base)).output).toBe("next\n");
  });

  it("sends the token pair and an auth token to the control plane, and only the sandbox's JWT to its command router", async () => {
    const from = standIn.requests.length;
    const env = await create({ ...credentials });
    await env.exec("true", base);
    const requests = standIn.requests.slice(from);
    const control = requests.filter((r) => r.service === "ModalClient");
    const router = requests.filter((r) => r.service === "TaskCommandRouter");
    expect(control.length).toBeGreaterThan(0);
    expect(router.length).toBeGreaterThan(0);
    for (const r of control) {
      expect(r.metadata["x-modal-token-id"]).toBe(TOKEN_ID);
      expect(r.metadata["x-modal-token-secret"]).toBe(TOKEN_SECRET);
      if (r.method !== "AuthTokenGet") expect(r.metadata["x-modal-auth-token"]).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    }
    for (const r of router) {
      expect(r.metadata.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
      expect(JSON.stringify(r.metadata)).not.toContain(TOKEN_SECRET);
    }
  });

  it("takes MODAL_TOKEN_ID / MODAL_TOKEN_SECRET from the environment", async () => {
    process.env.MODAL_TOKEN_ID = TOKEN_ID;
    process.env.MODAL_TOKEN_SECRET = TOKEN_SECRET;
    try {
      const from = standIn.requests.length;
      const env = await create({});
      expect((await env.exec("echo env-creds", base)).output).toBe("env-creds\n");
      expect(since(from, "SandboxCreateV2")[0]?.metadata["x-modal-token-secret"]).toBe(TOKEN_SECRET);
    } finally {
      delete process.env.MODAL_TOKEN_ID;
      delete process.env.MODAL_TOKEN_SECRET;
    }
  });

  it("takes the credentials of the SDK's profile in ~/.modal.toml (MODAL_CONFIG_PATH, MODAL_PROFILE)", async () => {
    const file = join(scratch, "modal.toml");
    writeFileSync(
      file,
      [
        "[personal]",
        'token_id = "ak-other"',
        'token_secret = "as-other"',
        "",
        "[work]",
        "active = true",
        `token_id = "${TOKEN_ID}"`,
        `token_secret = "${TOKEN_SECRET}"`,
        "",
      ].join("\n"),
    );
    const env = { MODAL_CONFIG_PATH: file };
    expect(modalCredentials({}, env)).toEqual(credentials);
    expect(modalCredentials({}, { ...env, MODAL_PROFILE: "personal" })).toEqual({ tokenId: "ak-other", tokenSecret: "as-other" });
    // Field by field, as the SDK: the environment's half wins.
    expect(modalCredentials({}, { ...env, MODAL_TOKEN_ID: "ak-env" })).toEqual({ tokenId: "ak-env", tokenSecret: TOKEN_SECRET });
    expect(modalUnavailableReason({}, env)).toBeUndefined();

    process.env.MODAL_CONFIG_PATH = file;
    try {
      const from = standIn.requests.length;
      const e = await create({});
      expect((await e.exec("echo profile-creds", base)).output).toBe("profile-creds\n");
      expect(since(from, "SandboxCreateV2")[0]?.metadata["x-modal-token-id"]).toBe(TOKEN_ID);
    } finally {
      process.env.MODAL_CONFIG_PATH = join(scratch, "absent.toml");
    }
  });

  it("reads terminal.modal from config.yaml for every new task (the registry's factory)", async () => {
    const home = mkdtempSync(join(scratch, "home-"));
    writeFileSync(join(home, "config.yaml"), ["terminal:", "  modal:", "    app_name: from-config", "    image: alpine-bash:3", "    cpu: 0.25", "    block_network: false", ""].join("\n"));
    process.env.MIBYAN_HOME = home;
    process.env.MODAL_TOKEN_ID = TOKEN_ID;
    process.env.MODAL_TOKEN_SECRET = TOKEN_SECRET;
    try {
      expect(await BACKENDS.modal!()).toBe(modalFactory);
      expect(modalFactory.backend).toBe("modal");
      expect(modalFactory.unavailableReason()).toBeUndefined();
      const from = standIn.requests.length;
      const env = await modalFactory.create("from-config-task");
      opened.push(env);
      expect(env.backend).toBe("modal");
      expect(env.isolation).toEqual({ name: "modal", hostMounts: false });
      expect(since(from, "AppGetOrCreate")[0]?.message.appName).toBe("from-config");
      expect((since(from, "ImageGetOrCreate")[0]?.message.image as { dockerfileCommands: string[] }).dockerfileCommands).toEqual(["FROM alpine-bash:3"]);
      const definition = since(from, "SandboxCreateV2")[0]?.message.definition as Record<string, any>;
      expect(definition.resources.milliCpu).toBe(250);
      expect(definition.networkAccess.networkAccessType).toBe(1 /* OPEN */);

      writeFileSync(join(home, "config.yaml"), ["terminal:", "  modal:", "    cpu: lots", ""].join("\n"));
      expect(modalFactory.unavailableReason()).toMatch(/terminal\.modal\.cpu/);
    } finally {
      delete process.env.MIBYAN_HOME;
      delete process.env.MODAL_TOKEN_ID;
      delete process.env.MODAL_TOKEN_SECRET;
    }
  });
});

describe("modal backend: errors", () => {
  it("says clearly when Modal refuses the credentials, without repeating them", async () => {
    const wrong = { tokenId: "ak-wrong-id-000", tokenSecret: "as-wrong-secret-000" };
    const error = await createModalFactory(wrong)
      .create("bad-credentials")
      .catch((err: Error) => err);
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toMatch(/^modal: creating a sandbox \(app mibyan-tools, image python:3\.12-slim\) failed: .*UNAUTHENTICATED/);
    expect(message).toMatch(/MODAL_TOKEN_ID and MODAL_TOKEN_SECRET/);
    expect(message).not.toContain(wrong.tokenSecret);
    expect(message).not.toContain(wrong.tokenId);
  });

  it("surfaces API errors with the status, and never the tokens even when the server echoes them", async () => {
    const live = standIn.liveSandboxes().length;
    standIn.failNext("SandboxCreateV2", { code: Status.RESOURCE_EXHAUSTED, details: `no capacity for ${TOKEN_ID}:${TOKEN_SECRET}` });
    const error = (await create({ ...credentials }).catch((err: Error) => err)) as Error;
    expect(error.message).toMatch(/^modal: creating a sandbox .* failed: .*RESOURCE_EXHAUSTED: no capacity for \[REDACTED\]:\[REDACTED\]/);
    expect(error.message).not.toContain(TOKEN_SECRET);
    expect(error.message).not.toContain(TOKEN_ID);
    expect(standIn.liveSandboxes()).toHaveLength(live);
  });

  it("reports a failed image build", async () => {
    standIn.imageBuildFailure = "manifest for nosuch:image not found";
    try {
      const error = (await create({ ...credentials, image: "nosuch:image" }).catch((err: Error) => err)) as Error;
      expect(error.message).toMatch(/^modal: creating a sandbox \(app mibyan-tools, image nosuch:image\) failed: Image build for im-\w+ failed .*manifest for nosuch:image not found/s);
    } finally {
      standIn.imageBuildFailure = undefined;
    }
  });

  it("terminates the sandbox when preparing it fails", async () => {
    const from = standIn.requests.length;
    const error = (await create({ ...credentials, cwd: "/proc/self/no/such/dir" }).catch((err: Error) => err)) as Error;
    expect(error.message).toMatch(/preparing modal sandbox sb-\w+ failed/);
    const [created] = since(from, "SandboxCreateV2");
    expect(created).toBeDefined();
    const terminated = since(from, "SandboxTerminateV2");
    expect(terminated).toHaveLength(1);
    expect(standIn.sandboxes.get(terminated[0]!.message.sandboxId as string)?.terminated).toBe(true);
  });

  it("needs credentials and a valid configuration to be available", () => {
    const none = { MODAL_CONFIG_PATH: join(scratch, "absent.toml") };
    expect(modalUnavailableReason({}, none)).toMatch(/no Modal credentials: set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET/);
    expect(modalUnavailableReason({}, { ...none, MODAL_TOKEN_ID: "ak-1" })).toMatch(/no Modal credentials/);
    expect(modalUnavailableReason({}, { ...none, MODAL_TOKEN_ID: "ak-1", MODAL_TOKEN_SECRET: "as-1" })).toBeUndefined();
    expect(modalUnavailableReason(credentials, none)).toBeUndefined();
    expect(() => modalSandboxSpec({}, none)).toThrow(/^modal: no Modal credentials/);
    const withoutCredentials = createModalFactory({});
    expect(withoutCredentials.unavailableReason()).toMatch(/no Modal credentials/);
  });
});

describe("modal backend: the transport", () => {
  async function transport(): Promise<ModalSandboxTransport> {
    const t = await openModalSandbox(modalSandboxSpec({ ...credentials, appName: "mibyan-transport" }));
    transports.push(t);
    return t;
  }
  const transports: ModalSandboxTransport[] = [];
  afterEach(async () => {
    await Promise.allSettled(transports.splice(0).map((t) => t.close()));
  });

  function collect(): { chunks: Buffer[]; text: () => string; onOutput: (chunk: Uint8Array) => void } {
    const chunks: Buffer[] = [];
    return { chunks, text: () => Buffer.concat(chunks).toString("utf8"), onOutput: (chunk) => chunks.push(Buffer.from(chunk)) };
  }

  it("starts argv as given, streams both outputs and reports the exit code", async () => {
    const t = await transport();
    expect(t.description).toMatch(/^modal sandbox sb-\w+$/);
    const out = collect();
    const run = await t.start(["bash", "-c", 'printf "%s|" "$@"; echo; echo to-stderr >&2; exit 7', "bash", "a b", "$HOME", "'q'"], out.onOutput);
    expect(await run.done).toEqual({ exitCode: 7 });
    expect(out.text().split("\n").sort()).toEqual(["", "a b|$HOME|'q'|", "to-stderr"]);
    const killed = await t.start(["bash", "-c", "kill -9 $$"], () => undefined);
    expect(await killed.done).toEqual({ exitCode: 137 });
  });

  it("detaches promptly from a command that goes on running, and close kills it", async () => {
    const t = await transport();
    const out = collect();
    const run = await t.start(["bash", "-c", "echo started; exec sleep 30"], out.onOutput);
    await vi.waitFor(() => expect(out.text()).toBe("started\n"));
    const sandbox = standIn.sandboxes.get(t.sandboxId)!;
    const exec = [...sandbox.execs.values()].at(-1)!;
    const started = Date.now();
    run.detach();
    expect(await run.done).toEqual({ exitCode: null });
    expect(Date.now() - started).toBeLessThan(1_000);
    run.detach();
    expect(exec.child.exitCode).toBeNull();
    await t.close();
    await t.close();
    expect(await exec.exited).toEqual({ signal: 9 });
    await expect(t.start(["true"], () => undefined)).rejects.toThrow(/terminated/);
  });

  it("resolves with the error when following a command fails", async () => {
    const t = await transport();
    standIn.failNext("TaskExecWait", { code: Status.FAILED_PRECONDITION, details: "the worker went away" });
    const run = await t.start(["true"], () => undefined);
    const end = await run.done;
    expect(end.exitCode).toBeNull();
    expect(end.error?.message).toMatch(/^modal: following the command in modal sandbox sb-\w+ failed: .*FAILED_PRECONDITION: the worker went away/);
  });

  it("refuses an argv longer than Modal's exec takes, before sending it", async () => {
    const t = await transport();
    const from = standIn.requests.length;
    await expect(t.start(["bash", "-c", "x".repeat(MODAL_EXEC_ARGV_LIMIT)], () => undefined)).rejects.toThrow(/too long .* less than 65536/);
    await expect(t.start([], () => undefined)).rejects.toThrow(/empty argv/);
    expect(since(from, "TaskExecStart")).toHaveLength(0);
  });

  it("routes the SDK's log lines to stderr with the tokens redacted", async () => {
    process.env.MODAL_LOGLEVEL = "debug";
    const lines: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void lines.push(args.join(" ")));
    try {
      const t = await transport();
      const run = await t.start(["echo", "logged"], () => undefined);
      await run.done;
      await t.close();
    } finally {
      spy.mockRestore();
      process.env.MODAL_LOGLEVEL = "error";
    }
    expect(lines.some((line) => line.startsWith("modal debug: "))).toBe(true);
    expect(lines.join("\n")).not.toContain(TOKEN_SECRET);
    expect(lines.join("\n")).not.toContain(TOKEN_ID);
  });

  it("works under SandboxEnvironment directly", async () => {
    const t = await transport();
    const env = await SandboxEnvironment.create("direct", t, { backend: "modal" });
    expect((await env.exec("echo $((1 + 1))", base)).output).toBe("2\n");
    await env.close();
    expect(standIn.sandboxes.get(t.sandboxId)?.terminated).toBe(true);
  });
});

describe("modal backend: terminal.modal options", () => {
  it("reads every key", () => {
    expect(
      modalOptionsFromConfig({
        app_name: "my-app_1.0",
        image: "python:3.11",
        cpu: 2.5,
        memory_mib: "2048",
        timeout_seconds: 7200,
        block_network: false,
        cwd: "/root/work",
        env: { LANG: "C.UTF-8", N: 1, FLAG: true },
        environment: "staging",
      }),
    ).toEqual<ModalOptions>({
      appName: "my-app_1.0",
      image: "python:3.11",
      cpu: 2.5,
      memoryMiB: 2048,
      timeoutSeconds: 7200,
      blockNetwork: false,
      cwd: "/root/work",
      env: { LANG: "C.UTF-8", N: "1", FLAG: "true" },
      environment: "staging",
    });
    expect(modalOptionsFromConfig({ appName: "x", memoryMib: "none", cpu: null })).toEqual({ appName: "x", memoryMiB: null, cpu: null });
    expect(modalOptionsFromConfig(undefined)).toEqual({});
    // A misspelt setting (here the network switch) is an error, not ignored.
    expect(() => modalOptionsFromConfig({ block_netwrok: false })).toThrow(/^terminal\.modal\.block_netwrok is not a known option/);
  });

  it("names the key of a bad value", () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ app_name: "has space" }, /terminal\.modal\.app_name may contain only/],
      [{ app_name: "" }, /terminal\.modal\.app_name must be a non-empty string/],
      [{ image: 3 }, /terminal\.modal\.image must be a non-empty string/],
      [{ image: "python 3" }, /terminal\.modal\.image must be an image reference/],
      [{ cpu: 0 }, /terminal\.modal\.cpu must be a positive number/],
      [{ cpu: "lots" }, /terminal\.modal\.cpu must be a positive number/],
      [{ memory_mib: 1.5 }, /terminal\.modal\.memory_mib must be a positive integer/],
      [{ timeout_seconds: 0 }, /terminal\.modal\.timeout_seconds must be a whole number of seconds from 1 to 86400/],
      [{ timeout_seconds: 1.5 }, /terminal\.modal\.timeout_seconds/],
      [{ timeout_seconds: 90_000 }, /terminal\.modal\.timeout_seconds/],
      [{ block_network: "yes" }, /terminal\.modal\.block_network must be true or false/],
      [{ cwd: "work" }, /terminal\.modal\.cwd must be an absolute path/],
      [{ env: ["A=1"] }, /terminal\.modal\.env must be a mapping/],
      [{ env: { "A-B": "1" } }, /terminal\.modal\.env has an invalid variable name: "A-B"/],
      [{ env: { A: { nested: 1 } } }, /terminal\.modal\.env\.A must be a string/],
      [{ environment: 1 }, /terminal\.modal\.environment must be a non-empty string/],
      [{ token_secret: "as-x" }, /terminal\.modal\.token_secret must not be set in config\.yaml/],
      [{ tokenId: "ak-x" }, /terminal\.modal\.token_id must not be set/],
    ];
    for (const [section, message] of bad) expect(() => modalOptionsFromConfig(section), JSON.stringify(section)).toThrow(message);
  });

  it("turns options into the sandbox's spec", () => {
    expect(modalSandboxSpec({ ...credentials, cpu: null, env: { A: "1" } }, {})).toEqual({
      appName: "mibyan-tools",
      image: "python:3.12-slim",
      memoryMiB: 1024,
      timeoutSeconds: 3600,
      blockNetwork: true,
      env: { A: "1" },
      ...credentials,
    });
  });
});
