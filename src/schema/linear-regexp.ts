/**
 * The regular-expression engine for schema `pattern`s and `patternProperties`.
 * Tool schemas come from MCP servers and plugins, so a pattern is untrusted
 * input: on the built-in backtracking engine `^(a+)+$` takes minutes on a
 * 33-character string, and that call blocks the whole process. RE2JS (the
 * pure-JavaScript port of RE2) matches in time linear in the input, always.
 * It cannot run backreferences or lookaround; such a pattern is refused when
 * the tool registers (see limits.ts), never at call time.
 *
 * re2js rather than the native `re2` binding: both are linear, `re2` matches
 * faster, but it builds with node-gyp (minutes, a C++ toolchain, ~90 MB) where
 * no prebuilt binary can be downloaded; re2js is 1 MB of JavaScript. The
 * figures are in docs/untrusted-input.md.
 */
import { createRequire } from "node:module";

type RE2JSClass = typeof import("re2js").RE2JS;
type CompiledPattern = import("re2js").RE2JS;

/** What Ajv calls a RegExp engine: `(pattern, flags) => { test }`, with `code` for standalone output (unused here). */
export interface RegExpEngine {
  (pattern: string, flags: string): { test(input: string): boolean };
  code: string;
}

let engine: RE2JSClass | undefined;

// Loaded on the first pattern, not at import: most tool schemas have none.
function re2js(): RE2JSClass {
  if (engine === undefined) {
    const require = createRequire(import.meta.url);
    engine = (require("re2js") as { RE2JS: RE2JSClass }).RE2JS;
  }
  return engine;
}

/** Compiled patterns, shared by the registration check and Ajv; cleared when full (tool schemas repeat few patterns). */
const compiled = new Map<string, CompiledPattern>();
const MAX_CACHED = 2_000;

/**
 * Compiles a JSON Schema pattern (ECMA-262 syntax) for linear-time matching.
 * Throws the engine's syntax error for a pattern it cannot express.
 */
export function compileLinearPattern(pattern: string): CompiledPattern {
  let regexp = compiled.get(pattern);
  if (regexp === undefined) {
    const RE2JS = re2js();
    // translateRegExp turns JavaScript spellings (`\u00e9`, `\u{1F600}`, `(?<name>`, `/`) into RE2's.
    regexp = RE2JS.compile(RE2JS.translateRegExp(pattern));
    if (compiled.size >= MAX_CACHED) compiled.clear();
    compiled.set(pattern, regexp);
  }
  return regexp;
}

/**
 * The engine handed to Ajv as `code.regExp`. `test` searches anywhere in the
 * input, as JSON Schema's `pattern` does. Ajv keys its compiled patterns by
 * `toString()`, so each must spell its own pattern (as a RegExp does), or
 * every pattern of a schema would share the first one's matcher.
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string) => {
    const regexp = compileLinearPattern(pattern);
    return { test: (input: string) => regexp.test(input), toString: () => `/${pattern}/${flags}` };
  },
  { code: 'require("re2js").RE2JS' },
);
