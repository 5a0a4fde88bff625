/**
 * The package as a user installs it: `npm pack`, a fresh strict TypeScript project
 * (`skipLibCheck: false`), the public declarations and every code example of README.md and
 * docs/ compiled with TypeScript 5.9 and 7.0, and the examples run with node.
 * See docs/packaging.md.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { COMPILERS, REPO, compilerVersion, createConsumerProject, installedManifest, packDryRun, packPackage, tsc, type Packed } from "./support/consumer-project.js";
import { allExamples, importStatements, type DocExample } from "./support/doc-examples.js";

const execFileAsync = promisify(execFile);

const examples = allExamples(REPO);
const runnable = examples.filter((e) => e.mode === "run");
/**
 * Packages the examples may import besides the package itself; the consumer project installs them.
 * `ai`, `@openai/agents-core` and LangChain's packages for docs/integrations/; ai's declarations import json-schema's
 * types without depending on them.
 */
const EXAMPLE_DEPENDENCIES: Record<string, string> = {
  zod: "4.6.7",
  ai: "6.0.333",
  "@types/json-schema": "7.0.15",
  "@openai/agents-core": "0.20.0",
  "@langchain/core": "1.4.0",
  "@langchain/langgraph": "1.7.3",
  langchain: "1.5.14",
};
const ENTRY_POINTS = ["mibyan-tools", "mibyan-tools/backends", "mibyan-tools/tools"];
/** Subpaths whose framework is an optional peer: importing them needs the framework, so they are checked with it (`tsconfig.ai.json`). */
const ADAPTER_ENTRY_POINTS = ["mibyan-tools/ai-sdk", "mibyan-tools/openai-agents", "mibyan-tools/langchain"];

/**
 * Examples that import a framework (the AI SDK, the OpenAI Agents SDK) go to examples-ai/ and compile with
 * `tsconfig.ai.json`: ai@6's own
 * declarations do not compile under `exactOptionalPropertyTypes` (its `ToolSet` fails its own `Tool`
 * constraint) and name the DOM's `HeadersInit`, so that project turns that flag off and adds the DOM
 * lib; the rest stays strict, skipLibCheck false.
 */
function usesFramework(e: DocExample): boolean {
  return /\bfrom\s*["'](ai|@openai\/agents-core|@langchain\/[a-z-]+|langchain)(\/[^"']*)?["']/.test(e.code);
}
function exampleDir(e: DocExample): string {
  return usesFramework(e) ? "examples-ai" : "examples";
}
/**
 * Consumer files from test/fixtures compiled against the packed declarations too (their imports
 * of ../../../src/index.js rewritten to the package): what they check of the source types must
 * hold for what a user installs.
 */
const CONSUMER_FIXTURES = ["optional-undefined/consumer.ts"];

let tmp: string;
let project: string;
let packed: Packed;
let installedFrom: "offline" | "registry";

/** The file an example is written to in the consumer project (skipped ones: only their imports). */
function exampleSource(e: DocExample): { name: string; text: string } {
  const ext = e.lang === "js" ? "mjs" : "ts";
  if (e.mode === "skip") return { name: `${e.id}.imports.${ext}`, text: `${importStatements(e.code).join("\n")}\nexport {};\n` };
  return { name: `${e.id}.${ext}`, text: `// ${e.file}:${e.line}\n${e.code}\nexport {};\n` };
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), "mibyan-consumer-"));
  packed = packPackage(tmp);
  project = path.join(tmp, "consumer");
  installedFrom = await createConsumerProject(project, packed.tarball, EXAMPLE_DEPENDENCIES);
  // Everything public, from both entry points: loading them makes the compiler check every
  // declaration file they reach (skipLibCheck: false).
  writeFileSync(
    path.join(project, "api.ts"),
    [
      'import * as main from "mibyan-tools";',
      'import * as backends from "mibyan-tools/backends";',
      'import * as tools from "mibyan-tools/tools";',
      "export const entryPoints = [main, backends, tools];",
      "",
    ].join("\n"),
  );
  mkdirSync(path.join(project, "fixtures"));
  for (const fixture of CONSUMER_FIXTURES) {
    const text = readFileSync(path.join(REPO, "test/fixtures", fixture), "utf8").replaceAll('"../../../src/index.js"', '"mibyan-tools"');
    if (!text.includes('from "mibyan-tools"')) throw new Error(`${fixture} does not import the package's source as ../../../src/index.js`);
    writeFileSync(path.join(project, "fixtures", fixture.replaceAll("/", "--")), text);
  }
  mkdirSync(path.join(project, "examples"));
  mkdirSync(path.join(project, "examples-ai"));
  for (const e of examples) {
    const { name, text } = exampleSource(e);
    writeFileSync(path.join(project, exampleDir(e), name), text);
  }
  writeFileSync(path.join(project, "api-ai.ts"), `${ADAPTER_ENTRY_POINTS.map((e, i) => `import * as adapter${i} from "${e}";`).join("\n")}\nexport const adapters = [${ADAPTER_ENTRY_POINTS.map((_, i) => `adapter${i}`).join(", ")}];\n`);
  writeFileSync(
    path.join(project, "tsconfig.ai.json"),
    JSON.stringify({ extends: "./tsconfig.node.json", compilerOptions: { exactOptionalPropertyTypes: false, lib: ["ES2022", "DOM"] }, include: ["api-ai.ts", "examples-ai"] }, null, 2),
  );
}, 300_000);

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
});

