/**
 * The docker backend against a real engine (podman's Docker API here, see
 * test/support/podman.ts), plus the pure parts (argument building, the trailer
 * filter, config parsing) that need no engine.
 */

import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { isIsolatedBackend } from "../src/approval/flow/gate.js";
import { BACKENDS } from "../src/environments/backends.js";
import { EnvironmentManager } from "../src/environments/manager.js";
import {
  DockerEnvironment,
  DockerEnvironmentFactory,
  defaultDockerOptions,
  dockerFactory,
  dockerOptionsFromConfig,
  dockerOptionsFromEnv,
  dockerReachesHost,
  dockerRunArgs,
  removeDockerContainers,
  resetDockerAvailability,
  type DockerEnvironmentOptions,
} from "../src/environments/docker.js";
import { dockerUnavailableReason } from "../src/environments/docker-cli.js";
import { buildRunScript, parseTrailer, trailerTag, TrailerFilter } from "../src/environments/sandbox-scripts.js";
import { statePaths } from "../src/environments/shell-state.js";
import type { ExecOptions } from "../src/environments/types.js";
import { environmentContract } from "./support/environment-contract.js";
import { processContract } from "./support/process-contract.js";
import { HOW_TO_RUN, prepareDockerTestEngine } from "./support/podman.js";

const base: ExecOptions = { timeoutMs: 20_000, maxOutputChars: 100_000 };

// ---------------------------------------------------------------------------
// No engine needed
// ---------------------------------------------------------------------------

