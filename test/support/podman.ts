/**
 * Finds (or makes) a Docker engine and the test image for the docker backend's tests.
 *
 * 1. `MIBYAN_TEST_DOCKER_HOST`, else `DOCKER_HOST`: used when an engine answers
 *    there; the test image is built into it (`docker import`) when missing.
 * 2. Otherwise, when `podman` is installed and we are root: starts
 *    `podman system service` on a socket of this test process's own
 *    (`scripts/ci/start-podman.sh`; it also exits by itself after two idle
 *    minutes, should the process die without stopping it) and builds the image
 *    with `podman import` (`scripts/ci/build-test-image.sh`) when missing.
 *    `stop()` stops that service.
 * 3. Otherwise the answer says why the tests cannot run and how to make them.
 *
 * The image is `MIBYAN_TEST_DOCKER_IMAGE`, default `localhost/mibyan-test:2`.
 */

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { findExecutable } from "../../src/util/find-executable.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const START_PODMAN = join(ROOT, "scripts", "ci", "start-podman.sh");
const BUILD_IMAGE = join(ROOT, "scripts", "ci", "build-test-image.sh");
/** The socket a service started by this test process listens on (one per process: runs may overlap). */
export const TEST_PODMAN_SOCKET = `/tmp/mibyan-test-podman/podman-${process.pid}.sock`;
// The tag changes with what the image holds (2: util-linux script for PTY mode), so a stale image is not reused.
export const DEFAULT_TEST_IMAGE = "localhost/mibyan-test:2";

export const HOW_TO_RUN = [
  "the docker backend tests need a Docker engine and a test image with bash.",
  "On Debian: apt-get install -y podman runc busybox-static (then these tests start podman themselves as root),",
  "or: export \"$(scripts/ci/start-podman.sh /tmp/podman.sock)\" && scripts/ci/build-test-image.sh,",
  "or point MIBYAN_TEST_DOCKER_HOST / DOCKER_HOST at a reachable engine (see docs/backends/docker.md).",
].join(" ");

export type DockerTestEngine =
  | { ok: true; host: string; image: string; startedHere: boolean; stop(): void }
  | { ok: false; reason: string };

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 30_000): { code: number; out: string } {
  const r = spawnSync(cmd, args, { env, encoding: "utf8", timeout: timeoutMs, stdio: ["ignore", "pipe", "pipe"] });
  return { code: r.error ? -1 : (r.status ?? -1), out: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? r.error.message : ""}` };
}

function engineAnswers(host: string): boolean {
  // `ps` rather than `version`: podman's service takes seconds to answer /version.
  return run("docker", ["ps", "--quiet", "--filter", "label=mibyan.availability-probe"], { ...process.env, DOCKER_HOST: host }, 10_000).code === 0;
}

function imagePresent(host: string, image: string): boolean {
  return run("docker", ["image", "inspect", image], { ...process.env, DOCKER_HOST: host }, 10_000).code === 0;
}

function buildImage(host: string, image: string, importer: "docker" | "podman"): string | undefined {
  const r = run("bash", [BUILD_IMAGE, image], { ...process.env, DOCKER_HOST: host, IMPORT_WITH: importer }, 180_000);
  if (r.code !== 0) return `building the test image failed: ${r.out.trim().split("\n").slice(-3).join(" / ")}`;
  if (!imagePresent(host, image)) return `the test image ${image} is still missing after building it`;
  return undefined;
}

let cached: DockerTestEngine | undefined;

/** The engine and image for the tests; computed once per test process. */
export function prepareDockerTestEngine(): DockerTestEngine {
  if (cached) return cached;
  cached = prepare();
  return cached;
}

function prepare(): DockerTestEngine {
  const image = process.env.MIBYAN_TEST_DOCKER_IMAGE || DEFAULT_TEST_IMAGE;
  if (findExecutable("docker") === undefined) return { ok: false, reason: `no docker CLI on PATH; ${HOW_TO_RUN}` };

  const configured = process.env.MIBYAN_TEST_DOCKER_HOST || process.env.DOCKER_HOST;
  if (configured && engineAnswers(configured)) {
    if (!imagePresent(configured, image)) {
      const failed = buildImage(configured, image, "docker");
      if (failed) return { ok: false, reason: `${failed}; ${HOW_TO_RUN}` };
    }
    return { ok: true, host: configured, image, startedHere: false, stop: () => undefined };
  }

  if (findExecutable("podman") === undefined) {
    const why = configured ? `no Docker engine answers at ${configured}` : "no DOCKER_HOST and podman is not installed";
    return { ok: false, reason: `${why}; ${HOW_TO_RUN}` };
  }
  if (process.getuid?.() !== 0) return { ok: false, reason: `podman is installed but the tests start it only as root; ${HOW_TO_RUN}` };
  if (!existsSync(START_PODMAN)) return { ok: false, reason: `${START_PODMAN} is missing` };

  const host = `unix://${TEST_PODMAN_SOCKET}`;
  const started = run("bash", [START_PODMAN, TEST_PODMAN_SOCKET], { ...process.env, PODMAN_SERVICE_TIMEOUT: "120" }, 60_000);
  if (started.code !== 0) return { ok: false, reason: `starting podman failed: ${started.out.trim().split("\n").slice(-3).join(" / ")}` };
  const startedHere = true;
  const stop = () => {
    run("bash", [START_PODMAN, "--stop", TEST_PODMAN_SOCKET], process.env, 30_000);
    run("bash", ["-c", `rm -f "$1.log"`, "bash", TEST_PODMAN_SOCKET], process.env, 5_000);
  };
  if (!imagePresent(host, image)) {
    const failed = buildImage(host, image, "podman");
    if (failed) {
      stop();
      return { ok: false, reason: `${failed}; ${HOW_TO_RUN}` };
    }
  }
  return { ok: true, host, image, startedHere, stop };
}