describe("the tarball", () => {
  it("holds what a user needs and nothing else", () => {
    const files = packDryRun().files.map((f) => f.path);
    for (const needed of ["package.json", "README.md", "LICENSE", "bin/mibyan.js", "dist/index.js", "dist/index.d.ts", "dist/backends.js", "dist/backends.d.ts", "dist/ai-sdk.js", "dist/ai-sdk.d.ts", "dist/tool-handlers.js", "dist/tool-handlers.d.ts", "dist/cli/main.js", "grammar/tree-sitter-bash.wasm", "grammar/LICENSE-tree-sitter-bash"]) {
      expect(files, needed).toContain(needed);
    }
    // Top level: the manifest, the readme, the license, bin/, dist/ and the bash grammar. In dist/: no maps, no build
    // info, no TypeScript sources but declarations, no tests or benchmarks.
    const unwanted = files.filter(
      (f) =>
        !/^(package\.json|README\.md|LICENSE|bin\/[^/]+|dist\/.+|grammar\/(tree-sitter-bash\.wasm|LICENSE-tree-sitter-bash|VERSION))$/.test(f) ||
        /\.(map|tsbuildinfo)$/.test(f) ||
        (/\.(ts|mts|cts)$/.test(f) && !/\.d\.(ts|mts|cts)$/.test(f)) ||
        /(^|\/)(test|tests|__tests__|bench|fixtures)\//.test(f) ||
        /\.(test|spec|bench)\.[cm]?js$/.test(f),
    );
    expect(unwanted).toEqual([]);
    // The dry run and the real pack agree.
    expect(packed.files.map((f) => f.path).sort()).toEqual([...files].sort());
  });

  it("ships the bash grammar itself: tree-sitter-bash (native sources, a node-gyp install script) is no dependency", () => {
    const manifest = JSON.parse(readFileSync(path.join(project, "node_modules/mibyan-tools/package.json"), "utf8")) as { dependencies?: Record<string, string> };
    expect(Object.keys(manifest.dependencies ?? {})).not.toContain("tree-sitter-bash");
    expect(existsSync(path.join(project, "node_modules/tree-sitter-bash"))).toBe(false);
    const shipped = readFileSync(path.join(project, "node_modules/mibyan-tools/grammar/tree-sitter-bash.wasm"));
    expect(shipped.equals(readFileSync(path.join(REPO, "node_modules/tree-sitter-bash/tree-sitter-bash.wasm")))).toBe(true);
  });

  it("has no source map or map reference that points at a file it does not ship", () => {
    const root = path.join(project, "node_modules/mibyan-tools");
    const shipped = new Set(packed.files.map((f) => f.path));
    const broken: string[] = [];
    for (const file of shipped) {
      if (!/\.(js|d\.ts|map)$/.test(file)) continue;
      const text = readFileSync(path.join(root, file), "utf8");
      for (const m of text.matchAll(/^\/\/# sourceMappingURL=(\S+)\s*$/gm)) {
        const target = path.posix.join(path.posix.dirname(file), m[1]!);
        if (!shipped.has(target)) broken.push(`${file} → ${target}`);
      }
      if (file.endsWith(".map")) {
        const map = JSON.parse(text) as { sources?: string[]; sourceRoot?: string };
        for (const s of map.sources ?? []) {
          const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), map.sourceRoot ?? "", s));
          if (!shipped.has(target)) broken.push(`${file} → ${target}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("declares its metadata, and its license file matches", () => {
    const manifest = installedManifest(project);
    expect(manifest.license).toBe("MIT");
    expect(readFileSync(path.join(project, "node_modules/mibyan-tools/LICENSE"), "utf8")).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} mibyan-tools contributors\n/);
    expect(manifest.repository).toMatchObject({ type: "git", url: expect.stringMatching(/^git\+https:\/\/github\.com\/.+\.git$/) });
    expect(manifest.homepage).toMatch(/^https:\/\//);
    expect(manifest.bugs).toMatchObject({ url: expect.stringMatching(/^https:\/\//) });
    expect((manifest.keywords as string[]).length).toBeGreaterThan(3);
    expect(manifest.engines).toEqual({ node: ">=20" });
  });

  it("ships every file its exports and bin name", () => {
    const manifest = installedManifest(project);
    const targets: string[] = [];
    const collect = (v: unknown): void => {
      if (typeof v === "string") targets.push(v);
      else if (v && typeof v === "object") for (const x of Object.values(v)) collect(x);
    };
    collect(manifest.exports);
    collect(manifest.bin);
    const shipped = new Set(packed.files.map((f) => f.path));
    expect(targets.map((t) => t.replace(/^\.\//, "")).filter((t) => !shipped.has(t))).toEqual([]);
  });

  it("installs from npm's cache, without a registry", () => {
    // "registry" means the offline install failed and the fallback fetched what the cache lacked.
    expect(installedFrom).toBe("offline");
  });

  it("imports from node with only its declared dependencies, every entry point", async () => {
    const script = `for (const e of ${JSON.stringify(ENTRY_POINTS)}) console.log(Object.keys(await import(e)).length);`;
    const { stdout } = await execFileAsync(process.execPath, ["--input-type=module", "-e", script], { cwd: project, timeout: 60_000 });
    const [main, backends, tools] = stdout.trim().split("\n").map(Number);
    // The adapters import their framework, which the consumer installed for the examples.
    const adapters = `for (const e of ${JSON.stringify(ADAPTER_ENTRY_POINTS)}) console.log(Object.keys(await import(e)).length);`;
    const loaded = await execFileAsync(process.execPath, ["--input-type=module", "-e", adapters], { cwd: project, timeout: 60_000 });
    for (const count of loaded.stdout.trim().split("\n").map(Number)) expect(count).toBeGreaterThan(0);
    expect(main).toBeGreaterThan(50);
    expect(backends).toBeGreaterThan(10);
    expect(tools).toBeGreaterThan(5);
    // A deep import is refused: only the documented entry points are public.
    await expect(execFileAsync(process.execPath, ["--input-type=module", "-e", `await import("mibyan-tools/dist/environments/ssh.js")`], { cwd: project })).rejects.toThrow(
      /ERR_PACKAGE_PATH_NOT_EXPORTED/,
    );
  });
});

describe.each(Object.keys(COMPILERS) as (keyof typeof COMPILERS)[])("public types with %s", (compiler) => {
  it("is the compiler it says", () => {
    expect(compilerVersion(compiler)).toMatch(compiler === "ts5.9" ? /^Version 5\.9\./ : /^Version 7\.0\./);
  });

  it("compile with @types/node (types: [\"node\"]), the examples included", async () => {
    const result = await tsc(project, compiler, "tsconfig.node.json", ["--noEmit"]);
    expect(result.output).toBe("");
    expect(result.ok).toBe(true);
  }, 240_000);

  it("compile with the frameworks installed: the adapter subpaths and their examples", async () => {
    const result = await tsc(project, compiler, "tsconfig.ai.json", ["--noEmit"]);
    expect(result.output).toBe("");
    expect(result.ok).toBe(true);
  }, 240_000);

  it("compile without any Node types (lib ES2022 + DOM)", async () => {
    const result = await tsc(project, compiler, "tsconfig.dom.json");
    expect(result.output).toBe("");
    expect(result.ok).toBe(true);
  }, 240_000);
});

describe("the docs' examples", () => {
  it("import only from the package's entry points (or a package the consumer installs)", () => {
    const allowed = new Set([...ENTRY_POINTS, ...ADAPTER_ENTRY_POINTS, ...Object.keys(EXAMPLE_DEPENDENCIES)]);
    const bad: string[] = [];
    for (const e of examples) {
      for (const m of e.code.matchAll(/\bfrom\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
        const spec = m[1] ?? m[2]!;
        // An installed package's own subpaths (ai/test) are that package.
        const pkg = spec.startsWith("mibyan-tools") ? spec : spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!;
        if (!allowed.has(pkg) && !spec.startsWith("node:")) bad.push(`${e.file}:${e.line} imports "${spec}"`);
      }
    }
    expect(bad).toEqual([]);
  });

  it("are there, and most of them run", () => {
    expect(examples.length).toBeGreaterThan(25);
    // Marks are for the few that need a network, a secret or a daemon: keep them rare.
    expect(runnable.length / examples.length).toBeGreaterThan(0.6);
  });

  describe("run with node", () => {
    beforeAll(async () => {
      // Emit once with TypeScript 5.9 (type errors are the compile tests' business; emit anyway).
      await tsc(project, "ts5.9", "tsconfig.node.json", ["--noEmitOnError", "false"]);
      await tsc(project, "ts5.9", "tsconfig.ai.json", ["--noEmitOnError", "false"]);
    }, 240_000);

    it.each(runnable.map((e) => [e.id, e] as const))("%s", async (_id, e) => {
      const js = path.join(project, "out", exampleDir(e), `${e.id}.${e.lang === "js" ? "mjs" : "js"}`);
      expect(existsSync(js), `${js} was not emitted`).toBe(true);
      const home = mkdtempSync(path.join(tmp, "home-"));
      try {
        await execFileAsync(process.execPath, [js], {
          cwd: project,
          timeout: 60_000,
          env: { ...process.env, HOME: home, MIBYAN_HOME: path.join(home, ".mibyan"), NO_COLOR: "1" },
        });
      } catch (error) {
        const err = error as { stdout?: string; stderr?: string; message: string };
        throw new Error(`${e.file}:${e.line} failed:\n${err.stderr || err.message}\n${err.stdout ?? ""}`);
      }
    }, 90_000);
  });
});
