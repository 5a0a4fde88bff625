/**
 * Installs the fake `apptainer` CLI (test/fixtures/fake-apptainer/) in a
 * private temp directory, as an executable named `apptainer` (or
 * `singularity`) that the backend finds on PATH or is given as its binary,
 * and reads back what it was asked to do.
 *
 *     const fake = installFakeApptainer();
 *     const factory = createSingularityFactory({ image: fake.image, cliEnv: fake.env });
 *     ...
 *     fake.calls();   // every invocation's argv, in order
 *     fake.dispose(); // stops what is left, removes the directory
 */

import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const FAKE_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "fake-apptainer", "fake-apptainer.sh");

export interface FakeCall {
  argv: string[];
  flavor: "apptainer" | "singularity";
  /** The directory the CLI was started in. */
  cwd: string;
  /** The caller's `APPTAINER*`/`SINGULARITY*` variables. */
  env: Record<string, string>;
}

export interface FakeApptainer {
  /** The private directory holding everything below. */
  dir: string;
  /** The directory holding the executable (put first on PATH by `env`). */
  binDir: string;
  /** The executable's path. */
  binary: string;
  /** An existing "image" file (`.sif`) for `image` options. */
  image: string;
  /** `process.env` with `binDir` first on PATH: pass it as the backend's `cliEnv`. */
  env: NodeJS.ProcessEnv;
  /** Every invocation so far, in order. */
  calls(): FakeCall[];
  /** Names of the instances that exist now. */
  instances(): string[];
  /** Stops every instance left (SIGKILL to their processes) and removes the directory. */
  dispose(): void;
}

function shQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** One call's log file: NUL-terminated fields (see fake-apptainer.sh). */
function parseLog(text: string): FakeCall[] {
  const fields = text.split("\0");
  const calls: FakeCall[] = [];
  let i = 0;
  const next = (): string => {
    if (i >= fields.length) throw new Error("the fake apptainer's log ends in the middle of a record");
    return fields[i++]!;
  };
  while (i < fields.length - 1) {
    if (next() !== "CALL") throw new Error("the fake apptainer's log is out of step");
    const flavor = next() as FakeCall["flavor"];
    const cwd = next();
    const env: Record<string, string> = {};
    for (let n = Number(next()); n > 0; n--) {
      const entry = next();
      const eq = entry.indexOf("=");
      env[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    const argv: string[] = [];
    for (let n = Number(next()); n > 0; n--) argv.push(next());
    calls.push({ argv, flavor, cwd, env });
  }
  return calls;
}

export function installFakeApptainer(options: { name?: "apptainer" | "singularity" } = {}): FakeApptainer {
  const name = options.name ?? "apptainer";
  const dir = mkdtempSync(join(tmpdir(), "mibyan-fake-apptainer-"));
  const binDir = join(dir, "bin");
  const stateDir = join(dir, "state");
  const logDir = join(dir, "calls");
  mkdirSync(binDir);
  mkdirSync(stateDir);
  mkdirSync(logDir);
  const binary = join(binDir, name);
  // A wrapper that carries the fake's configuration, whatever environment the caller passes.
  writeFileSync(
    binary,
    [
      "#!/bin/sh",
      `FAKE_APPTAINER_STATE=${shQuote(stateDir)} FAKE_APPTAINER_LOG=${shQuote(logDir)} FAKE_APPTAINER_FLAVOR=${name} \\`,
      `  exec /bin/bash ${shQuote(FAKE_SCRIPT)} "$@"`,
      "",
    ].join("\n"),
  );
  chmodSync(binary, 0o755);
  const image = join(dir, "test.sif");
  writeFileSync(image, "not really a SIF image\n");

  return {
    dir,
    binDir,
    binary,
    image,
    env: { ...process.env, PATH: `${binDir}:${process.env.PATH ?? "/usr/bin:/bin"}` },
    calls: () =>
      readdirSync(logDir)
        .map((file) => ({ file, time: Number(file.slice(0, file.indexOf("-"))) }))
        .sort((a, b) => a.time - b.time || a.file.localeCompare(b.file))
        .flatMap(({ file }) => parseLog(readFileSync(join(logDir, file), "utf8"))),
    instances: () => {
      const dirOf = join(stateDir, "instances");
      return existsSync(dirOf) ? readdirSync(dirOf) : [];
    },
    dispose: () => {
      spawnSync(binary, ["instance", "stop", "--all", "--force"], { stdio: "ignore", timeout: 30_000 });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
