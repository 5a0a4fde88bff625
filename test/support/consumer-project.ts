/**
 * A fresh consumer project with the package installed from `npm pack`, as a user gets it:
 * only the packed files, only the declared dependencies, a strict tsconfig with
 * `skipLibCheck: false`. The compilers (TypeScript 5.9 and 7) and @types/node are the
 * repository's own: they are the consumer's tools, not the package's dependencies, and
 * @types/node is linked in only for the configuration that asks for it (`types: ["node"]`),
 * so the other one proves the declarations need no Node types. Both configurations also compile
 * `fixtures/`: consumer files a test writes there (see `CONSUMER_FIXTURES` in package-consumer.test.ts).
 */
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The compilers the consumer project is checked with. */
export const COMPILERS = {
  "ts5.9": path.join(REPO, "node_modules/typescript/bin/tsc"),
  "ts7.0": path.join(REPO, "node_modules/typescript7/bin/tsc"),
} as const;
export type CompilerName = keyof typeof COMPILERS;

export interface PackedFile {
  path: string;
  size: number;
}

export interface Packed {
  tarball: string;
  files: PackedFile[];
}

/**
 * `npm pack` of the repository into `dir`. Without scripts: `prepare` would rebuild dist/ in
 * the shared working tree; the suite (`npm test`) builds before it runs, and a missing or
 * stale build fails here with the way out.
 */
export function packPackage(dir: string): Packed {
  const index = path.join(REPO, "dist/index.js");
  if (!existsSync(index)) throw new Error("dist/ is not built: run `npm run build` first");
  const builtAt = statSync(index).mtimeMs;
  const source = path.join(REPO, "src/index.ts");
  if (statSync(source).mtimeMs > builtAt) throw new Error("dist/ is older than src/index.ts: run `npm run build` first");
  const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], { cwd: REPO, encoding: "utf8" });
  const [info] = JSON.parse(out) as [{ filename: string; files: PackedFile[] }];
  return { tarball: path.join(dir, info.filename), files: info.files };
}

/** What the files in the tarball are, without packing (`npm pack --dry-run --json`). */
export function packDryRun(): { files: PackedFile[]; size: number; unpackedSize: number } {
  const out = execFileSync("npm", ["pack", "--dry-run", "--ignore-scripts", "--json"], { cwd: REPO, encoding: "utf8" });
  return (JSON.parse(out) as [{ files: PackedFile[]; size: number; unpackedSize: number }])[0];
}

const STRICT = {
  target: "ES2022",
  module: "NodeNext",
  moduleResolution: "NodeNext",
  strict: true,
  skipLibCheck: false,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  noImplicitOverride: true,
  verbatimModuleSyntax: true,
  isolatedModules: true,
  forceConsistentCasingInFileNames: true,
};

interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [key: string]: unknown;
}

/**
 * A package-lock for a consumer of `tarball`: the package's dependency closure (and `extra`)
 * copied from the repository's lockfile, at the same versions and integrity. The package pins
 * its dependencies exactly, so these are the versions a registry install picks as well.
 */
export function consumerLockfile(tarball: string, extra: Record<string, string>): Record<string, unknown> {
  const repo = (JSON.parse(readFileSync(path.join(REPO, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> }).packages;
  const manifest = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as Record<string, unknown> & { dependencies: Record<string, string>; version: string };
  const packages: Record<string, unknown> = {};
  // Where node would find `name` from the lock path `from`: its own node_modules, then up.
  const resolve = (from: string, name: string): string | undefined => {
    for (let dir = from; ; ) {
      const candidate = `${dir ? `${dir}/` : ""}node_modules/${name}`;
      if (repo[candidate]) return candidate;
      if (!dir) return undefined;
      const i = dir.lastIndexOf("/node_modules/");
      dir = i < 0 ? "" : dir.slice(0, i);
    }
  };
  const add = (at: string): void => {
    if (packages[at]) return;
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = repo[at]!;
    packages[at] = entry;
    const needed = { ...entry.dependencies, ...entry.optionalDependencies };
    for (const name of Object.keys(entry.peerDependencies ?? {})) if (!entry.peerDependenciesMeta?.[name]?.optional) needed[name] = "*";
    for (const name of Object.keys(needed)) {
      const found = resolve(at, name);
      if (found) add(found);
      else if (!entry.optionalDependencies?.[name]) throw new Error(`${at} needs ${name}, which the repository's lockfile does not have`);
    }
  };
  const optional = (manifest.optionalDependencies ?? {}) as Record<string, string>;
  for (const name of [...Object.keys(manifest.dependencies), ...Object.keys(optional), ...Object.keys(extra)]) {
    if (!repo[`node_modules/${name}`]) throw new Error(`${name} is not in the repository's lockfile`);
    if (extra[name] !== undefined && repo[`node_modules/${name}`]!.version !== extra[name]) throw new Error(`the repository has ${name}@${repo[`node_modules/${name}`]!.version}, not ${extra[name]}`);
    add(`node_modules/${name}`);
  }
  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  const pick = (...keys: string[]) => Object.fromEntries(keys.filter((k) => manifest[k] !== undefined).map((k) => [k, manifest[k]]));
  packages["node_modules/mibyan-tools"] = {
    version: manifest.version,
    resolved: `file:${tarball}`,
    integrity,
    ...pick("license", "dependencies", "optionalDependencies", "bin", "engines", "peerDependencies", "peerDependenciesMeta"),
  };
  const dependencies = { "mibyan-tools": `file:${tarball}`, ...extra };
  packages[""] = { name: "consumer", dependencies };
  const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => a.localeCompare(b)));
  return { name: "consumer", lockfileVersion: 3, requires: true, packages: sorted };
}

