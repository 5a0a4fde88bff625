/**
 * The singularity backend: its command lines and configuration (no process
 * needed), then the real transport and `SandboxEnvironment` driving a fake
 * `apptainer` CLI (test/fixtures/fake-apptainer/: real child processes, the
 * commands really run here, every invocation recorded), the shared contract
 * suite over that, and the same contract suite against a real Apptainer when
 * one is installed and MIBYAN_TEST_APPTAINER_IMAGE names an image.
 */

import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import { isIsolatedBackend } from "../src/approval/flow/gate.js";
import { clearConfigCache } from "../src/config/load-config.js";
import { BACKENDS } from "../src/environments/backends.js";
import type { SandboxCommandEnd } from "../src/environments/sandbox-transport.js";
import {
  cliEnvironment,
  commandArgs,
  createSingularityFactory,
  defaultSingularityOptions,
  instanceExecArgs,
  instanceStartArgs,
  instanceStopArgs,
  openSingularityInstance,
  resetSingularityAvailability,
  resolveSingularityBinary,
  singularityEnvironmentOptions,
  singularityOptionsFromConfig,
  singularityReachesHost,
  singularityUnavailableReason,
  SingularityTransport,
  type SingularityOptions,
} from "../src/environments/singularity.js";
import { instanceName, MERGE_STDERR_PREFIX } from "../src/environments/singularity-command.js";
import type { Environment, ExecOptions } from "../src/environments/types.js";
import { environmentContract } from "./support/environment-contract.js";
import { installFakeApptainer, type FakeApptainer, type FakeCall } from "./support/fake-apptainer.js";

const base: ExecOptions = { timeoutMs: 20_000, maxOutputChars: 100_000 };
const HARDENED_START = ["--containall", "--cleanenv", "--no-privs", "--no-mount", "hostfs,bind-paths"];
const HARDENED_EXEC = ["--cleanenv", "--no-privs"];

/** Runs `argv` through a transport and collects everything it reports. */
async function runThrough(transport: SingularityTransport, argv: string[]): Promise<{ output: string; end: SandboxCommandEnd }> {
  const chunks: Buffer[] = [];
  const command = await transport.start(argv, (chunk) => chunks.push(Buffer.from(chunk)));
  const end = await command.done;
  return { output: Buffer.concat(chunks).toString("utf8"), end };
}

function withoutVersionProbes(calls: FakeCall[]): string[][] {
  return calls.map((call) => call.argv).filter((argv) => argv[0] !== "version");
}

// ---------------------------------------------------------------------------
// No process needed
// ---------------------------------------------------------------------------

