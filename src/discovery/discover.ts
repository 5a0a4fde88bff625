import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { registry } from "../registry/singleton.js";
import { mibyanHome } from "../config/home.js";
import { describeThrown } from "../util/text.js";
import { ScanCache, type FileStamp } from "./scan-cache.js";

export interface DiscoveryOptions {
  /** Folder of tool modules (default: the package's built-in `tools/`). */
  dir?: string;
  /** Scan cache file, or `false` for none (default: `<MIBYAN_HOME>/cache/tool-discovery.json`). */
  cacheFile?: string | false;
}

export interface FailedModule {
  file: string;
  error: string;
  /** Tools the module would have registered, as far as static analysis could tell. */
  tools: { name?: string; toolset?: string }[];
}

export interface DiscoveryReport {
  /** Modules imported because they register tools. */
  imported: string[];
  /** Modules left alone: no top-level `registry.register(...)`. */
  skipped: string[];
  /** Modules that register tools but failed to import or parse (a missing optional dependency, say). */
  failed: FailedModule[];
}

const MODULE_FILE = /\.(m?js|m?ts)$/;
const NOT_A_MODULE = /\.d\.m?ts$|\.(test|spec)\.[mc]?[jt]s$/;

export const BUILTIN_TOOLS_DIR = fileURLToPath(new URL("../tools/", import.meta.url));

let builtinDiscovery: Promise<DiscoveryReport> | undefined;

/** Discovers the built-in tools once per process; later calls share the first report. */
export function discoverBuiltinTools(options: Omit<DiscoveryOptions, "dir"> = {}): Promise<DiscoveryReport> {
  builtinDiscovery ??= discoverTools({ ...options, dir: BUILTIN_TOOLS_DIR });
  return builtinDiscovery;
}

/**
 * Imports every module in `dir` that has a top-level `registry.register(...)`
 * call, found by parsing, in file-name order. Helper modules are never
 * imported; a tool module that fails to import is logged and skipped.
 */
export async function discoverTools(options: DiscoveryOptions = {}): Promise<DiscoveryReport> {
  const dir = path.resolve(options.dir ?? BUILTIN_TOOLS_DIR);
  const cacheFile = options.cacheFile === false ? undefined : (options.cacheFile ?? path.join(mibyanHome(), "cache", "tool-discovery.json"));
  const cache = new ScanCache(cacheFile);
  if (cache.ignored !== undefined) registry.logger.warn(`tool discovery: the scan cache ${cacheFile} is ignored and rebuilt: ${cache.ignored}`);
  const report: DiscoveryReport = { imported: [], skipped: [], failed: [] };

  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => MODULE_FILE.test(name) && !NOT_A_MODULE.test(name)).sort();
  } catch (thrown) {
    registry.logger.error(`tool discovery: cannot read ${dir}: ${describeThrown(thrown)}`);
    return report;
  }
  const present = new Set<string>();
  const previousSource = registry.defaultSource;
  try {
    for (const name of names) {
      const file = path.join(dir, name);
      present.add(file);
      let analysis;
      try {
        const stamp = stampOf(file);
        analysis = cache.get(file, stamp);
        // A cached "registers nothing" is what would hide a tool, so it is believed only of
        // a module that does not even mention `register` (a cheap read instead of a parse).
        if (analysis?.registers === false && readFileSync(file, "utf8").includes("register")) analysis = undefined;
        if (analysis === undefined) {
          // The parser's module loads only on a cache miss: with a warm cache, listing tools never needs it.
          const { analyzeModule } = await import("./static-analysis.js");
          analysis = await analyzeModule(readFileSync(file, "utf8"), file);
          cache.set(file, stamp, analysis);
        }
      } catch (thrown) {
        report.failed.push({ file, error: `could not be parsed: ${describeThrown(thrown)}`, tools: [] });
        registry.logger.error(`tool discovery: ${name} could not be parsed: ${describeThrown(thrown)}`);
        continue;
      }
      if (!analysis.registers) {
        report.skipped.push(file);
        continue;
      }
      try {
        if (dir === path.resolve(BUILTIN_TOOLS_DIR)) registry.defaultSource = { kind: "builtin" };
        await import(pathToFileURL(file).href);
        report.imported.push(file);
      } catch (thrown) {
        report.failed.push({ file, error: describeThrown(thrown), tools: analysis.tools });
        registry.logger.error(`tool discovery: ${name} failed to import and is skipped: ${describeThrown(thrown)}`);
      } finally {
        registry.defaultSource = previousSource;
      }
    }
  } finally {
    cache.retainOnly(dir, present);
    const saveError = cache.save();
    if (saveError !== undefined) registry.logger.debug(`tool discovery: scan cache not saved: ${saveError.message}`);
  }
  return report;
}

function stampOf(file: string): FileStamp {
  const stat = statSync(file, { bigint: true });
  return { size: String(stat.size), mtimeNs: String(stat.mtimeNs), ctimeNs: String(stat.ctimeNs), ino: String(stat.ino) };
}
