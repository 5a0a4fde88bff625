/**
 * Command safety detection: what a shell command would do, judged on the
 * parsed command (src/shell/) against the rule set (src/approval/rules/).
 * See docs/command-safety.md.
 *
 *   await initShellParser();            // once per process
 *   const d = detect("sudo rm -rf /");  // d.hardline === true
 */
import { initShellParser, withoutShellGrammar } from "../../shell/index.js";
import type { Detection } from "../types.js";
import { analyseTimed, type DetectOptions } from "./engine.js";

export type { DetectOptions } from "./engine.js";
export type { Arg, ParsedArgs } from "./model.js";
export { PROGRAM_OPTIONS, type OptionSpec, type OptionStyle } from "./options.js";
export { canonicalPrefix, parseArgs } from "./parse-args.js";
export { classifyPath, normalisePath, PATH_BITS } from "./paths.js";
export { RULES_BY_ID } from "./rule-index.js";
export { WRAPPERS, type WrapperSpec } from "./wrappers.js";

/**
 * Results of recent commands, least recently used first. Agents check the same command more
 * than once (before asking for approval, after it, on a retry), so `detect` keeps the last
 * results, keyed by the exact command text and the options that change the result. Every hit
 * returns a fresh copy, so callers may change what they get. Results cut short by the time
 * budget are not kept (they depend on the machine's load). `{ cache: false }` bypasses it.
 */
const CACHE_ENTRIES = 256;
/** Longer commands are not kept (they would hold memory for little gain). */
const CACHE_MAX_LENGTH = 16 * 1024;
const cache = new Map<string, Detection>();

/** The cache key: the options that change the result, then the command; null when they cannot be keyed safely. */
function cacheKey(command: string, options: DetectOptions | undefined): string | null {
  const p = options?.parse;
  const values = [options?.maxDepth, options?.maxParses, p?.timeBudgetMs, p?.maxDepth, p?.maxLength];
  let key = "";
  for (const v of values) {
    if (v !== undefined && typeof v !== "number") return null;
    // NUL cannot appear in a number's text.
    key += `${v ?? ""}\0`;
  }
  return key + command;
}

function copyDetection(d: Detection): Detection {
  return { ...d, unanalysable: [...d.unanalysable], matches: d.matches.map((m) => ({ ...m })) };
}

/** Empties the cache of recent results (tests; after changing rules at run time). */
export function clearDetectionCache(): void {
  cache.clear();
}

/**
 * Analyses a shell command. Synchronous; the bash parser must be initialised
 * (`initShellParser()`), otherwise this throws. Never throws on any command text:
 * what cannot be analysed is reported as an `unanalysable` match.
 *
 * Recent results are cached (see `DetectOptions.cache`); `{ cache: false }` always analyses.
 */
export function detect(command: string, options?: DetectOptions): Detection {
  const useCache = options?.cache !== false && command.length <= CACHE_MAX_LENGTH;
  if (!useCache) return analyseTimed(command, options).detection;
  const key = cacheKey(command, options);
  if (key === null) return analyseTimed(command, options).detection;
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    cache.set(key, hit);
    return copyDetection(hit);
  }
  const { detection, timedOut } = analyseTimed(command, options);
  if (!timedOut) {
    if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(key, copyDetection(detection));
  }
  return detection;
}

/**
 * `detect()` without initialising the bash parser first: most commands are in the fast parser's
 * subset, and are judged without loading the grammar (a 1.4 MB wasm module that takes V8 far
 * longer to compile than the analysis takes); the grammar is loaded (`initShellParser()`) only
 * when some text of the command needs it. The verdict is the same either way.
 */
export async function detectAsync(command: string, options?: DetectOptions): Promise<Detection> {
  const quick = withoutShellGrammar(() => detect(command, options));
  if (quick !== undefined) return quick;
  await initShellParser();
  return detect(command, options);
}