describe("singularity backend: command lines", () => {
  it("starts a contained, clean-environment, unprivileged instance by default", () => {
    expect(instanceStartArgs({ image: "/images/tools.sif" }, "mibyan-t-1")).toEqual([
      "instance",
      "start",
      "--containall",
      "--cleanenv",
      "--no-privs",
      "--no-mount",
      "hostfs,bind-paths",
      "/images/tools.sif",
      "mibyan-t-1",
    ]);
  });

  it("adds the network namespace, writable tmpfs, binds and extra arguments before the image", () => {
    const args = instanceStartArgs(
      {
        image: "docker://debian:stable-slim",
        network: "none",
        writableTmpfs: true,
        binds: [
          { source: "/srv/data", target: "/data", readOnly: true },
          { source: "/scratch/job 7" },
        ],
        extraArgs: ["--hostname", "sandbox"],
      },
      "n",
    );
    expect(args).toEqual([
      "instance",
      "start",
      ...HARDENED_START,
      "--net",
      "--network",
      "none",
      "--writable-tmpfs",
      "--bind",
      "/srv/data:/data:ro",
      "--bind",
      "/scratch/job 7:/scratch/job 7",
      "--hostname",
      "sandbox",
      "docker://debian:stable-slim",
      "n",
    ]);
  });

  it("drops the hardening only when told to, and never adds a network namespace for host", () => {
    expect(instanceStartArgs({ image: "/i.sif", contain: false, cleanenv: false, network: "host" }, "n")).toEqual(["instance", "start", "/i.sif", "n"]);
    expect(instanceStartArgs({ image: "/i.sif", contain: false }, "n")).toEqual(["instance", "start", "--cleanenv", "/i.sif", "n"]);
    expect(instanceStartArgs({ image: "/i.sif", cleanenv: false }, "n")).toEqual(["instance", "start", "--containall", "--no-privs", "--no-mount", "hostfs,bind-paths", "/i.sif", "n"]);
    expect(() => instanceStartArgs({}, "n")).toThrow(/terminal\.singularity\.image is not set/);
  });

  it("execs in the task's instance with a clean environment, merging stderr inside, arguments unchanged", () => {
    expect(instanceExecArgs({ image: "/i.sif" }, "mibyan-a-1")).toEqual(["exec", ...HARDENED_EXEC, "instance://mibyan-a-1"]);
    expect(instanceExecArgs({ image: "/i.sif", cleanenv: false, contain: false }, "x")).toEqual(["exec", "instance://x"]);
    const hostile = ["bash", "-c", "echo \"$1\"; rm -rf '/'", "bash", "a b\nc $(id) `x` ; | & --bind=/"];
    expect(commandArgs({ image: "/i.sif" }, "mibyan-a-1", hostile)).toEqual([
      "exec",
      ...HARDENED_EXEC,
      "instance://mibyan-a-1",
      "/bin/sh",
      "-c",
      'exec 2>&1; exec "$@"',
      "sh",
      ...hostile,
    ]);
    expect(MERGE_STDERR_PREFIX).toEqual(["/bin/sh", "-c", 'exec 2>&1; exec "$@"', "sh"]);
    expect(instanceStopArgs("mibyan-a-1")).toEqual(["instance", "stop", "--force", "mibyan-a-1"]);
  });

  it("names instances mibyan-<task>-<random> with only the characters the CLI accepts", () => {
    const a = instanceName("task 1/../; rm -rf ~");
    const b = instanceName("task 1/../; rm -rf ~");
    expect(a).toMatch(/^mibyan-task-1-\.\.-rm--rf--[0-9a-f]{8}$/);
    expect(a).toMatch(/^[a-zA-Z0-9._-]+$/);
    expect(a).not.toBe(b);
    expect(instanceName("-x")).toMatch(/^mibyan-x-[0-9a-f]{8}$/);
    expect(instanceName("///")).toMatch(/^mibyan-task-[0-9a-f]{8}$/);
    expect(instanceName("x".repeat(200)).length).toBeLessThanOrEqual(7 + 40 + 1 + 8);
  });
});