describe("docker backend: arguments and configuration", () => {
  it("hardens the container by default", () => {
    const args = dockerRunArgs("task 1", { image: "img:1" }, "mibyan-x");
    const joined = args.join(" ");
    expect(args.slice(0, 2)).toEqual(["run", "-d"]);
    expect(joined).toContain("--cap-drop ALL");
    expect(joined).toContain("--security-opt no-new-privileges");
    expect(joined).toContain("--pids-limit 512");
    expect(joined).toContain("--memory 1g");
    expect(joined).toContain("--cpus 2");
    expect(joined).toContain("--network none");
    expect(args).toContain("mibyan.task=task 1");
    expect(joined).not.toMatch(/--mount|-v |--volume|--privileged/);
    // The image comes after every option, followed by the keep-alive command.
    const image = args.indexOf("img:1");
    expect(args[image - 1]).toBe("bash");
    expect(args[image - 2]).toBe("--entrypoint");
    expect(args.slice(image + 1, image + 2)).toEqual(["-c"]);
  });

  it("takes limits, network, user, env and mounts from the options", () => {
    const args = dockerRunArgs(
      "t",
      {
        network: "bridge",
        memory: null,
        cpus: "0.5",
        pidsLimit: 64,
        user: "1000:1000",
        env: { A: "1" },
        mounts: [{ source: "/srv/data", target: "/data", readOnly: true }],
      },
      "n",
    );
    const joined = args.join(" ");
    expect(joined).toContain("--network bridge");
    expect(joined).not.toContain("--memory");
    expect(joined).toContain("--cpus 0.5");
    expect(joined).toContain("--pids-limit 64");
    expect(joined).toContain("--user 1000:1000");
    expect(joined).toContain("--env A=1");
    expect(joined).toContain("--mount type=bind,source=/srv/data,target=/data,readonly");
    expect(() => dockerRunArgs("t", { mounts: [{ source: "rel", target: "/x" }] })).toThrow(/absolute/);
    expect(() => dockerRunArgs("t", { env: { "A B": "1" } })).toThrow(/invalid variable/);
  });

  it("says whether the host is reachable from the container", () => {
    expect(dockerReachesHost({})).toBe(false);
    expect(dockerReachesHost({ network: "bridge" })).toBe(false);
    expect(dockerReachesHost({ network: "host" })).toBe(true);
    expect(dockerReachesHost({ mounts: [{ source: "/a", target: "/b" }] })).toBe(true);
    expect(dockerReachesHost({ extraRunArgs: ["-v", "/:/host"] })).toBe(true);
    expect(dockerReachesHost({ extraRunArgs: ["-v/:/host"] })).toBe(true);
    expect(dockerReachesHost({ extraRunArgs: ["--mount=type=bind,src=/,dst=/h"] })).toBe(true);
    expect(dockerReachesHost({ extraRunArgs: ["--privileged"] })).toBe(true);
    expect(dockerReachesHost({ extraRunArgs: ["--pid", "host"] })).toBe(true);
    expect(dockerReachesHost({ extraRunArgs: ["--pid=host"] })).toBe(true);
    expect(dockerReachesHost({ extraRunArgs: ["--tmpfs", "/scratch", "--hostname", "box"] })).toBe(false);
  });

  it("reads the terminal.docker config section", () => {
    const options = dockerOptionsFromConfig({
      image: "debian:bookworm",
      network: "bridge",
      memory: "2g",
      cpus: 4,
      pids_limit: "none",
      mounts: ["/src:/work:ro", { source: "/a", target: "/b" }],
      env: { LANG: "C.UTF-8", N: 1 },
      cwd: "/work",
      extra_run_args: ["--tmpfs", "/scratch"],
      host: "unix:///run/podman.sock",
      start_timeout_seconds: 30,
    });
    expect(options).toEqual<DockerEnvironmentOptions>({
      image: "debian:bookworm",
      network: "bridge",
      memory: "2g",
      cpus: 4,
      pidsLimit: null,
      mounts: [
        { source: "/src", target: "/work", readOnly: true },
        { source: "/a", target: "/b", readOnly: false },
      ],
      env: { LANG: "C.UTF-8", N: "1" },
      cwd: "/work",
      extraRunArgs: ["--tmpfs", "/scratch"],
      host: "unix:///run/podman.sock",
      startTimeoutMs: 30_000,
    });
    expect(dockerOptionsFromConfig(undefined)).toEqual({});
    expect(() => dockerOptionsFromConfig({ mounts: ["nocolon"] })).toThrow(/mounts\[0\]/);
    expect(() => dockerOptionsFromConfig({ image: 3 })).toThrow(/image/);
    // A misspelt isolation setting must not pass silently.
    expect(() => dockerOptionsFromConfig({ netwrok: "none" })).toThrow(/^terminal\.docker\.netwrok is not a known option \(known: image, network,/);
    expect(dockerOptionsFromConfig({ pidsLimit: 64 })).toEqual({ pidsLimit: 64 });
  });

  it("reads the terminal.docker section of a real config.yaml, environment variables winning", () => {
    const home = mkdtempSync(join(tmpdir(), "mibyan-docker-config-"));
    const previous = process.env.MIBYAN_HOME;
    process.env.MIBYAN_HOME = home;
    try {
      writeFileSync(
        join(home, "config.yaml"),
        ["terminal:", "  backend: docker", "  docker:", "    image: localhost/from-config:1", "    network: bridge", "    pids_limit: 64", "    mounts: ['/srv/data:/data:ro']", ""].join("\n"),
      );
      expect(defaultDockerOptions({})).toEqual({
        image: "localhost/from-config:1",
        network: "bridge",
        pidsLimit: 64,
        mounts: [{ source: "/srv/data", target: "/data", readOnly: true }],
      });
      expect(defaultDockerOptions({ MIBYAN_DOCKER_IMAGE: "localhost/from-env:2" }).image).toBe("localhost/from-env:2");
      expect(dockerFactory.options.image).toBe(process.env.MIBYAN_DOCKER_IMAGE ?? "localhost/from-config:1");
      // A malformed section makes the backend unavailable, naming the key.
      writeFileSync(join(home, "config.yaml"), "terminal:\n  docker:\n    pids_limit: lots\n");
      expect(() => defaultDockerOptions({})).toThrow(/terminal\.docker\.pids_limit/);
    } finally {
      if (previous === undefined) delete process.env.MIBYAN_HOME;
      else process.env.MIBYAN_HOME = previous;
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("reads MIBYAN_DOCKER_* variables and camelCase keys", () => {
    expect(
      dockerOptionsFromEnv({
        MIBYAN_DOCKER_IMAGE: "alpine-bash:1",
        MIBYAN_DOCKER_NETWORK: "bridge",
        MIBYAN_DOCKER_PIDS_LIMIT: "128",
        MIBYAN_DOCKER_MEMORY: "none",
        MIBYAN_DOCKER_MOUNTS: "/a:/b:ro, /c:/d",
        MIBYAN_DOCKER_HOST: "unix:///x.sock",
      }),
    ).toEqual({
      image: "alpine-bash:1",
      network: "bridge",
      pidsLimit: 128,
      memory: null,
      host: "unix:///x.sock",
      mounts: [
        { source: "/a", target: "/b", readOnly: true },
        { source: "/c", target: "/d", readOnly: false },
      ],
    });
    expect(dockerOptionsFromEnv({})).toEqual({});
    expect(dockerOptionsFromConfig({ pidsLimit: 9, extraRunArgs: ["--tmpfs", "/t"], mounts: [{ source: "/a", target: "/b", readOnly: true }] })).toEqual({
      pidsLimit: 9,
      extraRunArgs: ["--tmpfs", "/t"],
      mounts: [{ source: "/a", target: "/b", readOnly: true }],
    });
  });

  it("is registered as the docker backend", async () => {
    const factory = await BACKENDS.docker!();
    expect(factory).toBe(dockerFactory);
    expect(factory.backend).toBe("docker");
  });

  it("reports a missing CLI or an unreachable engine", () => {
    resetDockerAvailability();
    expect(dockerUnavailableReason({ dockerPath: "/nonexistent/docker" })).toMatch(/not installed/);
    const reason = dockerUnavailableReason({ host: "unix:///nonexistent/mibyan.sock" });
    expect(reason).toBeDefined();
    expect(reason).toMatch(/not installed|no Docker engine answered/);
    // Cached: the second answer is the same and immediate.
    const started = Date.now();
    expect(dockerUnavailableReason({ host: "unix:///nonexistent/mibyan.sock" })).toBe(reason);
    expect(Date.now() - started).toBeLessThan(50);
  });

  it("builds a run script that passes the command as $1", () => {
    const script = buildRunScript({ stateDir: "/tmp/s", runId: "r1", paths: statePaths("/tmp/s"), inner: "echo inner", nonce: "abc" });
    expect(script).toContain(`'/tmp/s/run-r1.pid'`);
    expect(script).toContain(`bash -c 'echo inner' bash "$1"`);
  });
});

describe("docker backend: trailer filter", () => {
  const tag = trailerTag("0123456789abcdef");
  const run = (chunks: Buffer[]) => {
    const out: Buffer[] = [];
    const filter = new TrailerFilter(tag, (c) => out.push(Buffer.from(c)));
    for (const chunk of chunks) filter.push(chunk);
    filter.end();
    return { output: Buffer.concat(out).toString("utf8"), value: filter.value };
  };
  const stream = Buffer.from(`hello\u0000world${tag}/some/dir ü${tag}after`, "utf8");

  it("parses the run script's trailer", () => {
    expect(parseTrailer("7:/tmp/a:b")).toEqual({ exitCode: 7, cwd: "/tmp/a:b" });
    expect(parseTrailer("0:")).toEqual({ exitCode: 0, cwd: "" });
    expect(parseTrailer(undefined)).toBeUndefined();
    expect(parseTrailer("junk")).toBeUndefined();
  });

  it("removes the trailer and keeps its value", () => {
    expect(run([stream])).toEqual({ output: "hello\u0000worldafter", value: "/some/dir ü" });
  });

  it("works however the stream is split", () => {
    for (let size = 1; size <= 9; size++) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < stream.length; i += size) chunks.push(stream.subarray(i, i + size));
      expect(run(chunks)).toEqual({ output: "hello\u0000worldafter", value: "/some/dir ü" });
    }
  });

  it("passes through what only looks like the start of a tag", () => {
    const partial = tag.slice(0, 10);
    expect(run([Buffer.from(`a${partial}`), Buffer.from("b")])).toEqual({ output: `a${partial}b`, value: undefined });
    expect(run([Buffer.from(`x${partial}`)])).toEqual({ output: `x${partial}`, value: undefined });
  });
});

// ---------------------------------------------------------------------------
// Against a real engine
// ---------------------------------------------------------------------------

const engine = prepareDockerTestEngine();
// File level, so it runs after every block here (the contract suite's too): stops a
// podman service these tests started themselves.
afterAll(() => {
  if (engine.ok) engine.stop();
}, 60_000);
const describeEngine = engine.ok ? describe : describe.skip;
if (!engine.ok) {
  describe("docker backend against a real engine", () => {
    it.skip(`skipped: ${engine.reason}`, () => undefined);
  });
}

describeEngine("docker backend against a real engine", () => {
  const host = engine.ok ? engine.host : "";
  const image = engine.ok ? engine.image : "";
  const cliEnv = { ...process.env, DOCKER_HOST: host };
  const docker = (...args: string[]) => execFileSync("docker", args, { env: cliEnv, encoding: "utf8" });
  const options: DockerEnvironmentOptions = { image, cliEnv, killGraceMs: 1_000 };
  const factory = new DockerEnvironmentFactory(options);
  const taskPrefix = `vitest-${process.pid}-`;
  let env: DockerEnvironment;
  let other: DockerEnvironment;
  const extra: DockerEnvironment[] = [];

  /** Processes inside `target`'s container whose command line matches. */
  const inContainer = (target: DockerEnvironment, pattern: RegExp) =>
    docker("exec", target.containerId, "ps", "-o", "pid,args")
      .split("\n")
      .filter((line) => pattern.test(line));

  beforeAll(async () => {
    [env, other] = await Promise.all([factory.create(`${taskPrefix}a`), factory.create(`${taskPrefix}b`)]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([env, other, ...extra].filter(Boolean).map((e) => e.close()));
    // Anything a failed test left behind.
    for (const suffix of ["a", "b", "m", "c", "t", "l"]) await removeDockerContainers({ taskId: `${taskPrefix}${suffix}`, env: cliEnv });
  }, 120_000);

  it("is available through the engine", () => {
    resetDockerAvailability();
    expect(factory.unavailableReason()).toBeUndefined();
    expect(factory.backend).toBe("docker");
  });

  it("runs commands inside the container, not on the host", async () => {
    const r = await env.exec("hostname; cat /proc/1/cmdline | tr '\\0' ' '; echo; id -u; echo $BASH_VERSION", base);
    expect(r.exitCode).toBe(0);
    const [name, pid1, uid, bashVersion] = r.output.split("\n");
    expect(name).not.toBe(hostname());
    expect(env.containerId.startsWith(name!)).toBe(true);
    expect(pid1).toContain("sleep 2147483647");
    expect(uid).toBe("0");
    expect(bashVersion).toMatch(/^\d+\.\d+/);
    expect(env.backend).toBe("docker");
    expect(env.taskId).toBe(`${taskPrefix}a`);
  });

  it("reports exit codes, stderr merged into the output", async () => {
    const r = await env.exec("echo out; echo err >&2; exit 7", base);
    expect(r.exitCode).toBe(7);
    expect(r.output).toBe("out\nerr\n");
    expect(r.timedOut).toBe(false);
    expect(r.aborted).toBe(false);
    const interleaved = await env.exec("for i in $(seq 1 300); do echo o$i; echo e$i >&2; done", base);
    expect(interleaved.output).toBe(Array.from({ length: 300 }, (_, i) => `o${i + 1}\ne${i + 1}\n`).join(""));
    const missing = await env.exec("no-such-command-here", base);
    expect(missing.exitCode).toBe(127);
  });

  it("applies the hardening flags", async () => {
    const [info] = JSON.parse(docker("inspect", env.containerId)) as Array<{
      Config: { Labels: Record<string, string> };
      HostConfig: { CapDrop: string[] | null; CapAdd: string[] | null; SecurityOpt: string[] | null; PidsLimit: number; Memory: number; NanoCpus: number; NetworkMode: string; Privileged: boolean };
      Mounts: unknown[];
    }>;
    const hc = info!.HostConfig;
    // Docker reports ["ALL"]; podman lists the (default) capabilities it dropped.
    const dropped = (hc.CapDrop ?? []).map((c) => c.toUpperCase().replace(/^CAP_/, ""));
    expect(dropped.includes("ALL") || ["CHOWN", "DAC_OVERRIDE", "KILL", "NET_RAW", "SETUID", "SYS_CHROOT"].every((c) => dropped.includes(c))).toBe(true);
    expect(hc.CapAdd ?? []).toEqual([]);
    expect((hc.SecurityOpt ?? []).some((o) => /^no-new-privileges(:true|=true)?$/.test(o))).toBe(true);
    expect(hc.PidsLimit).toBe(512);
    expect(hc.Memory).toBe(1024 ** 3);
    expect(hc.NanoCpus).toBe(2e9);
    expect(hc.NetworkMode).toBe("none");
    expect(hc.Privileged).toBe(false);
    expect(info!.Mounts ?? []).toEqual([]);
    expect(info!.Config.Labels["mibyan.task"]).toBe(`${taskPrefix}a`);

    // And from the inside: no effective capabilities, no_new_privs set, no network but loopback.
    const r = await env.exec("grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status; ls /sys/class/net", base);
    expect(r.output).toMatch(/CapEff:\s+0000000000000000/);
    expect(r.output).toMatch(/CapBnd:\s+0000000000000000/);
    expect(r.output).toMatch(/NoNewPrivs:\s+1/);
    const interfaces = r.output.trim().split("\n").slice(3).join(" ").split(/\s+/).filter(Boolean);
    expect(interfaces).toEqual(["lo"]);
  });

  it("mounts nothing of the host by default, so the approval gate treats it as isolated", () => {
    expect(env.isolation).toEqual({ name: "docker", hostMounts: false });
    expect(isIsolatedBackend(env.isolation)).toBe(true);
  });

  it("carries cwd and exported variables between commands of a task, not into another task", async () => {
    const first = await env.exec("mkdir -p /tmp/wd && cd /tmp/wd && export MIBYAN_T=one && LOCAL_ONLY=x", base);
    expect(first.exitCode).toBe(0);
    expect(env.cwd).toBe("/tmp/wd");
    const second = await env.exec('pwd; echo "$MIBYAN_T"; echo "[${LOCAL_ONLY:-}]"', base);
    expect(second.output).toBe("/tmp/wd\none\n[]\n");

    const elsewhere = await other.exec('pwd; echo "[${MIBYAN_T:-}]"; ls -d /tmp/wd 2>&1 || true', base);
    expect(elsewhere.output.split("\n")[0]).toBe(other.cwd);
    expect(elsewhere.output).toContain("[]");
    expect(elsewhere.output).toMatch(/No such file|can't access|cannot access/);
    expect(other.cwd).not.toBe("/tmp/wd");
  });

  it("keeps state when the command calls exit, and honours a one-off cwd", async () => {
    const r = await env.exec("cd / && export MIBYAN_E=2 && exit 3", base);
    expect(r.exitCode).toBe(3);
    expect(env.cwd).toBe("/");
    const once = await env.exec("pwd", { ...base, cwd: "/tmp" });
    expect(once.output).toBe("/tmp\n");
    expect(env.cwd).toBe("/");
    const after = await env.exec('pwd; echo "$MIBYAN_E"', base);
    expect(after.output).toBe("/\n2\n");
  });

  it("handles directories with spaces, quotes and newlines", async () => {
    const dir = "/tmp/we'ird \"dir\"\nx";
    const made = await env.exec(`mkdir -p $'/tmp/we\\'ird "dir"\\nx' && cd $'/tmp/we\\'ird "dir"\\nx'`, base);
    expect(made.exitCode).toBe(0);
    expect(env.cwd).toBe(dir);
    const back = await env.exec("cd /", base);
    expect(back.exitCode).toBe(0);
    expect(env.cwd).toBe("/");
  });

  it("passes unicode and binary output through unchanged", async () => {
    const text = "héllo wörld ✓ 日本語 🎉 Ω";
    const r = await env.exec(`printf '%s\\n' '${text}'; echo 'ünïcödé arg: ∑'`, base);
    expect(r.output).toBe(`${text}\nünïcödé arg: ∑\n`);
    const binary = await env.exec("printf 'a\\000b\\001\\002c\\000mibyan-cwd-fake\\000'", base);
    expect(binary.output).toBe("a\u0000b\u0001\u0002c\u0000mibyan-cwd-fake\u0000");
    expect(binary.exitCode).toBe(0);
  });

  it("caps large output, keeping head and tail, and still tracks the cwd", async () => {
    const r = await env.exec("cd /tmp; seq 1 400000", { ...base, maxOutputChars: 10_000 });
    expect(r.exitCode).toBe(0);
    expect(r.truncated).toBe(true);
    const full = Array.from({ length: 400_000 }, (_, i) => `${i + 1}\n`).join("");
    expect(r.totalChars).toBe(full.length);
    expect(r.output.startsWith("1\n2\n3\n")).toBe(true);
    expect(r.output.endsWith("399999\n400000\n")).toBe(true);
    expect(r.output).toMatch(/characters omitted/);
    expect(r.output.length).toBeLessThan(10_100);
    expect(env.cwd).toBe("/tmp");
    await env.exec("cd /", base);
  });

  it("returns at once from a command that leaves a background job", async () => {
    const started = Date.now();
    const r = await env.exec("sleep 4325 & echo started", base);
    expect(r.output).toBe("started\n");
    expect(Date.now() - started).toBeLessThan(5_000);
    docker("exec", env.containerId, "sh", "-c", "pkill -f 'sleep 4325'; true");
  });

  it("ends the call at the trailer when the engine keeps docker exec open", async () => {
    // A docker CLI that lingers after a command's exec, as an engine might while a
    // background job holds the output stream.
    const dir = mkdtempSync(join(tmpdir(), "mibyan-fake-docker-"));
    const real = execFileSync("bash", ["-c", "command -v docker"], { encoding: "utf8" }).trim();
    const fake = join(dir, "docker");
    writeFileSync(fake, `#!/bin/sh\n${JSON.stringify(real)} "$@"; rc=$?\nif [ "$1" = exec ] && [ $# -gt 6 ]; then sleep 30; fi\nexit $rc\n`, { mode: 0o755 });
    const lingering = await DockerEnvironment.create(`${taskPrefix}l`, { ...options, dockerPath: fake });
    extra.push(lingering);
    try {
      const started = Date.now();
      const r = await lingering.exec("cd /tmp; echo hi; exit 5", base);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(r.output).toBe("hi\n");
      expect(r.exitCode).toBe(5);
      expect(r.signal).toBeUndefined();
      expect(lingering.cwd).toBe("/tmp");
    } finally {
      await lingering.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("kills the whole process tree inside the container on timeout", async () => {
    const started = Date.now();
    const r = await env.exec("sleep 4321 & (sleep 4322; echo never) & sleep 4320", { ...base, timeoutMs: 1_500 });
    expect(r.exitCode).toBe(124);
    expect(r.timedOut).toBe(true);
    expect(r.output).not.toContain("never");
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(inContainer(env, /sleep 432[012]/)).toEqual([]);
    // The task is still usable afterwards.
    const next = await env.exec("echo ok", base);
    expect(next.output).toBe("ok\n");
  });

  it("keeps what a killed command changed before it was killed, like the local backend", async () => {
    const r = await env.exec("cd /tmp && export MIBYAN_KILLED=yes && sleep 4326", { ...base, timeoutMs: 1_000 });
    expect(r.exitCode).toBe(124);
    expect(env.cwd).toBe("/tmp");
    const after = await env.exec('pwd; echo "$MIBYAN_KILLED"; cd /', base);
    expect(after.output).toBe("/tmp\nyes\n");
    expect(env.cwd).toBe("/");
  });

  it("stops a command flooding output at its timeout, output capped", async () => {
    const r = await env.exec("yes mibyan", { ...base, timeoutMs: 1_000, maxOutputChars: 5_000 });
    expect(r.exitCode).toBe(124);
    expect(r.truncated).toBe(true);
    expect(r.output.length).toBeLessThan(5_100);
    expect(r.totalChars).toBeGreaterThan(100_000);
    expect(inContainer(env, /yes mibyan/)).toEqual([]);
  });

  it("escalates to SIGKILL for a tree that ignores SIGTERM", async () => {
    const r = await env.exec("trap '' TERM; sleep 4331 & sleep 4330; echo survived", { ...base, timeoutMs: 800 });
    expect(r.exitCode).toBe(124);
    expect(r.output).not.toContain("survived");
    expect(inContainer(env, /sleep 433[01]/)).toEqual([]);
  });

  it("kills the tree inside the container when the caller aborts", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 700);
    const r = await env.exec("echo begun; sleep 4341 & sleep 4340", { ...base, signal: controller.signal });
    expect(r.exitCode).toBe(130);
    expect(r.aborted).toBe(true);
    expect(r.output).toBe("begun\n");
    expect(inContainer(env, /sleep 434[01]/)).toEqual([]);
    const already = await env.exec("echo no", { ...base, signal: AbortSignal.abort() });
    expect(already.exitCode).toBe(130);
    expect(already.output).toBe("");
  });

  it("mounts a host directory when configured, and then is not isolated", async () => {
    const dir = mkdtempSync(join(tmpdir(), "mibyan-docker-mount-"));
    try {
      writeFileSync(join(dir, "hello.txt"), "from the host\n");
      const mounted = await DockerEnvironment.create(`${taskPrefix}m`, { ...options, mounts: [{ source: dir, target: "/hostdir", readOnly: true }] });
      extra.push(mounted);
      expect(mounted.isolation).toEqual({ name: "docker", hostMounts: true });
      expect(isIsolatedBackend(mounted.isolation)).toBe(false);
      const r = await mounted.exec("cat /hostdir/hello.txt; touch /hostdir/x 2>/dev/null && echo writable || echo read-only", base);
      expect(r.output).toBe("from the host\nread-only\n");
      await mounted.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("starts in the configured cwd, creating it", async () => {
    const withCwd = await DockerEnvironment.create(`${taskPrefix}c`, { ...options, cwd: "/tmp/work/project" });
    extra.push(withCwd);
    expect(withCwd.cwd).toBe("/tmp/work/project");
    const r = await withCwd.exec("pwd", base);
    expect(r.output).toBe("/tmp/work/project\n");
    await withCwd.close();
  });

  it("works through the environment manager, per task", async () => {
    const manager = new EnvironmentManager({ factories: [factory], defaultBackend: "local", closeOnExit: false, idleTimeoutMs: 0 });
    const task = `${taskPrefix}t`;
    manager.setBackend(task, "docker");
    try {
      const managed = await manager.get(task);
      expect(managed.backend).toBe("docker");
      expect(managed.isolation).toEqual({ name: "docker", hostMounts: false });
      expect((await managed.exec("cd /tmp && echo hi", base)).output).toBe("hi\n");
      expect(managed.cwd).toBe("/tmp");
      expect(docker("ps", "-q", "--filter", `label=mibyan.task=${task}`).trim()).not.toBe("");
    } finally {
      await manager.closeAll();
    }
    expect(docker("ps", "-a", "-q", "--filter", `label=mibyan.task=${task}`).trim()).toBe("");
  });

  it("removes the container on close, idempotently", async () => {
    const task = `${taskPrefix}t`;
    const temp = await factory.create(task);
    const listed = () => docker("ps", "-a", "-q", "--filter", `label=mibyan.task=${task}`).trim();
    expect(listed()).not.toBe("");
    await temp.close();
    expect(listed()).toBe("");
    await temp.close();
    await expect(temp.exec("true", base)).rejects.toThrow(/closed/);

    // disposeSync (process exit) removes it too, blocking.
    const doomed = await factory.create(task);
    expect(listed()).not.toBe("");
    doomed.disposeSync();
    expect(listed()).toBe("");
    await expect(doomed.exec("true", base)).rejects.toThrow(/closed/);
    await doomed.close();
  });

  it("close kills a command that is still running", async () => {
    const task = `${taskPrefix}t`;
    const temp = await factory.create(task);
    const running = temp.exec("sleep 4350; echo done", base);
    await new Promise((r) => setTimeout(r, 800));
    await temp.close();
    const r = await running;
    expect(r.output).not.toContain("done");
    expect(r.exitCode).not.toBe(0);
  });

  it("fails clearly for an image that cannot be run, leaving no container", async () => {
    const task = `${taskPrefix}t`;
    await expect(DockerEnvironment.create(task, { ...options, image: "localhost/mibyan-no-such-image:none", startTimeoutMs: 60_000 })).rejects.toThrow(
      /docker run of image localhost\/mibyan-no-such-image:none failed/,
    );
    expect(docker("ps", "-a", "-q", "--filter", `label=mibyan.task=${task}`).trim()).toBe("");
  });
});

// The behaviours every backend shares, over docker (fresh containers per test).
environmentContract(
  "docker",
  (taskId) => new DockerEnvironmentFactory(engine.ok ? { image: engine.image, cliEnv: { ...process.env, DOCKER_HOST: engine.host } } : {}).create(taskId),
  { ...(engine.ok ? {} : { skip: engine.reason }), testTimeoutMs: 60_000 },
);
processContract(
  "docker",
  (taskId) => new DockerEnvironmentFactory(engine.ok ? { image: engine.image, cliEnv: { ...process.env, DOCKER_HOST: engine.host } } : {}).create(taskId),
  { ...(engine.ok ? {} : { skip: engine.reason }), testTimeoutMs: 60_000 },
);

if (!engine.ok) {
  // Make the reason visible in the run's output, not only in the skipped test's name.
  console.warn(`[environments-docker] real-engine tests skipped: ${engine.reason}\n${HOW_TO_RUN}`);
}