/**
 * Creates the project in `dir` and installs the tarball (plus `extra` packages the examples
 * import, such as zod, at the repository's versions). First offline: a lockfile made from the
 * repository's (`consumerLockfile`) lets `npm ci --offline` take every package from the cache
 * `npm ci` filled, in seconds and without a registry. When the cache lacks something, a plain
 * `npm install --prefer-offline` (registry for what is missing). No install scripts either way.
 */
export async function createConsumerProject(dir: string, tarball: string, extra: Record<string, string> = {}): Promise<"offline" | "registry"> {
  mkdirSync(dir, { recursive: true });
  const dependencies = { "mibyan-tools": `file:${tarball}`, ...extra };
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module", dependencies }, null, 2));
  const quiet = ["--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"];
  let installedFrom: "offline" | "registry";
  try {
    writeFileSync(path.join(dir, "package-lock.json"), JSON.stringify(consumerLockfile(tarball, extra), null, 2));
    await run("npm", ["ci", "--offline", ...quiet], { cwd: dir, timeout: 180_000 });
    installedFrom = "offline";
  } catch {
    rmSync(path.join(dir, "node_modules"), { recursive: true, force: true });
    rmSync(path.join(dir, "package-lock.json"), { force: true });
    await run("npm", ["install", "--prefer-offline", "--no-package-lock", ...quiet], { cwd: dir, timeout: 180_000 });
    installedFrom = "registry";
  }
  // Install scripts are off, so better-sqlite3 (an optional dependency, native) is not built here: it gets
  // the repository's own binary, the same version built for this Node, so the session store's examples run.
  const sqlite = path.join(dir, "node_modules/better-sqlite3");
  const binary = path.join(REPO, "node_modules/better-sqlite3/build/Release/better_sqlite3.node");
  if (existsSync(sqlite) && existsSync(binary) && !existsSync(path.join(sqlite, "build/Release/better_sqlite3.node"))) {
    mkdirSync(path.join(sqlite, "build/Release"), { recursive: true });
    copyFileSync(binary, path.join(sqlite, "build/Release/better_sqlite3.node"));
  }
  // @types/node where only tsconfig.node.json looks (typeRoots), never in node_modules/@types.
  mkdirSync(path.join(dir, "node-types"));
  symlinkSync(path.join(REPO, "node_modules/@types/node"), path.join(dir, "node-types/node"), "dir");
  writeFileSync(
    path.join(dir, "tsconfig.node.json"),
    JSON.stringify(
      { compilerOptions: { ...STRICT, lib: ["ES2022"], types: ["node"], typeRoots: ["./node-types"], allowJs: true, outDir: "out" }, include: ["api.ts", "examples", "fixtures"] },
      null,
      2,
    ),
  );
  // A project with no Node types at all: the DOM lib has AbortSignal, URL, TextDecoder, ...
  writeFileSync(
    path.join(dir, "tsconfig.dom.json"),
    JSON.stringify({ compilerOptions: { ...STRICT, lib: ["ES2022", "DOM"], types: [], noEmit: true }, include: ["api.ts", "fixtures"] }, null, 2),
  );
  return installedFrom;
}

export interface TscResult {
  ok: boolean;
  output: string;
}

/** Runs one compiler on one of the project's tsconfigs. */
export async function tsc(dir: string, compiler: CompilerName, config: string, args: string[] = []): Promise<TscResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [COMPILERS[compiler], "-p", config, "--pretty", "false", ...args], { cwd: dir, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: (e.stdout ?? "") + (e.stderr ?? "") || e.message };
  }
}

/** The version a compiler reports (`Version 5.9.3`). */
export function compilerVersion(compiler: CompilerName): string {
  return execFileSync(process.execPath, [COMPILERS[compiler], "--version"], { encoding: "utf8" }).trim();
}

/** The package.json of the installed package. */
export function installedManifest(dir: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(dir, "node_modules/mibyan-tools/package.json"), "utf8")) as Record<string, unknown>;
}