describe("singularity backend: configuration", () => {
  it("reads the terminal.singularity section (snake_case and camelCase)", () => {
    const options = singularityOptionsFromConfig({
      image: "docker://debian:stable-slim",
      binary: "/opt/apptainer/bin/apptainer",
      cwd: "/work",
      binds: ["/srv/data:/data:ro", "/scratch", { source: "/a", target: "/b", read_only: false }],
      contain: true,
      cleanenv: false,
      network: "none",
      writable_tmpfs: true,
      env: { LANG: "C.UTF-8", WORKERS: 4, DEBUG: false },
      extra_args: ["--hostname", "box"],
      start_timeout_seconds: 30,
    });
    expect(options).toEqual<SingularityOptions>({
      image: "docker://debian:stable-slim",
      binary: "/opt/apptainer/bin/apptainer",
      cwd: "/work",
      binds: [{ source: "/srv/data", target: "/data", readOnly: true }, { source: "/scratch" }, { source: "/a", target: "/b" }],
      contain: true,
      cleanenv: false,
      network: "none",
      writableTmpfs: true,
      env: { LANG: "C.UTF-8", WORKERS: "4", DEBUG: "false" },
      extraArgs: ["--hostname", "box"],
      startTimeoutMs: 30_000,
    });
    expect(singularityOptionsFromConfig({ writableTmpfs: true, extraArgs: ["-e"] })).toEqual({ writableTmpfs: true, extraArgs: ["-e"] });
    expect(singularityOptionsFromConfig(undefined)).toEqual({});
    expect(singularityOptionsFromConfig({ image: "oras://ghcr.io/x/y:1", network: null })).toEqual({ image: "oras://ghcr.io/x/y:1" });
  });

  it("rejects bad values with an error naming the key", () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ image: "tools.sif" }, /terminal\.singularity\.image must be an absolute path .* or a URI/],
      [{ image: "instance://other" }, /terminal\.singularity\.image must be an image, not a running instance/],
      [{ image: 7 }, /terminal\.singularity\.image must be a non-empty string/],
      [{ image: "" }, /terminal\.singularity\.image must be a non-empty string/],
      [{ binds: "/a:/b" }, /terminal\.singularity\.binds must be a list/],
      [{ binds: ["/a", "relative:/b"] }, /terminal\.singularity\.binds\[1\] must be an absolute path: "relative"/],
      [{ binds: ["/a,/etc:/x"] }, /terminal\.singularity\.binds\[0\] must not contain "," or ":"/],
      [{ binds: ["/a:/b:rx"] }, /terminal\.singularity\.binds\[0\] must look like/],
      [{ binds: ["/a:/b:ro:x"] }, /terminal\.singularity\.binds\[0\] must look like/],
      [{ binds: [{ target: "/b" }] }, /terminal\.singularity\.binds\[0\] needs a source path/],
      [{ binds: [{ source: "/a", read_only: "yes" }] }, /terminal\.singularity\.binds\[0\] read_only must be true or false/],
      [{ binds: [{ source: "/a", mode: "ro" }] }, /terminal\.singularity\.binds\[0\] has unknown keys: mode/],
      [{ contain: "yes" }, /terminal\.singularity\.contain must be true or false/],
      [{ cleanenv: 1 }, /terminal\.singularity\.cleanenv must be true or false/],
      [{ writable_tmpfs: "true" }, /terminal\.singularity\.writable_tmpfs must be true or false/],
      [{ network: "--privileged" }, /terminal\.singularity\.network must be none, host, or a network name/],
      [{ cwd: "work" }, /terminal\.singularity\.cwd must be an absolute path/],
      [{ env: ["A=1"] }, /terminal\.singularity\.env must be a mapping/],
      [{ env: { "A B": "1" } }, /terminal\.singularity\.env has an invalid variable name: "A B"/],
      [{ env: { A: { nested: 1 } } }, /terminal\.singularity\.env\.A must be a string, a number or a boolean/],
      [{ extra_args: "--nv" }, /terminal\.singularity\.extra_args must be a list of strings/],
      [{ start_timeout_seconds: -1 }, /terminal\.singularity\.start_timeout_seconds must be a positive number/],
      [{ bind: ["/a"] }, /terminal\.singularity\.bind is not a known option \(known: image, binary, cwd, binds/],
    ];
    for (const [section, message] of bad) {
      expect(() => singularityOptionsFromConfig(section), JSON.stringify(section)).toThrow(message);
    }
  });

  it("says whether the instance reaches the host's files", () => {
    expect(singularityReachesHost({})).toBe(false);
    expect(singularityReachesHost({ extraArgs: ["--hostname", "box", "--writable-tmpfs", "-e", "--workdir", "/var/tmp/w", "-S/work"] })).toBe(false);
    expect(singularityReachesHost({ binds: [{ source: "/a", readOnly: true }] })).toBe(true);
    expect(singularityReachesHost({ contain: false })).toBe(true);
    for (const extra of [["--bind", "/:/host"], ["-B", "/x"], ["-B/x"], ["--bind=/x"], ["--mount", "type=bind,src=/,dst=/h"], ["--home", "/root"], ["-H/root"], ["--overlay", "/o"], ["--writable"], ["-cw"], ["--nv"], ["--rocm"], ["--fusemount", "host:sshfs x: /m"], ["--add-caps", "CAP_SYS_ADMIN"], ["--keep-privs"], ["--allow-setuid"]]) {
      expect(singularityReachesHost({ extraArgs: extra }), extra.join(" ")).toBe(true);
    }
  });

  it("tells SandboxEnvironment the isolation, the starting directory and the grace times", () => {
    expect(singularityEnvironmentOptions({ image: "/i.sif" })).toEqual({ isolation: { name: "singularity", hostMounts: false } });
    expect(singularityEnvironmentOptions({ image: "/i.sif", binds: [{ source: "/a" }], cwd: "/work", killGraceMs: 500, pipeDrainMs: 100, startTimeoutMs: 9_000 })).toEqual({
      isolation: { name: "singularity", hostMounts: true },
      cwd: "/work",
      killGraceMs: 500,
      pipeDrainMs: 100,
      startTimeoutMs: 9_000,
    });
    expect(singularityEnvironmentOptions({ image: "/i.sif", contain: false })).toEqual({ isolation: { name: "singularity", hostMounts: true }, removeStateOnClose: true });
    expect(isIsolatedBackend({ name: "singularity", hostMounts: false })).toBe(true);
    expect(isIsolatedBackend({ name: "singularity", hostMounts: true })).toBe(false);
  });

  it("runs the CLI without the variables that would change its options, and passes env as APPTAINERENV_", () => {
    const cliEnv = {
      PATH: "/usr/bin",
      OPENAI_API_KEY: "sk-host-secret",
      APPTAINER_BIND: "/:/host",
      APPTAINER_CONTAINALL: "false",
      SINGULARITY_BINDPATH: "/etc",
      APPTAINERENV_LEAK: "x",
      SINGULARITYENV_LEAK: "y",
      APPTAINER_CACHEDIR: "/var/cache/apptainer",
      APPTAINER_DOCKER_USERNAME: "bot",
      SINGULARITY_TMPDIR: "/var/tmp",
    };
    expect(cliEnvironment({ cliEnv, env: { LANG: "C.UTF-8", "A_B": "x,y=z 'q'" } }, "apptainer")).toEqual({
      PATH: "/usr/bin",
      OPENAI_API_KEY: "sk-host-secret",
      APPTAINER_CACHEDIR: "/var/cache/apptainer",
      APPTAINER_DOCKER_USERNAME: "bot",
      SINGULARITY_TMPDIR: "/var/tmp",
      APPTAINERENV_LANG: "C.UTF-8",
      APPTAINERENV_A_B: "x,y=z 'q'",
    });
    expect(cliEnvironment({ cliEnv: { PATH: "/bin" }, env: { LANG: "C" } }, "singularity")).toEqual({ PATH: "/bin", SINGULARITYENV_LANG: "C" });
  });

  it("reads the section from config.yaml for every new task", () => {
    const home = mkdtempSync(join(tmpdir(), "mibyan-sing-home-"));
    const previous = process.env.MIBYAN_HOME;
    process.env.MIBYAN_HOME = home;
    try {
      writeFileSync(join(home, "config.yaml"), "terminal:\n  singularity:\n    image: docker://alpine:3\n    network: none\n");
      clearConfigCache();
      expect(defaultSingularityOptions()).toEqual({ image: "docker://alpine:3", network: "none" });
      writeFileSync(join(home, "config.yaml"), "terminal:\n  singularity:\n    image: relative.sif\n");
      clearConfigCache();
      expect(() => defaultSingularityOptions()).toThrow(/terminal\.singularity\.image must be an absolute path/);
    } finally {
      if (previous === undefined) delete process.env.MIBYAN_HOME;
      else process.env.MIBYAN_HOME = previous;
      clearConfigCache();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("is the registry's singularity backend", async () => {
    const factory = await BACKENDS.singularity!();
    expect(factory.backend).toBe("singularity");
    expect(typeof factory.unavailableReason).toBe("function");
  });
});

// ---------------------------------------------------------------------------
// Against the fake CLI
// ---------------------------------------------------------------------------

describe("singularity backend: finding the CLI and checking it works", () => {
  const fakes: FakeApptainer[] = [];
  const dirs: string[] = [];
  afterAll(() => {
    for (const fake of fakes) fake.dispose();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => resetSingularityAvailability());

  function fake(name: "apptainer" | "singularity" = "apptainer"): FakeApptainer {
    const f = installFakeApptainer({ name });
    fakes.push(f);
    return f;
  }

  it("prefers apptainer, falls back to singularity, and says when neither is there", () => {
    const apptainer = fake("apptainer");
    const singularity = fake("singularity");
    const systemPath = "/usr/bin:/bin";
    expect(resolveSingularityBinary({ cliEnv: { PATH: `${singularity.binDir}:${apptainer.binDir}:${systemPath}` } })).toEqual({ path: apptainer.binary, flavor: "apptainer" });
    expect(resolveSingularityBinary({ cliEnv: { PATH: `${singularity.binDir}:${systemPath}` } })).toEqual({ path: singularity.binary, flavor: "singularity" });
    expect(() => resolveSingularityBinary({ cliEnv: { PATH: systemPath } })).toThrow(/neither apptainer nor singularity is installed or on PATH/);
    expect(resolveSingularityBinary({ binary: singularity.binary, cliEnv: { PATH: systemPath } })).toEqual({ path: singularity.binary, flavor: "singularity" });
    expect(() => resolveSingularityBinary({ binary: "/nonexistent/apptainer" })).toThrow(/terminal\.singularity\.binary: \/nonexistent\/apptainer is not an executable file/);
  });

  it("is available when an image is set and `version` works, and says why not otherwise", () => {
    const f = fake();
    expect(singularityUnavailableReason({ image: f.image, cliEnv: f.env })).toBeUndefined();
    expect(f.calls().map((c) => c.argv)).toEqual([["version"]]);
    expect(f.calls()[0]!.cwd).toBe("/");
    // Cached: no second probe.
    expect(singularityUnavailableReason({ image: f.image, cliEnv: f.env })).toBeUndefined();
    expect(f.calls()).toHaveLength(1);

    expect(singularityUnavailableReason({ cliEnv: f.env })).toMatch(/terminal\.singularity\.image is not set/);
    expect(singularityUnavailableReason({ image: "/nonexistent/x.sif", cliEnv: f.env })).toBe("the image /nonexistent/x.sif does not exist");
    expect(singularityUnavailableReason({ image: "docker://alpine", cliEnv: { PATH: "/usr/bin:/bin" } })).toMatch(/neither apptainer nor singularity/);

    const dir = mkdtempSync(join(tmpdir(), "mibyan-broken-apptainer-"));
    dirs.push(dir);
    const broken = join(dir, "apptainer");
    writeFileSync(broken, "#!/bin/sh\necho 'FATAL:   Unable to get apptainer configuration' >&2\nexit 255\n");
    chmodSync(broken, 0o755);
    expect(singularityUnavailableReason({ image: "docker://alpine", binary: broken })).toBe(`\`${broken} version\` failed: FATAL:   Unable to get apptainer configuration`);
  });

  it("the factory reports a bad configuration as the reason it cannot be used", () => {
    const factory = createSingularityFactory(() => singularityOptionsFromConfig({ image: "nope.sif" }));
    expect(factory.unavailableReason()).toMatch(/^its configuration is invalid: terminal\.singularity\.image must be an absolute path/);
  });
});

describe("singularity backend: transport against the fake CLI", () => {
  let f: FakeApptainer;
  const open: SingularityTransport[] = [];
  beforeAll(() => {
    f = installFakeApptainer();
  });
  afterEach(async () => {
    await Promise.allSettled(open.splice(0).map((t) => t.close()));
  });
  afterAll(() => f.dispose());

  async function openTransport(options: Partial<SingularityOptions> = {}, taskId = "transport-task"): Promise<SingularityTransport> {
    const transport = await openSingularityInstance(taskId, { image: f.image, cliEnv: f.env, ...options });
    open.push(transport);
    return transport;
  }

  it("starts one hardened instance, runs argv in it unchanged, stderr merged in order, exit code reported", async () => {
    const before = f.calls().length;
    const transport = await openTransport();
    expect(transport.instanceName).toMatch(/^mibyan-transport-task-[0-9a-f]{8}$/);
    expect(transport.description).toBe(`apptainer instance ${transport.instanceName}`);
    const result = await runThrough(transport, ["bash", "-c", 'echo out1; echo err1 >&2; echo out2; printf "%s|" "$@"; exit 7', "bash", "a b", "$HOME", "'q'"]);
    expect(result).toEqual({ output: "out1\nerr1\nout2\na b|$HOME|'q'|", end: { exitCode: 7 } });

    const calls = f.calls().slice(before);
    expect(calls.map((c) => c.argv)).toEqual([
      ["instance", "start", ...HARDENED_START, f.image, transport.instanceName],
      ["exec", ...HARDENED_EXEC, `instance://${transport.instanceName}`, ...MERGE_STDERR_PREFIX, "bash", "-c", 'echo out1; echo err1 >&2; echo out2; printf "%s|" "$@"; exit 7', "bash", "a b", "$HOME", "'q'"],
    ]);
    // The CLI always starts in `/`, so no host directory is the command's directory.
    expect(calls.every((c) => c.cwd === "/")).toBe(true);
  });

  it("keeps the host's variables out, passes the configured ones, and strips APPTAINER_* settings from the CLI's environment", async () => {
    const transport = await openTransport({
      cliEnv: { ...f.env, MIBYAN_TEST_SECRET: "host-secret", APPTAINER_BIND: "/:/host" },
      env: { GREETING: "hello, world", QUOTED: "it's $x" },
    });
    const result = await runThrough(transport, ["bash", "-c", 'printf "%s|" "${MIBYAN_TEST_SECRET-unset}" "$GREETING" "$QUOTED"; echo; pwd']);
    expect(result.end).toEqual({ exitCode: 0 });
    const [values, cwd] = result.output.split("\n");
    expect(values).toBe("unset|hello, world|it's $x|");
    expect(cwd).toMatch(/\/state\/instances\/mibyan-transport-task-[0-9a-f]{8}\/home$/);
    const exec = f.calls().at(-1)!;
    expect(exec.env).toEqual({ APPTAINERENV_GREETING: "hello, world", APPTAINERENV_QUOTED: "it's $x" });
  });

  it("reports a CLI failure as an error without an exit code (the program never ran)", async () => {
    const transport = await openTransport();
    expect((await runThrough(transport, ["true"])).end).toEqual({ exitCode: 0 });
    // The instance disappears behind the transport's back.
    spawnSync(f.binary, ["instance", "stop", "--force", transport.instanceName], { stdio: "ignore" });
    const result = await runThrough(transport, ["echo", "never"]);
    expect(result.output).toBe("");
    expect(result.end.exitCode).toBeNull();
    expect(result.end.error?.message).toBe(`apptainer exec in instance ${transport.instanceName} failed: FATAL:   no instance found with name ${transport.instanceName}`);
  });

  it("detach stops following at once and kills only the local client; the program dies with the instance", async () => {
    const transport = await openTransport();
    const chunks: string[] = [];
    // `exec` keeps the pid: the one printed is the sleep's.
    const command = await transport.start(["bash", "-c", "echo started $$; exec sleep 30"], (c) => chunks.push(Buffer.from(c).toString()));
    await waitFor(() => /started \d+/.test(chunks.join("")));
    const pid = Number(/started (\d+)/.exec(chunks.join(""))![1]);
    const started = Date.now();
    command.detach();
    const end = await command.done;
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(end).toEqual({ exitCode: null });
    command.detach(); // idempotent
    await sleep(200);
    expect(alive(pid)).toBe(true);
    await transport.close();
    await waitFor(() => !alive(pid));
  });

  it("a background job holding the stream keeps the command open until detached", async () => {
    const transport = await openTransport();
    const command = await transport.start(["bash", "-c", "sleep 20 & echo $!"], () => undefined);
    const settled = await Promise.race([command.done.then(() => "settled"), sleep(600).then(() => "open")]);
    expect(settled).toBe("open");
    command.detach();
    expect(await command.done).toEqual({ exitCode: 0 });
  });

  it("close stops the instance once (instance stop --force), ends what runs, and refuses new commands", async () => {
    const transport = await openTransport();
    const running = await transport.start(["sleep", "30"], () => undefined);
    expect(f.instances()).toContain(transport.instanceName);
    const started = Date.now();
    await transport.close();
    await transport.close();
    const end = await running.done;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(end.exitCode === null || end.exitCode >= 128).toBe(true);
    expect(f.instances()).not.toContain(transport.instanceName);
    const stops = f.calls().filter((c) => c.argv[0] === "instance" && c.argv[1] === "stop" && c.argv.includes(transport.instanceName));
    expect(stops.map((c) => c.argv)).toEqual([["instance", "stop", "--force", transport.instanceName]]);
    await expect(transport.start(["true"], () => undefined)).rejects.toThrow(`apptainer instance ${transport.instanceName} was stopped`);
  });

  it("closeSync stops the instance with a blocking call", async () => {
    const transport = await openTransport();
    transport.closeSync();
    expect(f.instances()).not.toContain(transport.instanceName);
    expect(f.calls().at(-1)!.argv).toEqual(["instance", "stop", "--force", transport.instanceName]);
    transport.closeSync();
    await transport.close();
    expect(f.calls().filter((c) => c.argv.includes(transport.instanceName) && c.argv[1] === "stop")).toHaveLength(1);
  });

  it("a failed start says why, and cleans up after itself", async () => {
    await expect(openSingularityInstance("t", { image: "/nonexistent/tools.sif", cliEnv: f.env })).rejects.toThrow(
      /^apptainer instance start of \/nonexistent\/tools\.sif failed: FATAL: +could not open image \/nonexistent\/tools\.sif/,
    );
    const [start, stop] = f.calls().slice(-2);
    expect(start!.argv.slice(0, 2)).toEqual(["instance", "start"]);
    expect(stop!.argv).toEqual(["instance", "stop", "--force", start!.argv.at(-1)]);
    await expect(openSingularityInstance("t", { image: f.image, cliEnv: f.env, extraArgs: ["--not-a-flag"] })).rejects.toThrow(
      /^apptainer instance start of .* failed: Error for command "start": unknown flag: --not-a-flag$/,
    );
    await expect(openSingularityInstance("t", { image: f.image, cliEnv: f.env, binds: [{ source: "a,b" }] })).rejects.toThrow(/terminal\.singularity\.binds\[0\]/);
  });

  it("rejects a command that cannot be passed as an argument", async () => {
    const transport = await openTransport();
    await expect(transport.start([], () => undefined)).rejects.toThrow(/empty/);
    await expect(transport.start(["echo", "a\0b"], () => undefined)).rejects.toThrow(/NUL/);
  });
});

describe("singularity backend: environments against the fake CLI", () => {
  let f: FakeApptainer;
  const envs: Environment[] = [];
  beforeAll(() => {
    f = installFakeApptainer();
  });
  afterEach(async () => {
    await Promise.allSettled(envs.splice(0).map((e) => e.close()));
  });
  afterAll(() => f.dispose());

  async function create(taskId: string, options: Partial<SingularityOptions> = {}): Promise<Environment> {
    const e = await createSingularityFactory({ image: f.image, cliEnv: f.env, ...options }).create(taskId);
    envs.push(e);
    return e;
  }

  it("one task: start with the hardened flags, every exec in its instance, stop on close", async () => {
    const before = f.calls().length;
    const e = await create("lifecycle");
    expect(e.backend).toBe("singularity");
    expect(e.isolation).toEqual({ name: "singularity", hostMounts: false });
    expect(e.cwd).toMatch(/\/home$/);
    expect((await e.exec("cd /tmp && export X=1", base)).exitCode).toBe(0);
    const r = await e.exec('pwd; echo "$X"', base);
    expect(r.output).toBe("/tmp\n1\n");
    const timedOut = await e.exec("sleep 30", { ...base, timeoutMs: 500 });
    expect(timedOut.exitCode).toBe(124);
    // The state directory is in the instance's private /tmp: it ends with the instance.
    const { stateDir } = e as unknown as { stateDir: string };
    expect(existsSync(stateDir)).toBe(true);
    expect(stateDir.startsWith(`${tmpdir()}/mibyan-state.`)).toBe(false);
    await e.close();
    expect(existsSync(stateDir)).toBe(false);

    const calls = withoutVersionProbes(f.calls().slice(before));
    const start = calls[0]!;
    const name = start.at(-1)!;
    expect(name).toMatch(/^mibyan-lifecycle-[0-9a-f]{8}$/);
    expect(start).toEqual(["instance", "start", ...HARDENED_START, f.image, name]);
    expect(calls.at(-1)).toEqual(["instance", "stop", "--force", name]);
    const execs = calls.slice(1, -1);
    // init, two commands, the timed-out one and its kill script.
    expect(execs.length).toBeGreaterThanOrEqual(5);
    for (const exec of execs) {
      expect(exec.slice(0, 4)).toEqual(["exec", ...HARDENED_EXEC, `instance://${name}`]);
      expect(exec.slice(4, 8)).toEqual([...MERGE_STDERR_PREFIX]);
      expect(exec[8]).toBe("bash");
    }
    expect(f.instances()).not.toContain(name);
  });

  it("two tasks get two instances, and a closed environment refuses commands", async () => {
    const before = f.calls().length;
    const [a, b] = await Promise.all([create("task-a"), create("task-b")]);
    await a.exec("true", base);
    await b.exec("true", base);
    const starts = withoutVersionProbes(f.calls().slice(before)).filter((argv) => argv[1] === "start");
    const names = starts.map((argv) => argv.at(-1));
    expect(new Set(names).size).toBe(2);
    await a.close();
    await expect(a.exec("true", base)).rejects.toThrow(/closed/);
    expect((await b.exec("echo still", base)).output).toBe("still\n");
  });

  it("starts in the configured directory, and reports binds as reaching the host", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mibyan-sing-cwd-"));
    try {
      const e = await create("configured", { cwd: join(dir, "new", "dir"), binds: [{ source: dir, readOnly: true }], env: { TOOL_MODE: "strict" } });
      expect(e.cwd).toBe(join(dir, "new", "dir"));
      expect(e.isolation).toEqual({ name: "singularity", hostMounts: true });
      expect((await e.exec('pwd; echo "$TOOL_MODE"', base)).output).toBe(`${join(dir, "new", "dir")}\nstrict\n`);
      const start = withoutVersionProbes(f.calls()).filter((argv) => argv[1] === "start").at(-1)!;
      expect(start.slice(-4)).toEqual(["--bind", `${dir}:${dir}:ro`, f.image, start.at(-1)]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a non-contained instance shares the host's /tmp: close removes the task's state directory there", async () => {
    const e = await create("uncontained", { contain: false });
    expect((await e.exec("echo private output", base)).output).toBe("private output\n");
    const { stateDir } = e as unknown as { stateDir: string };
    expect(existsSync(stateDir)).toBe(true);
    await e.close();
    expect(existsSync(stateDir)).toBe(false);
  });

  it("works with the legacy singularity CLI found on PATH, passing SINGULARITYENV_ variables", async () => {
    const legacy = installFakeApptainer({ name: "singularity" });
    try {
      const e = await createSingularityFactory({ image: legacy.image, cliEnv: { ...process.env, PATH: `${legacy.binDir}:/usr/bin:/bin` }, env: { MODE: "legacy" } }).create("legacy");
      envs.push(e);
      expect((await e.exec('echo "$MODE"', base)).output).toBe("legacy\n");
      const exec = legacy.calls().filter((c) => c.argv[0] === "exec").at(-1)!;
      expect(exec.flavor).toBe("singularity");
      expect(exec.env).toEqual({ SINGULARITYENV_MODE: "legacy" });
      await e.close();
    } finally {
      legacy.dispose();
    }
  });

  it("a failed start rejects with the CLI's reason", async () => {
    await expect(createSingularityFactory({ image: join(f.dir, "missing.sif"), cliEnv: f.env }).create("missing")).rejects.toThrow(/instance start of .*missing\.sif failed: FATAL: +could not open image/);
  });
});

describe("singularity backend: contract", () => {
  let f: FakeApptainer;
  beforeAll(() => {
    f = installFakeApptainer();
  });
  afterAll(() => f.dispose());
  environmentContract("singularity (fake apptainer CLI)", (taskId) => createSingularityFactory({ image: f.image, cliEnv: f.env }).create(taskId));
});

// ---------------------------------------------------------------------------
// A real Apptainer, when there is one
// ---------------------------------------------------------------------------

const REAL_IMAGE = process.env.MIBYAN_TEST_APPTAINER_IMAGE?.trim() || undefined;
const HOW_TO_RUN =
  "install Apptainer (or SingularityCE) and run MIBYAN_TEST_APPTAINER_IMAGE=/path/to/image-with-bash.sif (or docker://debian:stable-slim) npx vitest run test/environments-singularity.test.ts";

function realEngineProblem(): string | undefined {
  let binary: string;
  try {
    binary = resolveSingularityBinary({}).path;
  } catch {
    return `no apptainer or singularity on PATH; ${HOW_TO_RUN}`;
  }
  if (REAL_IMAGE === undefined) return `MIBYAN_TEST_APPTAINER_IMAGE is not set (found ${binary}); ${HOW_TO_RUN}`;
  const reason = singularityUnavailableReason({ image: REAL_IMAGE });
  return reason === undefined ? undefined : `${reason}; ${HOW_TO_RUN}`;
}

environmentContract("singularity (real apptainer)", (taskId) => createSingularityFactory({ image: REAL_IMAGE! }).create(taskId), {
  skip: realEngineProblem(),
  testTimeoutMs: 60_000,
});

/** Whether `pid` runs (a zombie counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]!);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(20);
  }
}

